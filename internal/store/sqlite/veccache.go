package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"sync"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// metaVectorVersion counts writes that change vectors; a cached copy of the
// vectors is valid while the count is unchanged, whichever process wrote.
const metaVectorVersion = "vectors.version"

// maxCacheBytes bounds the in-memory copy of the vectors; larger indexes are
// searched by sqlite-vec alone.
const maxCacheBytes = 256 << 20

// vecCache is an in-memory copy of every vector for processes that answer
// many queries (the MCP server, benchmarks): a brute-force scan of a dense
// matrix in Go is an order of magnitude faster than sqlite-vec's, and it is
// exact.
type vecCache struct {
	mu      sync.Mutex
	version string // metaVectorVersion when built; "" before the first build
	dim     int
	ids     []int64
	data    []float32 // len(ids)*dim, each row scaled to unit length
}

// bumpVectorVersion records, inside tx, that vectors changed.
func bumpVectorVersion(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES(?, '1')
		ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1`, metaVectorVersion)
	return err
}

// cachedSearch answers a vector query from the cache, (re)building it when
// vectors changed. ok is false when the cache is off or too large to build.
func (s *Store) cachedSearch(ctx context.Context, q []float32, dim, k int, allow func(int64) bool) (out []store.Scored, ok bool, err error) {
	if !s.cacheVectors {
		return nil, false, nil
	}
	c := &s.vcache
	c.mu.Lock()
	defer c.mu.Unlock()
	version, err := s.Meta(ctx, metaVectorVersion)
	if err != nil {
		return nil, false, err
	}
	if version == "" {
		version = "0"
	}
	if c.version != version || c.dim != dim {
		if err := s.buildCache(ctx, c, dim); err != nil {
			if errors.Is(err, errCacheTooLarge) {
				return nil, false, nil
			}
			return nil, false, err
		}
		c.version = version
	}
	return c.search(q, k, allow), true, nil
}

var errCacheTooLarge = errors.New("vectors too large to cache")

func (s *Store) buildCache(ctx context.Context, c *vecCache, dim int) error {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM chunk_vectors`).Scan(&n); err != nil {
		return err
	}
	if int64(n)*int64(dim)*4 > maxCacheBytes {
		c.ids, c.data, c.version = nil, nil, ""
		return errCacheTooLarge
	}
	rows, err := s.db.QueryContext(ctx, `SELECT rowid, embedding FROM chunk_vectors ORDER BY rowid`)
	if err != nil {
		return err
	}
	defer rows.Close()
	ids := make([]int64, 0, n)
	data := make([]float32, 0, n*dim)
	for rows.Next() {
		var id int64
		var b []byte
		if err := rows.Scan(&id, &b); err != nil {
			return err
		}
		v := decodeVector(b)
		if len(v) != dim {
			continue
		}
		norm := 0.0
		for _, f := range v {
			norm += float64(f) * float64(f)
		}
		if norm == 0 {
			continue
		}
		inv := float32(1 / math.Sqrt(norm))
		for i := range v {
			v[i] *= inv
		}
		ids = append(ids, id)
		data = append(data, v...)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	c.ids, c.data, c.dim = ids, data, dim
	return nil
}

// search returns the k rows most similar to q by cosine similarity, ties
// by lower chunk ID.
func (c *vecCache) search(q []float32, k int, allow func(int64) bool) []store.Scored {
	qn := 0.0
	for _, f := range q {
		qn += float64(f) * float64(f)
	}
	if qn == 0 || k <= 0 {
		return nil
	}
	inv := float32(1 / math.Sqrt(qn))
	unit := make([]float32, len(q))
	for i, f := range q {
		unit[i] = f * inv
	}
	top := store.NewTopK(k)
	dim := c.dim
	for r, id := range c.ids {
		row := c.data[r*dim : (r+1)*dim : (r+1)*dim]
		var s0, s1, s2, s3 float32
		i := 0
		for ; i+4 <= dim; i += 4 {
			s0 += row[i] * unit[i]
			s1 += row[i+1] * unit[i+1]
			s2 += row[i+2] * unit[i+2]
			s3 += row[i+3] * unit[i+3]
		}
		for ; i < dim; i++ {
			s0 += row[i] * unit[i]
		}
		sc := store.Scored{ChunkID: id, Score: float64(s0 + s1 + s2 + s3)}
		if !top.Admits(sc) || (allow != nil && !allow(id)) {
			continue
		}
		top.Offer(sc)
	}
	return top.Best()
}

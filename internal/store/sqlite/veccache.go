package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/vecindex"
)

// metaVectorVersion counts writes that change vectors; a cached copy of the
// vectors is valid while the count is unchanged, whichever process wrote.
const metaVectorVersion = "vectors.version"

// maxCacheBytes bounds the in-memory copy of the vectors; larger indexes are
// searched by sqlite-vec alone.
const maxCacheBytes = 256 << 20

// vecCache is an in-memory copy of every vector for processes that answer
// many queries (the MCP server, benchmarks): an exact scan of a dense
// matrix on all cores (package vecindex) is an order of magnitude faster
// than sqlite-vec's. From Options.ApproxVectors vectors on, an HNSW graph
// is built in the background once per version of the vectors and answers
// instead; until it is ready the exact scan does.
type vecCache struct {
	mu      sync.Mutex
	version string // metaVectorVersion when built; "" before the first build
	dim     int
	flat    *vecindex.Flat
	ann     *vecindex.HNSW // flat's graph, once built
	// building is set while a graph of flat is being built; cancel stops
	// that build, and builds counts running build goroutines.
	building bool
	cancel   context.CancelFunc
	builds   sync.WaitGroup
}

// bumpVectorVersion records, inside tx, that vectors changed.
func bumpVectorVersion(ctx context.Context, tx *sql.Tx) error {
	return bumpCounter(ctx, tx, metaVectorVersion)
}

// bumpCounter adds one, inside tx, to the write counter under key in meta.
func bumpCounter(ctx context.Context, tx *sql.Tx, key string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES(?, '1')
		ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1`, key)
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
	version, err := s.Meta(ctx, metaVectorVersion)
	if err != nil {
		c.mu.Unlock()
		return nil, false, err
	}
	if version == "" {
		version = "0"
	}
	if c.version != version || c.dim != dim || c.flat == nil {
		c.stopBuildLocked()
		c.flat, c.ann, c.version = nil, nil, ""
		flat, err := s.loadVectors(ctx, dim)
		if err != nil {
			c.mu.Unlock()
			if errors.Is(err, errCacheTooLarge) {
				return nil, false, nil
			}
			return nil, false, err
		}
		c.flat, c.dim, c.version = flat, dim, version
	}
	if c.ann == nil && !c.building && s.approxVectors > 0 && c.flat.Len() >= s.approxVectors {
		c.startBuildLocked(c.flat)
	}
	var sr vecindex.Searcher = c.flat
	if c.ann != nil {
		sr = c.ann
	}
	c.mu.Unlock()
	// The matrix and graph never change once built, so many queries may
	// search them at once.
	return sr.Search(q, k, allow), true, nil
}

// graphSettle is how long the vectors must stay unchanged before a graph
// of them is built.
const graphSettle = 2 * time.Second

// startBuildLocked builds flat's graph in the background; c.mu is held.
func (c *vecCache) startBuildLocked(flat *vecindex.Flat) {
	ctx, cancel := context.WithCancel(context.Background())
	c.building, c.cancel = true, cancel
	c.builds.Go(func() {
		defer cancel()
		// While an indexer commits batch after batch, every commit makes
		// the graph stale: wait for the vectors to settle before spending
		// the cores on it (a commit meanwhile cancels this build).
		select {
		case <-ctx.Done():
		case <-time.After(graphSettle):
		}
		start := time.Now()
		g, err := vecindex.BuildHNSW(ctx, flat, vecindex.HNSWOptions{Seed: 1})
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.flat != flat {
			return // the vectors changed meanwhile; a later query starts over
		}
		c.building = false
		if errors.Is(err, context.Canceled) {
			return // the store is closing
		}
		if err != nil {
			slog.Warn("vector graph not built; exact search goes on", "vectors", flat.Len(), "err", err)
			return
		}
		c.ann = g
		slog.Debug("vector graph built", "vectors", flat.Len(), "took", time.Since(start), "graphMB", float64(g.Bytes())/1e6)
	})
}

// stopBuildLocked cancels a running build; c.mu is held.
func (c *vecCache) stopBuildLocked() {
	if c.cancel != nil {
		c.cancel()
		c.cancel = nil
	}
	c.building = false
}

// close stops a running build and waits for it.
func (c *vecCache) close() {
	c.mu.Lock()
	c.stopBuildLocked()
	c.mu.Unlock()
	c.builds.Wait()
}

var errCacheTooLarge = errors.New("vectors too large to cache")

// loadVectors reads every vector of dim dimensions into an exact index
// (zero vectors are left out: they have no direction to compare).
func (s *Store) loadVectors(ctx context.Context, dim int) (*vecindex.Flat, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM chunk_vectors`).Scan(&n); err != nil {
		return nil, err
	}
	if int64(n)*int64(dim)*4 > maxCacheBytes {
		return nil, errCacheTooLarge
	}
	rows, err := s.db.QueryContext(ctx, `SELECT rowid, embedding FROM chunk_vectors ORDER BY rowid`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	flat := vecindex.NewFlat(dim, vecindex.FlatOptions{Capacity: n})
	for rows.Next() {
		var id int64
		var b []byte
		if err := rows.Scan(&id, &b); err != nil {
			return nil, err
		}
		flat.Add(id, decodeVector(b))
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return flat, nil
}

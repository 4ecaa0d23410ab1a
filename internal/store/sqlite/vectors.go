package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/internal/sqlrows"

	_ "modernc.org/sqlite/vec" // registers the sqlite-vec extension (vec0 tables)
)

// metaVectorDim records the dimension of the chunk_vectors table.
const metaVectorDim = "vectors.dim"

// VectorDim implements store.Driver: the dimension of the vector table, 0
// when there is none.
func (s *Store) VectorDim(ctx context.Context) (int, error) { return s.vectorDim(ctx) }

func (s *Store) vectorDim(ctx context.Context) (int, error) {
	v, err := s.Meta(ctx, metaVectorDim)
	if err != nil || v == "" {
		return 0, err
	}
	return strconv.Atoi(v)
}

// InitVectors implements store.Driver: it creates the sqlite-vec table that
// holds one embedding per chunk, with cosine distance.
func (s *Store) InitVectors(ctx context.Context, dim int) error {
	have, err := s.vectorDim(ctx)
	if err != nil {
		return err
	}
	switch {
	case have == dim:
		return nil
	case have != 0:
		return fmt.Errorf("index %q holds %d-dimensional vectors, not %d: re-embed with `sagasu reindex`", s.path, have, dim)
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		q := fmt.Sprintf(`CREATE VIRTUAL TABLE chunk_vectors USING vec0(embedding float[%d] distance_metric=cosine)`, dim)
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("create vector table: %w", err)
		}
		// Stored vectors are found again by the hash of their chunk's
		// context text (VectorsByHash).
		if _, err := tx.ExecContext(ctx, createHashIndex); err != nil {
			return fmt.Errorf("create vector table: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, metaVectorDim, strconv.Itoa(dim)); err != nil {
			return err
		}
		return renewVectorEpoch(ctx, tx)
	})
}

// ClearVectors implements store.Driver.
func (s *Store) ClearVectors(ctx context.Context) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS chunk_vectors`); err != nil {
			return err
		}
		if err := renewVectorEpoch(ctx, tx); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM meta WHERE key = ?`, metaVectorDim)
		return err
	})
	if err == nil {
		// The saved graph is of vectors that are gone (a later process
		// would not use it either: the epoch changed).
		os.Remove(s.graphFile())
	}
	return err
}

// putVector stores one chunk's embedding (the caller bumps the vector
// version once for its transaction); zero vectors (a text with no known
// words) are not stored, since no direction can be compared with them.
func (s *Store) putVector(ctx context.Context, tx *sql.Tx, id int64, v []float32) error {
	if store.IsZeroVector(v) {
		return nil
	}
	var dim int
	var raw string
	if err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, metaVectorDim).Scan(&raw); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return errors.New("the index has no vector table: pin an embedder first")
		}
		return err
	}
	dim, _ = strconv.Atoi(raw)
	if len(v) != dim {
		return fmt.Errorf("vector has %d dimensions, the index holds %d", len(v), dim)
	}
	_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO chunk_vectors(rowid, embedding) VALUES(?, ?)`, id, encodeVector(v))
	return err
}

func (s *Store) deleteVectors(ctx context.Context, tx *sql.Tx, sourceID string) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE name = 'chunk_vectors'`).Scan(&n); err != nil || n == 0 {
		return err
	}
	// Long-lived processes learn from the log which vectors went.
	if err := logGone(ctx, tx, sourceID, s.goneKept); err != nil {
		return err
	}
	// One rowid at a time: vec0 finds a rowid it is given directly, but
	// "rowid IN (...)" scans every vector (a second per source at a
	// million vectors).
	rows, err := tx.QueryContext(ctx, `SELECT id FROM chunks WHERE source_id = ?`, sourceID)
	if err != nil {
		return err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `DELETE FROM chunk_vectors WHERE rowid = ?`, id); err != nil {
			return err
		}
	}
	return bumpVectorVersion(ctx, tx)
}

// maxKNN is the most neighbours sqlite-vec returns from one query.
const maxKNN = 4096

// VectorSearch implements store.Driver. Scores are cosine similarities.
func (s *Store) VectorSearch(ctx context.Context, q []float32, k int, f store.Filter) ([]store.Scored, error) {
	dim := len(q)
	allow, err := s.allowFunc(ctx, f)
	if err != nil {
		return nil, err
	}
	if out, ok, err := s.cachedSearch(ctx, q, dim, k, allow); err != nil || ok {
		return out, err
	}
	// With a filter, ask for more neighbours and filter them; widen until
	// k pass or the table is exhausted.
	want := k
	if allow != nil {
		want = min(maxKNN, max(k*8, 64))
	}
	for {
		rows, err := s.db.QueryContext(ctx, `SELECT rowid, distance FROM chunk_vectors WHERE embedding MATCH ? AND k = ? ORDER BY distance`, encodeVector(q), want)
		if err != nil {
			return nil, fmt.Errorf("vector search: %w", err)
		}
		var out []store.Scored
		seen := 0
		for rows.Next() {
			var id int64
			var dist float64
			if err := rows.Scan(&id, &dist); err != nil {
				rows.Close()
				return nil, err
			}
			seen++
			if allow != nil && !allow(id) {
				continue
			}
			if len(out) < k {
				out = append(out, store.Scored{ChunkID: id, Score: 1 - dist})
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		if len(out) == k || seen < want || want == maxKNN {
			// Equal distances come back in storage order; order them by
			// chunk ID so every store agrees.
			store.SortScored(out)
			return out, nil
		}
		want = min(maxKNN, want*4)
	}
}

// VectorsByHash implements store.Driver.
func (s *Store) VectorsByHash(ctx context.Context, hashes []string) (map[string][]float32, error) {
	out := map[string][]float32{}
	for i := 0; i < len(hashes); i += 500 {
		part := hashes[i:min(i+500, len(hashes))]
		args := make([]any, len(part))
		for j, h := range part {
			args[j] = h
		}
		rows, err := s.db.QueryContext(ctx, `SELECT c.chash, v.embedding FROM chunks c JOIN chunk_vectors v ON v.rowid = c.id
			WHERE c.chash IN (`+placeholders(len(part))+`)`, args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var h string
			var b []byte
			if err := rows.Scan(&h, &b); err != nil {
				rows.Close()
				return nil, err
			}
			out[h] = decodeVector(b)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// VectorsByID implements store.Driver.
func (s *Store) VectorsByID(ctx context.Context, ids []int64) (map[int64][]float32, error) {
	out := map[int64][]float32{}
	dim, err := s.vectorDim(ctx)
	if err != nil || dim == 0 || len(ids) == 0 {
		return out, err
	}
	// One rowid at a time, as deleteVectors does: "rowid IN (...)" makes
	// vec0 scan every vector.
	st, err := s.db.PrepareContext(ctx, `SELECT embedding FROM chunk_vectors WHERE rowid = ?`)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	for _, id := range ids {
		var b []byte
		err := st.QueryRowContext(ctx, id).Scan(&b)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[id] = decodeVector(b)
	}
	return out, nil
}

// EachChunk implements store.Driver.
func (s *Store) EachChunk(ctx context.Context, fn func(c doc.Chunk, title string) error) error {
	var after int64
	for {
		rows, err := s.db.QueryContext(ctx, `SELECT `+chunkColumns+`, `+spanColumn+`, s.title FROM chunks c JOIN sources s ON s.id = c.source_id
			WHERE c.id > ? ORDER BY c.id LIMIT 1000`, after)
		if err != nil {
			return err
		}
		type item struct {
			c     doc.Chunk
			title string
		}
		var page []item
		var spans []int
		for rows.Next() {
			var title string
			var span bool
			c, err := sqlrows.ScanChunk(rows, &span, &title)
			if err != nil {
				rows.Close()
				return err
			}
			if span {
				spans = append(spans, len(page))
			}
			page = append(page, item{c, title})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(page) == 0 {
			return nil
		}
		fill := make([]*doc.Chunk, len(spans))
		for i, j := range spans {
			fill[i] = &page[j].c
		}
		if err := s.fillSpans(ctx, s.db, fill); err != nil {
			return fmt.Errorf("read chunks: %w", err)
		}
		for _, it := range page {
			if err := fn(it.c, it.title); err != nil {
				return err
			}
		}
		after = page[len(page)-1].c.ID
	}
}

// SetVectors implements store.Driver. It may replace vectors in place, which
// long-lived processes cannot follow row by row: they load the vectors
// again (the epoch changes).
func (s *Store) SetVectors(ctx context.Context, vecs map[int64][]float32) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		for id, v := range vecs {
			// vec0 has no INSERT OR REPLACE: a vector the chunk has goes first.
			if _, err := tx.ExecContext(ctx, `DELETE FROM chunk_vectors WHERE rowid = ?`, id); err != nil {
				return fmt.Errorf("chunk %d: %w", id, err)
			}
			if err := s.putVector(ctx, tx, id, v); err != nil {
				return fmt.Errorf("chunk %d: %w", id, err)
			}
		}
		return renewVectorEpoch(ctx, tx)
	})
}

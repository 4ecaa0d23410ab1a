package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"os"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// Meta implements store.Driver.
func (s *Store) Meta(ctx context.Context, key string) (string, error) {
	var v string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

// SetMeta implements store.Driver.
func (s *Store) SetMeta(ctx context.Context, key, value string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, value)
		return err
	})
}

// Stats implements store.Driver.
func (s *Store) Stats(ctx context.Context) (store.Stats, error) {
	var st store.Stats
	err := s.db.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM sources),
		(SELECT COALESCE(SUM(size),0) FROM sources),
		(SELECT COALESCE(SUM(docs),0) FROM segments),
		(SELECT COUNT(DISTINCT term) FROM postings)
		`).Scan(&st.Sources, &st.Bytes, &st.Chunks, &st.Terms)
	if err != nil {
		return st, err
	}
	if dim, err := s.vectorDim(ctx); err == nil && dim > 0 {
		if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM chunk_vectors`).Scan(&st.Vectors); err != nil {
			return st, err
		}
	}
	for _, p := range []string{s.path, s.path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			st.SizeBytes += fi.Size()
		}
	}
	return st, nil
}

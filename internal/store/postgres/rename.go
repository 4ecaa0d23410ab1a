package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// RenameSource implements store.Driver. Chunk IDs do not change, so the
// postings and segments, keyed by them, are untouched; the vector table
// carries each chunk's source ID and follows.
func (s *Store) RenameSource(ctx context.Context, id, uri string) (doc.Source, error) {
	newID := doc.SourceID(uri)
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var old string
		err := tx.QueryRow(ctx, `SELECT uri FROM sources WHERE id = $1`, id).Scan(&old)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("rename source %q: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		var taken bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS(SELECT 1 FROM sources WHERE (uri = $1 OR id = $2) AND id <> $3)`, uri, newID, id).Scan(&taken); err != nil {
			return err
		}
		if taken {
			return fmt.Errorf("rename source %q to %q: %w", old, uri, store.ErrExists)
		}
		if _, err := tx.Exec(ctx, `UPDATE sources SET id = $1, uri = $2 WHERE id = $3`, newID, uri, id); err != nil {
			return fmt.Errorf("rename source %q to %q: %w", old, uri, err)
		}
		tables := []string{"contents", "chunks"}
		dim, err := vectorDimTx(ctx, tx)
		if err != nil {
			return err
		}
		if dim > 0 {
			tables = append(tables, "chunk_vectors")
		}
		for _, table := range tables {
			if _, err := tx.Exec(ctx, `UPDATE `+table+` SET source_id = $1 WHERE source_id = $2`, newID, id); err != nil {
				return fmt.Errorf("rename source %q to %q: %w", old, uri, err)
			}
		}
		return nil
	})
	if err != nil {
		return doc.Source{}, err
	}
	return s.Source(ctx, newID)
}

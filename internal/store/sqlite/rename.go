package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// RenameSource implements store.Driver. Chunk IDs do not change, so the
// postings and chunk_vectors rows, which are keyed by them, are untouched.
func (s *Store) RenameSource(ctx context.Context, id, uri string) (doc.Source, error) {
	newID := doc.SourceID(uri)
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var old string
		err := tx.QueryRowContext(ctx, `SELECT uri FROM sources WHERE id = ?`, id).Scan(&old)
		if err == sql.ErrNoRows {
			return fmt.Errorf("rename source %q: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		var taken int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sources WHERE (uri = ? OR id = ?) AND id <> ?`, uri, newID, id).Scan(&taken); err != nil {
			return err
		}
		if taken > 0 {
			return fmt.Errorf("rename source %q to %q: %w", old, uri, store.ErrExists)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE sources SET id = ?, uri = ? WHERE id = ?`, newID, uri, id); err != nil {
			return fmt.Errorf("rename source %q to %q: %w", old, uri, err)
		}
		for _, table := range []string{"content_blocks", "chunks"} {
			if _, err := tx.ExecContext(ctx, `UPDATE `+table+` SET source_id = ? WHERE source_id = ?`, newID, id); err != nil {
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

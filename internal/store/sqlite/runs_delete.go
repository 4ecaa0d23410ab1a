package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// DropRun implements store.RunDropper: the header goes first, on the
// condition that the run is not running unless forced, then its events,
// in one transaction.
func (s *Store) DropRun(ctx context.Context, id string, force bool) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE id = ? AND (? OR status <> ?)`, id, force, store.RunRunning)
		if err != nil {
			return fmt.Errorf("delete run %q: %w", id, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("delete run %q: %w", id, err)
		} else if n == 0 {
			var status string
			if err := tx.QueryRowContext(ctx, `SELECT status FROM runs WHERE id = ?`, id).Scan(&status); err == sql.ErrNoRows {
				return fmt.Errorf("delete run %q: %w", id, store.ErrNotFound)
			} else if err != nil {
				return fmt.Errorf("delete run %q: %w", id, err)
			}
			return store.RunningError(id)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM run_events WHERE run_id = ?`, id); err != nil {
			return fmt.Errorf("delete run %q: %w", id, err)
		}
		return nil
	})
}

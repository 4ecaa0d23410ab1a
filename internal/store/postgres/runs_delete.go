package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// DropRun implements store.RunDropper: the header goes first, on the
// condition that the run is not running unless forced (which takes its
// row lock, so an appender waits and then finds no run), then its events,
// in one transaction.
func (s *Store) DropRun(ctx context.Context, id string, force bool) error {
	var refused error
	err := s.runTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM runs WHERE id = $1 AND ($2 OR status <> $3)`, id, force, store.RunRunning)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			var status string
			err := tx.QueryRow(ctx, `SELECT status FROM runs WHERE id = $1`, id).Scan(&status)
			if errors.Is(err, pgx.ErrNoRows) {
				refused = fmt.Errorf("delete run %q: %w", id, store.ErrNotFound)
				return refused
			}
			if err != nil {
				return err
			}
			refused = store.RunningError(id)
			return refused
		}
		_, err = tx.Exec(ctx, `DELETE FROM run_events WHERE run_id = $1`, id)
		return err
	})
	if refused != nil {
		return refused
	}
	if err != nil {
		return fmt.Errorf("delete run %q: %w", id, err)
	}
	return nil
}

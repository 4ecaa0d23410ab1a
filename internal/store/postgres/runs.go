package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/internal/sqlrows"
)

// The run log does not take the index's write lock: a chat must not wait
// for an indexing batch. Appenders to one run queue on its row lock.

// runTx runs fn in a transaction of its own.
func (s *Store) runTx(ctx context.Context, fn func(pgx.Tx) error) error {
	return s.do(ctx, func(c *pgx.Conn) error { return pgx.BeginFunc(ctx, c, fn) })
}

// CreateRun implements store.Runs.
func (s *Store) CreateRun(ctx context.Context, r store.Run) error {
	r, err := store.NewRun(r)
	if err != nil {
		return err
	}
	var inserted bool
	err = s.runTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO runs(`+sqlrows.RunColumns+`) VALUES($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING`,
			r.ID, r.Kind, r.Title, r.Status, r.Created.UnixMicro(), r.Updated.UnixMicro(), store.RawJSON(r.Meta))
		inserted = tag.RowsAffected() == 1
		return err
	})
	if err != nil {
		return fmt.Errorf("create run %q: %w", r.ID, err)
	}
	if !inserted {
		return fmt.Errorf("create run %q: %w", r.ID, store.ErrExists)
	}
	return nil
}

// UpdateRun implements store.Runs.
func (s *Store) UpdateRun(ctx context.Context, id string, u store.RunUpdate) error {
	if err := store.CheckRunUpdate(id, u); err != nil {
		return err
	}
	var n int64
	err := s.runTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE runs SET
			status = CASE WHEN $1 = '' THEN status ELSE $1 END,
			title = CASE WHEN $2 = '' THEN title ELSE $2 END,
			meta = CASE WHEN $3 = '' THEN meta ELSE $3 END,
			updated = $4 WHERE id = $5`,
			u.Status, u.Title, store.RawJSON(u.Meta), store.StoredTime(time.Time{}).UnixMicro(), id)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return fmt.Errorf("update run %q: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("update run %q: %w", id, store.ErrNotFound)
	}
	return nil
}

// Run implements store.Runs.
func (s *Store) Run(ctx context.Context, id string) (store.Run, error) {
	r, err := sqlrows.ScanRun(s.row(ctx, `SELECT `+sqlrows.RunColumns+` FROM runs WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Run{}, fmt.Errorf("run %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Run{}, fmt.Errorf("run %q: %w", id, err)
	}
	return r, nil
}

// ListRuns implements store.Runs.
func (s *Store) ListRuns(ctx context.Context, f store.RunFilter) ([]store.Run, error) {
	q := `SELECT ` + sqlrows.RunColumns + ` FROM runs`
	var args []any
	if f.Kind != "" {
		args = append(args, f.Kind)
		q += ` WHERE kind = $1`
	}
	q += ` ORDER BY updated DESC, id COLLATE "C"`
	if f.Limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, f.Limit)
	}
	var out []store.Run
	err := s.each(ctx, func(r pgx.Rows) error {
		run, err := sqlrows.ScanRun(r)
		out = append(out, run)
		return err
	}, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}

// AppendEvents implements store.Runs. Raising the run's last_seq locks its
// row until the commit, so concurrent appenders get consecutive ranges.
func (s *Store) AppendEvents(ctx context.Context, runID string, events []store.Event) ([]store.Event, error) {
	out, err := store.NewEvents(runID, 0, events)
	if err != nil {
		return nil, err
	}
	if len(events) == 0 {
		_, err := s.Run(ctx, runID)
		return nil, err
	}
	err = s.runTx(ctx, func(tx pgx.Tx) error {
		var last int64
		err := tx.QueryRow(ctx, `UPDATE runs SET last_seq = last_seq + $1, updated = GREATEST(updated, $2) WHERE id = $3 RETURNING last_seq`,
			len(out), store.Latest(out).UnixMicro(), runID).Scan(&last)
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		for i := range out {
			out[i].Seq += last - int64(len(out))
		}
		_, err = tx.CopyFrom(ctx, pgx.Identifier{"run_events"}, []string{"run_id", "seq", "time", "type", "data"},
			pgx.CopyFromSlice(len(out), func(i int) ([]any, error) {
				e := out[i]
				return []any{e.RunID, e.Seq, e.Time.UnixMicro(), e.Type, store.RawJSON(e.Data)}, nil
			}))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("append to run %q: %w", runID, err)
	}
	return out, nil
}

// Events implements store.Runs.
func (s *Store) Events(ctx context.Context, runID string, afterSeq int64) ([]store.Event, error) {
	if _, err := s.Run(ctx, runID); err != nil {
		return nil, err
	}
	var out []store.Event
	err := s.each(ctx, func(r pgx.Rows) error {
		e, err := sqlrows.ScanEvent(r, runID)
		out = append(out, e)
		return err
	}, `SELECT `+sqlrows.EventColumns+` FROM run_events WHERE run_id = $1 AND seq > $2 ORDER BY seq`, runID, afterSeq)
	if err != nil {
		return nil, fmt.Errorf("events of run %q: %w", runID, err)
	}
	return out, nil
}

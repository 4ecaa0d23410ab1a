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

// InsertRun implements store.RunLog.
func (s *Store) InsertRun(ctx context.Context, r store.Run) error {
	var inserted bool
	err := s.runTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO runs(`+sqlrows.RunColumns+`) VALUES($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING`,
			r.ID, r.Kind, r.Title, r.Status, r.Created.UnixMicro(), r.Updated.UnixMicro(), string(r.Meta))
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

// UpdateRun implements store.RunLog.
func (s *Store) UpdateRun(ctx context.Context, id string, u store.RunUpdate, at time.Time) error {
	var n int64
	err := s.runTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE runs SET
			status = CASE WHEN $1 = '' THEN status ELSE $1 END,
			title = CASE WHEN $2 = '' THEN title ELSE $2 END,
			meta = CASE WHEN $3 = '' THEN meta ELSE $3 END,
			updated = $4 WHERE id = $5`,
			u.Status, u.Title, string(u.Meta), at.UnixMicro(), id)
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

// Run implements store.RunLog.
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

// RunsOfKind implements store.RunLog.
func (s *Store) RunsOfKind(ctx context.Context, kind string) ([]store.Run, error) {
	var out []store.Run
	err := s.each(ctx, func(r pgx.Rows) error {
		run, err := sqlrows.ScanRun(r)
		out = append(out, run)
		return err
	}, `SELECT `+sqlrows.RunColumns+` FROM runs WHERE $1 = '' OR kind = $1`, kind)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}

// AppendEvents implements store.RunLog. Raising the run's last_seq locks
// its row until the commit, so concurrent appenders get consecutive ranges.
func (s *Store) AppendEvents(ctx context.Context, runID string, events []store.Event, latest time.Time) (int64, error) {
	return s.appendEvents(ctx, runID, events, latest, "")
}

// appendEvents appends when the run matches the extra condition cond (""
// for none) on $4, $5, ... (args); a run that exists but does not match is
// store.ErrLeaseLost.
func (s *Store) appendEvents(ctx context.Context, runID string, events []store.Event, latest time.Time, cond string, args ...any) (int64, error) {
	var last int64
	err := s.runTx(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `UPDATE runs SET last_seq = last_seq + $1, updated = GREATEST(updated, $2) WHERE id = $3`+cond+` RETURNING last_seq`,
			append([]any{len(events), latest.UnixMicro(), runID}, args...)...).Scan(&last)
		if errors.Is(err, pgx.ErrNoRows) {
			var n int
			if cond != "" && tx.QueryRow(ctx, `SELECT count(*) FROM runs WHERE id = $1`, runID).Scan(&n) == nil && n > 0 {
				return store.ErrLeaseLost
			}
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		last -= int64(len(events))
		_, err = tx.CopyFrom(ctx, pgx.Identifier{"run_events"}, []string{"run_id", "seq", "time", "type", "data"},
			pgx.CopyFromSlice(len(events), func(i int) ([]any, error) {
				e := events[i]
				return []any{runID, last + e.Seq, e.Time.UnixMicro(), e.Type, string(e.Data)}, nil
			}))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("append to run %q: %w", runID, err)
	}
	return last, nil
}

// Events implements store.RunLog.
func (s *Store) Events(ctx context.Context, runID string, afterSeq int64) ([]store.Event, error) {
	var out []store.Event
	err := s.each(ctx, func(r pgx.Rows) error {
		e, err := sqlrows.ScanEvent(r, runID)
		out = append(out, e)
		return err
	}, `SELECT `+sqlrows.EventColumns+` FROM run_events WHERE run_id = $1 AND seq > $2`, runID, afterSeq)
	if err != nil {
		return nil, fmt.Errorf("events of run %q: %w", runID, err)
	}
	return out, nil
}

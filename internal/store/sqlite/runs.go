package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/internal/sqlrows"
)

// InsertRun implements store.RunLog.
func (s *Store) InsertRun(ctx context.Context, r store.Run) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM runs WHERE id = ?`, r.ID).Scan(&n); err != nil {
			return fmt.Errorf("create run %q: %w", r.ID, err)
		}
		if n > 0 {
			return fmt.Errorf("create run %q: %w", r.ID, store.ErrExists)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO runs(`+sqlrows.RunColumns+`) VALUES(?,?,?,?,?,?,?)`,
			r.ID, r.Kind, r.Title, r.Status, r.Created.UnixMicro(), r.Updated.UnixMicro(), string(r.Meta))
		if err != nil {
			return fmt.Errorf("create run %q: %w", r.ID, err)
		}
		return nil
	})
}

// UpdateRun implements store.RunLog.
func (s *Store) UpdateRun(ctx context.Context, id string, u store.RunUpdate, at time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET
			status = CASE WHEN ?1 = '' THEN status ELSE ?1 END,
			title = CASE WHEN ?2 = '' THEN title ELSE ?2 END,
			meta = CASE WHEN ?3 = '' THEN meta ELSE ?3 END,
			updated = ?4 WHERE id = ?5`,
			u.Status, u.Title, string(u.Meta), at.UnixMicro(), id)
		if err != nil {
			return fmt.Errorf("update run %q: %w", id, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("update run %q: %w", id, err)
		}
		if n == 0 {
			return fmt.Errorf("update run %q: %w", id, store.ErrNotFound)
		}
		return nil
	})
}

// Run implements store.RunLog.
func (s *Store) Run(ctx context.Context, id string) (store.Run, error) {
	r, err := sqlrows.ScanRun(s.db.QueryRowContext(ctx, `SELECT `+sqlrows.RunColumns+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Run{}, fmt.Errorf("run %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Run{}, fmt.Errorf("run %q: %w", id, err)
	}
	return r, nil
}

// RunsOfKind implements store.RunLog.
func (s *Store) RunsOfKind(ctx context.Context, kind string) ([]store.Run, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+sqlrows.RunColumns+` FROM runs WHERE ?1 = '' OR kind = ?1`, kind)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []store.Run
	for rows.Next() {
		r, err := sqlrows.ScanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// AppendEvents implements store.RunLog. Raising the run's last_seq first
// takes the write lock, so concurrent appenders get consecutive ranges.
func (s *Store) AppendEvents(ctx context.Context, runID string, events []store.Event, latest time.Time) (int64, error) {
	return s.appendEvents(ctx, runID, events, latest, "")
}

// appendEvents appends when the run matches the extra condition cond (""
// for none) with its arguments; a run that exists but does not match is
// store.ErrLeaseLost.
func (s *Store) appendEvents(ctx context.Context, runID string, events []store.Event, latest time.Time, cond string, args ...any) (int64, error) {
	var last int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `UPDATE runs SET last_seq = last_seq + ?, updated = MAX(updated, ?) WHERE id = ?`+cond+` RETURNING last_seq`,
			append([]any{len(events), latest.UnixMicro(), runID}, args...)...).Scan(&last)
		if errors.Is(err, sql.ErrNoRows) {
			var n int
			if cond != "" && tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM runs WHERE id = ?`, runID).Scan(&n) == nil && n > 0 {
				return fmt.Errorf("append to run %q: %w", runID, store.ErrLeaseLost)
			}
			return fmt.Errorf("append to run %q: %w", runID, store.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("append to run %q: %w", runID, err)
		}
		last -= int64(len(events))
		ins := newInserter(ctx, tx, `INSERT INTO run_events(run_id, seq, time, type, data)`, 5)
		for _, e := range events {
			if err := ins.add(runID, last+e.Seq, e.Time.UnixMicro(), e.Type, string(e.Data)); err != nil {
				return fmt.Errorf("append to run %q: %w", runID, err)
			}
		}
		if err := ins.flush(); err != nil {
			return fmt.Errorf("append to run %q: %w", runID, err)
		}
		return nil
	})
	return last, err
}

// Events implements store.RunLog.
func (s *Store) Events(ctx context.Context, runID string, afterSeq int64) ([]store.Event, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+sqlrows.EventColumns+` FROM run_events WHERE run_id = ? AND seq > ?`, runID, afterSeq)
	if err != nil {
		return nil, fmt.Errorf("events of run %q: %w", runID, err)
	}
	defer rows.Close()
	var out []store.Event
	for rows.Next() {
		e, err := sqlrows.ScanEvent(rows, runID)
		if err != nil {
			return nil, fmt.Errorf("events of run %q: %w", runID, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

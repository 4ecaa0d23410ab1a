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

// CreateRun implements store.Runs.
func (s *Store) CreateRun(ctx context.Context, r store.Run) error {
	r, err := store.NewRun(r)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM runs WHERE id = ?`, r.ID).Scan(&n); err != nil {
			return fmt.Errorf("create run %q: %w", r.ID, err)
		}
		if n > 0 {
			return fmt.Errorf("create run %q: %w", r.ID, store.ErrExists)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO runs(`+sqlrows.RunColumns+`) VALUES(?,?,?,?,?,?,?)`,
			r.ID, r.Kind, r.Title, r.Status, r.Created.UnixMicro(), r.Updated.UnixMicro(), store.RawJSON(r.Meta))
		if err != nil {
			return fmt.Errorf("create run %q: %w", r.ID, err)
		}
		return nil
	})
}

// UpdateRun implements store.Runs.
func (s *Store) UpdateRun(ctx context.Context, id string, u store.RunUpdate) error {
	if err := store.CheckRunUpdate(id, u); err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET
			status = CASE WHEN ? = '' THEN status ELSE ? END,
			title = CASE WHEN ? = '' THEN title ELSE ? END,
			meta = CASE WHEN ? = '' THEN meta ELSE ? END,
			updated = ? WHERE id = ?`,
			u.Status, u.Status, u.Title, u.Title, store.RawJSON(u.Meta), store.RawJSON(u.Meta),
			store.StoredTime(time.Time{}).UnixMicro(), id)
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

// Run implements store.Runs.
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

// ListRuns implements store.Runs.
func (s *Store) ListRuns(ctx context.Context, f store.RunFilter) ([]store.Run, error) {
	q := `SELECT ` + sqlrows.RunColumns + ` FROM runs`
	var args []any
	if f.Kind != "" {
		q += ` WHERE kind = ?`
		args = append(args, f.Kind)
	}
	q += ` ORDER BY updated DESC, id`
	if f.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
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

// AppendEvents implements store.Runs. Raising the run's last_seq first
// takes the write lock, so concurrent appenders get consecutive ranges.
func (s *Store) AppendEvents(ctx context.Context, runID string, events []store.Event) ([]store.Event, error) {
	out, err := store.NewEvents(runID, 0, events)
	if err != nil {
		return nil, err
	}
	if len(events) == 0 {
		_, err := s.Run(ctx, runID)
		return nil, err
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		var last int64
		err := tx.QueryRowContext(ctx, `UPDATE runs SET last_seq = last_seq + ?, updated = MAX(updated, ?) WHERE id = ? RETURNING last_seq`,
			len(out), store.Latest(out).UnixMicro(), runID).Scan(&last)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("append to run %q: %w", runID, store.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("append to run %q: %w", runID, err)
		}
		for i := range out {
			out[i].Seq += last - int64(len(out))
		}
		ins := newInserter(ctx, tx, `INSERT INTO run_events(run_id, seq, time, type, data)`, 5)
		for _, e := range out {
			if err := ins.add(e.RunID, e.Seq, e.Time.UnixMicro(), e.Type, store.RawJSON(e.Data)); err != nil {
				return fmt.Errorf("append to run %q: %w", runID, err)
			}
		}
		if err := ins.flush(); err != nil {
			return fmt.Errorf("append to run %q: %w", runID, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Events implements store.Runs.
func (s *Store) Events(ctx context.Context, runID string, afterSeq int64) ([]store.Event, error) {
	if _, err := s.Run(ctx, runID); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+sqlrows.EventColumns+` FROM run_events WHERE run_id = ? AND seq > ? ORDER BY seq`, runID, afterSeq)
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

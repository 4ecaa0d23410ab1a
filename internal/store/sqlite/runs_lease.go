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

// ClaimRun implements store.LeaseLog: one conditional UPDATE, then the
// lease as it is, in one write transaction.
func (s *Store) ClaimRun(ctx context.Context, id string, o store.Owner, until, now time.Time, takeFrom string) (store.Lease, error) {
	var l store.Lease
	err := s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE runs SET owner = ?1, owner_token = ?2, lease_until = ?3
			WHERE id = ?4 AND (owner_token = '' OR owner_token = ?2 OR lease_until <= ?5 OR (?6 <> '' AND owner_token = ?6))`,
			sqlrows.OwnerJSON(o), o.Token, until.UnixMicro(), id, now.UnixMicro(), takeFrom)
		if err != nil {
			return err
		}
		l, err = sqlrows.ScanLease(tx.QueryRowContext(ctx, `SELECT `+sqlrows.LeaseColumns+` FROM runs WHERE id = ?`, id))
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		return l, fmt.Errorf("claim run %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return l, fmt.Errorf("claim run %q: %w", id, err)
	}
	return l, nil
}

// ReleaseRun implements store.LeaseLog.
func (s *Store) ReleaseRun(ctx context.Context, id, token string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM runs WHERE id = ?`, id).Scan(&n); err != nil {
			return fmt.Errorf("release run %q: %w", id, err)
		}
		if n == 0 {
			return fmt.Errorf("release run %q: %w", id, store.ErrNotFound)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET owner = '', owner_token = '', lease_until = 0 WHERE id = ? AND owner_token = ?`, id, token); err != nil {
			return fmt.Errorf("release run %q: %w", id, err)
		}
		return nil
	})
}

// RunLease implements store.LeaseLog.
func (s *Store) RunLease(ctx context.Context, id string) (store.Lease, error) {
	l, err := sqlrows.ScanLease(s.db.QueryRowContext(ctx, `SELECT `+sqlrows.LeaseColumns+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return l, fmt.Errorf("run %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return l, fmt.Errorf("run %q: %w", id, err)
	}
	return l, nil
}

// AppendEventsAs implements store.LeaseLog: the append's UPDATE of
// last_seq is conditional on the token, so a driver that lost its lease
// reserves no numbers and writes nothing.
func (s *Store) AppendEventsAs(ctx context.Context, runID, token string, events []store.Event, latest time.Time) (int64, error) {
	return s.appendEvents(ctx, runID, events, latest, ` AND owner_token = ?`, token)
}

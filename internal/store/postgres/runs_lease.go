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

// ClaimRun implements store.LeaseLog: one conditional UPDATE (which locks
// the run's row, so concurrent claims take turns and the second sees the
// first's owner), then the lease as it is, in one transaction.
func (s *Store) ClaimRun(ctx context.Context, id string, o store.Owner, until, now time.Time, takeFrom string) (store.Lease, error) {
	var l store.Lease
	err := s.runTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE runs SET owner = $1, owner_token = $2, lease_until = $3
			WHERE id = $4 AND (owner_token = '' OR owner_token = $2 OR lease_until <= $5 OR ($6 <> '' AND owner_token = $6))`,
			sqlrows.OwnerJSON(o), o.Token, until.UnixMicro(), id, now.UnixMicro(), takeFrom)
		if err != nil {
			return err
		}
		l, err = sqlrows.ScanLease(tx.QueryRow(ctx, `SELECT `+sqlrows.LeaseColumns+` FROM runs WHERE id = $1`, id))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return l, fmt.Errorf("claim run %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return l, fmt.Errorf("claim run %q: %w", id, err)
	}
	return l, nil
}

// ReleaseRun implements store.LeaseLog.
func (s *Store) ReleaseRun(ctx context.Context, id, token string) error {
	var exists bool
	err := s.runTx(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT EXISTS(SELECT 1 FROM runs WHERE id = $1)`, id).Scan(&exists); err != nil || !exists {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE runs SET owner = '', owner_token = '', lease_until = 0 WHERE id = $1 AND owner_token = $2`, id, token)
		return err
	})
	if err != nil {
		return fmt.Errorf("release run %q: %w", id, err)
	}
	if !exists {
		return fmt.Errorf("release run %q: %w", id, store.ErrNotFound)
	}
	return nil
}

// RunLease implements store.LeaseLog.
func (s *Store) RunLease(ctx context.Context, id string) (store.Lease, error) {
	l, err := sqlrows.ScanLease(s.row(ctx, `SELECT `+sqlrows.LeaseColumns+` FROM runs WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
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
	return s.appendEvents(ctx, runID, events, latest, ` AND owner_token = $4`, token)
}

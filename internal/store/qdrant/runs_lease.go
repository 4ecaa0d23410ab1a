package qdrant

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// Qdrant has no conditional update: a run's lease is kept in its point's
// payload (owner, owner_token, lease_until), read and written under wmu.
// Claims and appends are therefore atomic among the drivers of one process
// only; two processes sharing a Qdrant collection can both win a claim
// made at the same moment. What holds across processes is the append's
// check: an append by a driver whose token no longer holds the lease is
// refused (checked just before it writes, not in one step with it).

// setRun writes a run's header into its point, keeping its lease.
func (s *Store) setRun(ctx context.Context, r store.Run) error {
	return s.setRunPayload(ctx, r.ID, runPayload(r))
}

func (s *Store) setRunPayload(ctx context.Context, id string, p map[string]*qdrant.Value) error {
	wait := true
	_, err := s.c.SetPayload(ctx, &qdrant.SetPayloadPoints{
		CollectionName: s.coll(roleRuns), Wait: &wait, Payload: p,
		PointsSelector: qdrant.NewPointsSelector(runPID(id)),
	})
	return s.wrap("write run "+id, err)
}

// runLease reads run id's lease and its owner's token.
func (s *Store) runLease(ctx context.Context, id string) (store.Lease, string, error) {
	pts, err := s.c.Get(ctx, &qdrant.GetPoints{CollectionName: s.coll(roleRuns), Ids: []*qdrant.PointId{runPID(id)},
		WithPayload: qdrant.NewWithPayloadInclude("owner", "owner_token", "lease_until")})
	if err != nil {
		return store.Lease{}, "", s.wrap("read run "+id, err)
	}
	if len(pts) == 0 {
		return store.Lease{}, "", fmt.Errorf("run %q: %w", id, store.ErrNotFound)
	}
	p := pts[0].GetPayload()
	var l store.Lease
	if owner := pstr(p, "owner"); owner != "" {
		if err := json.Unmarshal([]byte(owner), &l.Owner); err != nil {
			return l, "", fmt.Errorf("run %q: its owner cannot be read: %w", id, err)
		}
		l.Until = time.UnixMicro(pint(p, "lease_until")).UTC()
	}
	return l, pstr(p, "owner_token"), nil
}

// ClaimRun implements store.LeaseLog (atomic within this process).
func (s *Store) ClaimRun(ctx context.Context, id string, o store.Owner, until, now time.Time, takeFrom string) (store.Lease, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	l, token, err := s.runLease(ctx, id)
	if err != nil {
		return l, fmt.Errorf("claim run: %w", err)
	}
	if token != "" && token != o.Token && l.Until.After(now) && (takeFrom == "" || token != takeFrom) {
		return l, nil
	}
	owner, err := json.Marshal(o)
	if err != nil {
		return l, fmt.Errorf("claim run %q: %w", id, err)
	}
	err = s.setRunPayload(ctx, id, map[string]*qdrant.Value{"owner": vstr(string(owner)), "owner_token": vstr(o.Token), "lease_until": vint(until.UnixMicro())})
	if err != nil {
		return l, err
	}
	return store.Lease{Owner: o, Until: until}, nil
}

// ReleaseRun implements store.LeaseLog.
func (s *Store) ReleaseRun(ctx context.Context, id, token string) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, held, err := s.runLease(ctx, id)
	if err != nil {
		return fmt.Errorf("release run: %w", err)
	}
	if held != token {
		return nil
	}
	return s.setRunPayload(ctx, id, map[string]*qdrant.Value{"owner": vstr(""), "owner_token": vstr(""), "lease_until": vint(0)})
}

// RunLease implements store.LeaseLog.
func (s *Store) RunLease(ctx context.Context, id string) (store.Lease, error) {
	l, _, err := s.runLease(ctx, id)
	return l, err
}

// AppendEventsAs implements store.LeaseLog.
func (s *Store) AppendEventsAs(ctx context.Context, runID, token string, events []store.Event, latest time.Time) (int64, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, held, err := s.runLease(ctx, runID)
	if err != nil {
		return 0, fmt.Errorf("append to run: %w", err)
	}
	if held != token {
		return 0, fmt.Errorf("append to run %q: %w", runID, store.ErrLeaseLost)
	}
	r, err := s.Run(ctx, runID)
	if err != nil {
		return 0, fmt.Errorf("append to run: %w", err)
	}
	return s.appendEvents(ctx, r, events, latest)
}

package qdrant

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/sagasu-dev/sagasu/internal/store"
)

func hostname() string {
	h, _ := os.Hostname()
	return h
}

func pid() int { return os.Getpid() }

func runPID(id string) *qdrant.PointId { return uuidOf("run", id) }

func eventPID(run string, seq int64) *qdrant.PointId {
	return uuidOf("event", fmt.Sprintf("%s\x00%d", run, seq))
}

func runPayload(r store.Run) map[string]*qdrant.Value {
	return map[string]*qdrant.Value{
		"id": vstr(r.ID), "kind": vstr(r.Kind), "title": vstr(r.Title), "status": vstr(r.Status),
		"created": vint(r.Created.UnixMicro()), "updated": vint(r.Updated.UnixMicro()), "meta": vstr(store.RawJSON(r.Meta)),
	}
}

func runOf(p map[string]*qdrant.Value) store.Run {
	return store.Run{
		ID: pstr(p, "id"), Kind: pstr(p, "kind"), Title: pstr(p, "title"), Status: pstr(p, "status"),
		Created: time.UnixMicro(pint(p, "created")).UTC(), Updated: time.UnixMicro(pint(p, "updated")).UTC(),
		Meta: store.JSONOf(pstr(p, "meta")),
	}
}

func (s *Store) putRun(ctx context.Context, r store.Run) error {
	return s.upsert(ctx, s.coll(roleRuns), []*qdrant.PointStruct{{
		Id: runPID(r.ID), Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{}), Payload: runPayload(r),
	}})
}

// CreateRun stores a new run; ErrExists when the ID is taken.
func (s *Store) CreateRun(ctx context.Context, r store.Run) error {
	r, err := store.NewRun(r)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if _, err := s.Run(ctx, r.ID); err == nil {
		return fmt.Errorf("create run %q: %w", r.ID, store.ErrExists)
	}
	return s.putRun(ctx, r)
}

// UpdateRun changes a run's header and its Updated time.
func (s *Store) UpdateRun(ctx context.Context, id string, u store.RunUpdate) error {
	if err := store.CheckRunUpdate(id, u); err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	r, err := s.Run(ctx, id)
	if err != nil {
		return fmt.Errorf("update run: %w", err)
	}
	if u.Status != "" {
		r.Status = u.Status
	}
	if u.Title != "" {
		r.Title = u.Title
	}
	if len(u.Meta) > 0 {
		r.Meta = u.Meta
	}
	r.Updated = store.StoredTime(time.Time{})
	return s.putRun(ctx, r)
}

// Run returns one run.
func (s *Store) Run(ctx context.Context, id string) (store.Run, error) {
	pts, err := s.c.Get(ctx, &qdrant.GetPoints{CollectionName: s.coll(roleRuns), Ids: []*qdrant.PointId{runPID(id)}, WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		return store.Run{}, s.wrap("read run "+id, err)
	}
	if len(pts) == 0 {
		return store.Run{}, fmt.Errorf("run %q: %w", id, store.ErrNotFound)
	}
	return runOf(pts[0].GetPayload()), nil
}

// ListRuns returns runs, the most recently updated first (then by ID).
func (s *Store) ListRuns(ctx context.Context, f store.RunFilter) ([]store.Run, error) {
	var qf *qdrant.Filter
	if f.Kind != "" {
		qf = &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("kind", f.Kind)}}
	}
	var out []store.Run
	err := s.scroll(ctx, s.coll(roleRuns), qf, qdrant.NewWithPayload(true), nil, func(p *qdrant.RetrievedPoint) error {
		out = append(out, runOf(p.GetPayload()))
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b store.Run) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// lastSeq is the highest event number of a run (0 for none).
func (s *Store) lastSeq(ctx context.Context, runID string) (int64, error) {
	one := uint32(1)
	pts, err := s.c.Scroll(ctx, &qdrant.ScrollPoints{
		CollectionName: s.coll(roleEvents), Limit: &one, WithPayload: qdrant.NewWithPayloadInclude("seq"),
		Filter:  &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("run", runID)}},
		OrderBy: &qdrant.OrderBy{Key: "seq", Direction: qdrant.Direction_Desc.Enum()},
	})
	if err != nil {
		return 0, s.wrap("read events of run "+runID, err)
	}
	if len(pts) == 0 {
		return 0, nil
	}
	return pint(pts[0].GetPayload(), "seq"), nil
}

// AppendEvents appends events to a run's log. Appends from this process are
// serialised; the sequence continues from the highest stored event, so
// events survive a crash between writing them and updating the header.
func (s *Store) AppendEvents(ctx context.Context, runID string, events []store.Event) ([]store.Event, error) {
	if _, err := store.NewEvents(runID, 0, events); err != nil {
		return nil, err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	r, err := s.Run(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("append to run: %w", err)
	}
	if len(events) == 0 {
		return nil, nil
	}
	last, err := s.lastSeq(ctx, runID)
	if err != nil {
		return nil, err
	}
	out, err := store.NewEvents(runID, last, events)
	if err != nil {
		return nil, err
	}
	pts := make([]*qdrant.PointStruct, len(out))
	for i, e := range out {
		pts[i] = &qdrant.PointStruct{
			Id: eventPID(runID, e.Seq), Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{}),
			Payload: map[string]*qdrant.Value{
				"run": vstr(runID), "seq": vint(e.Seq), "time": vint(e.Time.UnixMicro()), "type": vstr(e.Type), "data": vstr(store.RawJSON(e.Data)),
			},
		}
	}
	if err := s.upsert(ctx, s.coll(roleEvents), pts); err != nil {
		return nil, err
	}
	if latest := store.Latest(out); latest.After(r.Updated) {
		r.Updated = latest
		if err := s.putRun(ctx, r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Events returns a run's events with Seq above afterSeq, in Seq order.
func (s *Store) Events(ctx context.Context, runID string, afterSeq int64) ([]store.Event, error) {
	if _, err := s.Run(ctx, runID); err != nil {
		return nil, err
	}
	f := &qdrant.Filter{Must: []*qdrant.Condition{
		qdrant.NewMatch("run", runID),
		qdrant.NewRange("seq", &qdrant.Range{Gt: qdrant.PtrOf(float64(afterSeq))}),
	}}
	var out []store.Event
	err := s.scroll(ctx, s.coll(roleEvents), f, qdrant.NewWithPayload(true), nil, func(p *qdrant.RetrievedPoint) error {
		pl := p.GetPayload()
		out = append(out, store.Event{
			RunID: runID, Seq: pint(pl, "seq"), Time: time.UnixMicro(pint(pl, "time")).UTC(), Type: pstr(pl, "type"), Data: store.JSONOf(pstr(pl, "data")),
		})
		return nil
	})
	slices.SortFunc(out, func(a, b store.Event) int { return cmp.Compare(a.Seq, b.Seq) })
	return out, err
}

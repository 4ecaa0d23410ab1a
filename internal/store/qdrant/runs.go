package qdrant

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
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
		"created": vint(r.Created.UnixMicro()), "updated": vint(r.Updated.UnixMicro()), "meta": vstr(string(r.Meta)),
	}
}

func runOf(p map[string]*qdrant.Value) store.Run {
	return store.Run{
		ID: pstr(p, "id"), Kind: pstr(p, "kind"), Title: pstr(p, "title"), Status: pstr(p, "status"),
		Created: time.UnixMicro(pint(p, "created")), Updated: time.UnixMicro(pint(p, "updated")),
		Meta: json.RawMessage(pstr(p, "meta")),
	}
}

func (s *Store) putRun(ctx context.Context, r store.Run) error {
	return s.upsert(ctx, s.coll(roleRuns), []*qdrant.PointStruct{{
		Id: runPID(r.ID), Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{}), Payload: runPayload(r),
	}})
}

// InsertRun implements store.RunLog.
func (s *Store) InsertRun(ctx context.Context, r store.Run) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if _, err := s.Run(ctx, r.ID); err == nil {
		return fmt.Errorf("create run %q: %w", r.ID, store.ErrExists)
	}
	// Events a deletion left behind when it was cut short are not this
	// run's.
	if err := s.clearEvents(ctx, r.ID); err != nil {
		return err
	}
	return s.putRun(ctx, r)
}

// UpdateRun implements store.RunLog.
func (s *Store) UpdateRun(ctx context.Context, id string, u store.RunUpdate, at time.Time) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	r, err := s.Run(ctx, id)
	if err != nil {
		return fmt.Errorf("update run: %w", err)
	}
	r.Status = cmp.Or(u.Status, r.Status)
	r.Title = cmp.Or(u.Title, r.Title)
	if len(u.Meta) > 0 {
		r.Meta = u.Meta
	}
	r.Updated = at
	return s.setRun(ctx, r)
}

// Run implements store.RunLog.
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

// RunsOfKind implements store.RunLog.
func (s *Store) RunsOfKind(ctx context.Context, kind string) ([]store.Run, error) {
	var qf *qdrant.Filter
	if kind != "" {
		qf = &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("kind", kind)}}
	}
	var out []store.Run
	err := s.scroll(ctx, s.coll(roleRuns), qf, qdrant.NewWithPayload(true), nil, func(p *qdrant.RetrievedPoint) error {
		out = append(out, runOf(p.GetPayload()))
		return nil
	})
	return out, err
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

// AppendEvents implements store.RunLog. Appends from this process are
// serialised; the sequence continues from the highest stored event, so
// events survive a crash between writing them and updating the header.
func (s *Store) AppendEvents(ctx context.Context, runID string, events []store.Event, latest time.Time) (int64, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	r, err := s.Run(ctx, runID)
	if err != nil {
		return 0, fmt.Errorf("append to run: %w", err)
	}
	return s.appendEvents(ctx, r, events, latest)
}

// appendEvents appends events to run r; the caller holds wmu.
func (s *Store) appendEvents(ctx context.Context, r store.Run, events []store.Event, latest time.Time) (int64, error) {
	runID := r.ID
	last, err := s.lastSeq(ctx, runID)
	if err != nil {
		return 0, err
	}
	pts := make([]*qdrant.PointStruct, len(events))
	for i, e := range events {
		seq := last + e.Seq
		pts[i] = &qdrant.PointStruct{
			Id: eventPID(runID, seq), Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{}),
			Payload: map[string]*qdrant.Value{
				"run": vstr(runID), "seq": vint(seq), "time": vint(e.Time.UnixMicro()), "type": vstr(e.Type), "data": vstr(string(e.Data)),
			},
		}
	}
	if err := s.upsert(ctx, s.coll(roleEvents), pts); err != nil {
		return 0, err
	}
	if latest.After(r.Updated) {
		r.Updated = latest
		if err := s.setRun(ctx, r); err != nil {
			return 0, err
		}
	}
	return last, nil
}

// Events implements store.RunLog.
func (s *Store) Events(ctx context.Context, runID string, afterSeq int64) ([]store.Event, error) {
	f := &qdrant.Filter{Must: []*qdrant.Condition{
		qdrant.NewMatch("run", runID),
		qdrant.NewRange("seq", &qdrant.Range{Gt: qdrant.PtrOf(float64(afterSeq))}),
	}}
	var out []store.Event
	err := s.scroll(ctx, s.coll(roleEvents), f, qdrant.NewWithPayload(true), nil, func(p *qdrant.RetrievedPoint) error {
		pl := p.GetPayload()
		out = append(out, store.Event{
			Seq: pint(pl, "seq"), Time: time.UnixMicro(pint(pl, "time")), Type: pstr(pl, "type"), Data: json.RawMessage(pstr(pl, "data")),
		})
		return nil
	})
	return out, err
}

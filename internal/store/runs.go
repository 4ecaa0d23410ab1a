package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// ErrExists means a record with that ID is already stored.
var ErrExists = errors.New("already exists")

// Kinds of run.
const (
	RunAgent = "agent" // a run of the agent graph
	RunChat  = "chat"  // a chat thread
)

// Run is one agent run or chat thread: a header whose history is its events.
type Run struct {
	ID      string
	Kind    string // RunAgent, RunChat, ...
	Title   string
	Status  string // free-form: "running", "done", "failed", ...
	Created time.Time
	Updated time.Time       // the last UpdateRun, or the latest event if later
	Meta    json.RawMessage // nil or a JSON value
}

// Event is one entry of a run's append-only log.
type Event struct {
	RunID string
	Seq   int64 // assigned by the store: 1, 2, 3, ... per run
	Time  time.Time
	Type  string
	Data  json.RawMessage // nil or a JSON value
}

// RunUpdate changes a run's header; empty fields keep their value.
type RunUpdate struct {
	Status string
	Title  string
	Meta   json.RawMessage
}

// RunFilter selects runs to list.
type RunFilter struct {
	Kind  string // "" for every kind
	Limit int    // 0 for no limit
}

// Runs is the run log: agent runs and chat threads with their events.
// An append is durable once it returns: the events survive the process
// being killed.
type Runs interface {
	// CreateRun stores a new run (Created and Updated default to now). It
	// fails with ErrExists when the ID is taken.
	CreateRun(ctx context.Context, r Run) error
	// UpdateRun changes a run's header and its Updated time; an unknown ID
	// is ErrNotFound.
	UpdateRun(ctx context.Context, id string, u RunUpdate) error
	// Run returns one run; an unknown ID is ErrNotFound.
	Run(ctx context.Context, id string) (Run, error)
	// ListRuns returns runs, the most recently updated first (then by ID).
	ListRuns(ctx context.Context, f RunFilter) ([]Run, error)
	// AppendEvents appends events to a run's log in one transaction and
	// returns them as stored: Seq continues the run's sequence (safe with
	// concurrent appenders), Time defaults to now, and the run's Updated
	// becomes the latest event's time if that is later. An unknown run is
	// ErrNotFound.
	AppendEvents(ctx context.Context, runID string, events []Event) ([]Event, error)
	// Events returns a run's events with Seq above afterSeq, in Seq order;
	// an unknown run is ErrNotFound.
	Events(ctx context.Context, runID string, afterSeq int64) ([]Event, error)
}

// storedTime is a time as the stores keep it: UTC, to the microsecond
// (what PostgreSQL keeps), so a round trip gives the same value in every
// store. The zero time is now.
func storedTime(t time.Time) time.Time {
	if t.IsZero() {
		t = time.Now()
	}
	return t.UTC().Truncate(time.Microsecond)
}

// CreateRun implements Runs.
func (c *contract) CreateRun(ctx context.Context, r Run) error {
	if r.ID == "" || r.Kind == "" {
		return fmt.Errorf("create run: a run needs an ID and a kind")
	}
	if err := checkJSON(r.Meta); err != nil {
		return fmt.Errorf("create run %q: meta: %w", r.ID, err)
	}
	r.Created = storedTime(r.Created)
	if r.Updated.IsZero() {
		r.Updated = r.Created
	}
	r.Updated = storedTime(r.Updated)
	r.Meta = jsonOrNil(r.Meta)
	return c.d.InsertRun(ctx, r)
}

// UpdateRun implements Runs.
func (c *contract) UpdateRun(ctx context.Context, id string, u RunUpdate) error {
	if err := checkJSON(u.Meta); err != nil {
		return fmt.Errorf("update run %q: meta: %w", id, err)
	}
	return c.d.UpdateRun(ctx, id, u, storedTime(time.Time{}))
}

// Run implements Runs.
func (c *contract) Run(ctx context.Context, id string) (Run, error) {
	r, err := c.d.Run(ctx, id)
	return storedRun(r), err
}

// ListRuns implements Runs: the order is decided here, the same for every
// store (by bytes, whatever a database's collation).
func (c *contract) ListRuns(ctx context.Context, f RunFilter) ([]Run, error) {
	if f.Limit < 0 {
		return nil, fmt.Errorf("list runs: limit %d is negative", f.Limit)
	}
	runs, err := c.d.RunsOfKind(ctx, f.Kind)
	if err != nil {
		return nil, err
	}
	for i := range runs {
		runs[i] = storedRun(runs[i])
	}
	sortNewestFirst(runs)
	if f.Limit > 0 && len(runs) > f.Limit {
		runs = runs[:f.Limit]
	}
	return runs, nil
}

// AppendEvents implements Runs.
func (c *contract) AppendEvents(ctx context.Context, runID string, events []Event) ([]Event, error) {
	return c.appendEvents(ctx, runID, events, func(out []Event, latest time.Time) (int64, error) {
		return c.d.AppendEvents(ctx, runID, out, latest)
	})
}

// appendEvents checks and completes events, and has write store them
// (returning the run's last Seq before them).
func (c *contract) appendEvents(ctx context.Context, runID string, events []Event, write func([]Event, time.Time) (int64, error)) ([]Event, error) {
	out := make([]Event, len(events))
	var latest time.Time
	for i, e := range events {
		if e.Type == "" {
			return nil, fmt.Errorf("append to run %q: event %d has no type", runID, i)
		}
		if err := checkJSON(e.Data); err != nil {
			return nil, fmt.Errorf("append to run %q: event %d: %w", runID, i, err)
		}
		e.RunID, e.Seq, e.Time, e.Data = runID, int64(i)+1, storedTime(e.Time), jsonOrNil(e.Data)
		if e.Time.After(latest) {
			latest = e.Time
		}
		out[i] = e
	}
	if len(out) == 0 {
		_, err := c.d.Run(ctx, runID)
		return nil, err
	}
	last, err := write(out, latest)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Seq += last
	}
	return out, nil
}

// Events implements Runs.
func (c *contract) Events(ctx context.Context, runID string, afterSeq int64) ([]Event, error) {
	if _, err := c.d.Run(ctx, runID); err != nil {
		return nil, err
	}
	events, err := c.d.Events(ctx, runID, afterSeq)
	if err != nil {
		return nil, err
	}
	for i := range events {
		e := &events[i]
		e.RunID, e.Time, e.Data = runID, e.Time.UTC(), jsonOrNil(e.Data)
	}
	slices.SortFunc(events, func(a, b Event) int { return cmp.Compare(a.Seq, b.Seq) })
	return events, nil
}

// storedRun is a run as read back: times in UTC, no empty JSON.
func storedRun(r Run) Run {
	r.Created, r.Updated, r.Meta = r.Created.UTC(), r.Updated.UTC(), jsonOrNil(r.Meta)
	return r
}

// jsonOrNil is nil for an empty JSON field, as stores keep "" for none.
func jsonOrNil(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return b
}

func checkJSON(b json.RawMessage) error {
	if len(b) > 0 && !json.Valid(b) {
		return fmt.Errorf("not valid JSON")
	}
	return nil
}

package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// StoredTime is a time as the stores keep it: UTC, to the microsecond
// (what PostgreSQL keeps), so a round trip gives the same value in every
// store.
func StoredTime(t time.Time) time.Time {
	if t.IsZero() {
		t = time.Now()
	}
	return t.UTC().Truncate(time.Microsecond)
}

// NewRun checks r and fills its defaults before a store writes it.
func NewRun(r Run) (Run, error) {
	if r.ID == "" || r.Kind == "" {
		return r, fmt.Errorf("create run: a run needs an ID and a kind")
	}
	if err := checkJSON(r.Meta); err != nil {
		return r, fmt.Errorf("create run %q: meta: %w", r.ID, err)
	}
	r.Created = StoredTime(r.Created)
	if r.Updated.IsZero() {
		r.Updated = r.Created
	}
	r.Updated = StoredTime(r.Updated)
	return r, nil
}

// CheckRunUpdate checks u before a store writes it.
func CheckRunUpdate(id string, u RunUpdate) error {
	if err := checkJSON(u.Meta); err != nil {
		return fmt.Errorf("update run %q: meta: %w", id, err)
	}
	return nil
}

// NewEvents checks events and fills RunID, Time and Seq (from after+1)
// before a store writes them.
func NewEvents(runID string, after int64, events []Event) ([]Event, error) {
	out := make([]Event, len(events))
	for i, e := range events {
		if e.Type == "" {
			return nil, fmt.Errorf("append to run %q: event %d has no type", runID, i)
		}
		if err := checkJSON(e.Data); err != nil {
			return nil, fmt.Errorf("append to run %q: event %d: %w", runID, i, err)
		}
		e.RunID, e.Seq, e.Time = runID, after+int64(i)+1, StoredTime(e.Time)
		out[i] = e
	}
	return out, nil
}

// Latest returns the latest Time of events (zero for none).
func Latest(events []Event) time.Time {
	var t time.Time
	for _, e := range events {
		if e.Time.After(t) {
			t = e.Time
		}
	}
	return t
}

// RawJSON is the stored form of a JSON field: "" for nil.
func RawJSON(b json.RawMessage) string { return string(b) }

// JSONOf reads a stored JSON field back: nil for "".
func JSONOf(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

func checkJSON(b json.RawMessage) error {
	if len(b) > 0 && !json.Valid(b) {
		return fmt.Errorf("not valid JSON")
	}
	return nil
}

package graph

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"
)

// Event types the runner writes. Nodes may emit any of the trace types
// through their RunContext; the runner alone writes checkpoints and outcomes.
const (
	TypeThought      = "thought"
	TypeAction       = "action"
	TypeObservation  = "observation"
	TypeReflection   = "reflection"
	TypePlan         = "plan"
	TypeReplan       = "replan"
	TypeAnswer       = "answer"
	TypeError        = "error"
	TypeUsage        = "usage"         // tokens spent by one model call
	TypeParseFailure = "parse_failure" // a model reply the node could not parse
	TypeProgress     = "progress"      // the node says it moved the task forward
	TypeOnce         = "once"          // the recorded result of rc.Once
	TypeCheckpoint   = "checkpoint"    // state after a completed node, and the next node
	TypeOutcome      = "outcome"       // how an invocation ended (Result holds the Outcome)
)

// Tokens counts model tokens.
type Tokens struct {
	In  int64 `json:"in"`
	Out int64 `json:"out"`
}

// Total is In + Out.
func (t Tokens) Total() int64 { return t.In + t.Out }

// Event is one line of a run's log. The same record feeds the CLI trace,
// --json output, a live web view and Resume: checkpoints are events too.
type Event struct {
	Run         string          `json:"run"`
	Seq         int64           `json:"seq"`
	Time        time.Time       `json:"time"`
	Step        int             `json:"step"`
	Node        string          `json:"node,omitempty"`
	Type        string          `json:"type"`
	Text        string          `json:"text,omitempty"`
	Tool        string          `json:"tool,omitempty"`
	Arguments   json.RawMessage `json:"arguments,omitempty"`
	Observation string          `json:"observation,omitempty"`
	OK          *bool           `json:"ok,omitempty"`
	Tokens      Tokens          `json:"tokens,omitzero"`
	LatencyMs   int64           `json:"latency_ms,omitempty"`
	// Key names a side effect (TypeOnce).
	Key string `json:"key,omitempty"`
	// Result is a structured payload: the result of a Once, or an Outcome.
	Result json.RawMessage `json:"result,omitempty"`
	// State is the whole JSON-encoded state, and Delta what changed since
	// the previous checkpoint (TypeCheckpoint only, one or the other; a
	// Replayer folds them into states).
	State json.RawMessage `json:"state,omitempty"`
	Delta Delta           `json:"delta,omitempty"`
	// Next is the node to run after this checkpoint (TypeCheckpoint only).
	Next string `json:"next,omitempty"`
}

// Log is an append-only store of events, grouped by run. It is the
// checkpointer: Resume rebuilds a run from Events alone. Implementations
// must be safe for concurrent use and return a run's events in Seq order.
type Log interface {
	// Append stores ev. When ev.Type is TypeCheckpoint, TypeOnce or
	// TypeOutcome it must be durable before Append returns.
	Append(ctx context.Context, ev Event) error
	// Events returns every event of run, oldest first; none is not an error.
	Events(ctx context.Context, run string) ([]Event, error)
}

// durable reports whether an event must survive a crash once appended.
func durable(ev Event) bool {
	return ev.Type == TypeCheckpoint || ev.Type == TypeOnce || ev.Type == TypeOutcome
}

// MemLog is a Log held in memory, for tests and short-lived runs.
type MemLog struct {
	mu     sync.Mutex
	events map[string][]Event
}

// NewMemLog returns an empty in-memory log.
func NewMemLog() *MemLog { return &MemLog{events: map[string][]Event{}} }

// Append stores ev.
func (m *MemLog) Append(_ context.Context, ev Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.events[ev.Run] = append(m.events[ev.Run], ev)
	return nil
}

// Forget drops run's events, for a log that holds runs only while they go.
func (m *MemLog) Forget(run string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.events, run)
}

// Events returns a copy of run's events.
func (m *MemLog) Events(_ context.Context, run string) ([]Event, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.events[run]), nil
}

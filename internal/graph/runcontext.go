package graph

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// errAbandoned is returned to a node that kept running after the runner
// gave up waiting for it.
var errAbandoned = errors.New("the runner no longer waits for this node: its run has ended")

// tracker holds one run's counters. The live runner and the replay of a
// logged run feed it the same events, so a resumed run carries on with the
// steps, tokens, tool calls and guard windows it had.
type tracker struct {
	mu        sync.Mutex
	run       string
	log       Log
	logCtx    context.Context // never cancelled: an outcome is written after a cancel
	observers []func(Event)
	limits    Limits
	guards    Guards

	seq        int64
	step       int
	tokens     Tokens
	toolCalls  int
	window     []string // hashes of the last RepeatWindow actions
	parseFails int
	noProgress int
	seen       map[string]bool // state fingerprints
	once       map[string]json.RawMessage

	stepTokens    Tokens
	stepParseFail bool
	stepProgress  bool

	stop   *StopError
	cancel context.CancelCauseFunc // cancels the node in flight

	// outbox holds appended events the observers have not seen; deliverMu
	// lets one goroutine at a time hand them out, in order, outside mu.
	outbox    []Event
	deliverMu sync.Mutex
}

func newTracker(run string, log Log, obs []func(Event), l Limits, g Guards) *tracker {
	return &tracker{run: run, log: log, observers: obs, limits: l, guards: g,
		seen: map[string]bool{}, once: map[string]json.RawMessage{}}
}

func actionHash(tool string, args json.RawMessage) string {
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write(args)
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// account updates the counters with one event, live or replayed.
func (t *tracker) account(ev Event) {
	t.seq = max(t.seq, ev.Seq)
	switch ev.Type {
	case TypeAction:
		t.toolCalls++
		t.window = append(t.window, actionHash(ev.Tool, ev.Arguments))
		if n := t.guards.RepeatWindow; n > 0 && len(t.window) > n {
			t.window = t.window[len(t.window)-n:]
		}
	case TypeUsage:
		t.tokens.In += ev.Tokens.In
		t.tokens.Out += ev.Tokens.Out
		t.stepTokens.In += ev.Tokens.In
		t.stepTokens.Out += ev.Tokens.Out
	case TypeParseFailure:
		t.parseFails++
		t.stepParseFail = true
	case TypeProgress:
		t.stepProgress = true
	case TypeOnce:
		t.once[ev.Key] = ev.Result
	}
}

// endStep closes a step at its checkpoint; fp is the new state's fingerprint.
func (t *tracker) endStep(step int, fp string) {
	if step > 0 {
		if !t.stepParseFail {
			t.parseFails = 0
		}
		if t.stepProgress || !t.seen[fp] {
			t.noProgress = 0
		} else {
			t.noProgress++
		}
	}
	t.seen[fp] = true
	t.step = step
	t.stepTokens, t.stepParseFail, t.stepProgress = Tokens{}, false, false
}

// trip records the first guard to fire and cancels the node in flight.
func (t *tracker) trip(guard, format string, args ...any) *StopError {
	if t.stop == nil {
		t.stop = &StopError{Guard: guard, Reason: fmt.Sprintf(format, args...)}
		if t.cancel != nil {
			t.cancel(t.stop)
		}
	}
	return t.stop
}

// appendLocked numbers ev, writes it to the log and queues it for the
// observers; the caller calls deliver once it has let go of mu.
func (t *tracker) appendLocked(ev Event) (Event, error) {
	ev.Run = t.run
	ev.Seq = t.seq + 1
	if ev.Time.IsZero() {
		ev.Time = time.Now().UTC()
	}
	if err := t.log.Append(t.logCtx, ev); err != nil {
		return ev, &LogError{Run: t.run, Type: ev.Type, Err: err}
	}
	t.account(ev)
	if len(t.observers) > 0 {
		t.outbox = append(t.outbox, ev)
	}
	return ev, nil
}

// deliver hands the queued events to the observers, in log order, without
// holding mu: an observer may be slow (a web page's store write) while
// other goroutines of the node record their events.
func (t *tracker) deliver() {
	if len(t.observers) == 0 {
		return
	}
	t.deliverMu.Lock()
	defer t.deliverMu.Unlock()
	for {
		t.mu.Lock()
		if len(t.outbox) == 0 {
			t.mu.Unlock()
			return
		}
		ev := t.outbox[0]
		t.outbox = t.outbox[1:]
		t.mu.Unlock()
		for _, o := range t.observers {
			o(ev)
		}
	}
}

// RunContext is a node's handle on its run: it records what the node does
// in the run log, counts tokens and tool calls, enforces the limits and
// guards as they are reached, and runs side effects once. Its methods are
// safe for concurrent use by the node's goroutines.
type RunContext struct {
	t         *tracker
	node      string
	step      int
	abandoned atomic.Bool
}

// Run is the run's id.
func (rc *RunContext) Run() string { return rc.t.run }

// Node is the name of the running node.
func (rc *RunContext) Node() string { return rc.node }

// Step is the 1-based number of this node execution in the run.
func (rc *RunContext) Step() int { return rc.step }

// Emit appends a trace event. Run, Seq, Time, Node and Step are filled
// in. Actions, usage and parse failures count toward their limits and
// guards; once one trips, Emit returns the *StopError and the node's
// context is cancelled. Checkpoints, outcomes and Once results are written
// by the runner and refused here.
func (rc *RunContext) Emit(ev Event) error {
	switch ev.Type {
	case "":
		return errors.New("emit event: the type is empty")
	case TypeCheckpoint, TypeOutcome, TypeOnce:
		return fmt.Errorf("emit event: type %q is written by the runner", ev.Type)
	}
	return rc.emit(ev)
}

func (rc *RunContext) emit(ev Event) error {
	err := rc.emitLocked(ev)
	rc.t.deliver()
	return err
}

func (rc *RunContext) emitLocked(ev Event) error {
	t := rc.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if rc.abandoned.Load() && ev.Type != TypeOnce {
		return errAbandoned
	}
	ev.Node, ev.Step = rc.node, rc.step
	if ev.Type == TypeAction {
		if t.stop != nil {
			return t.stop
		}
		if m := t.limits.MaxToolCalls; m > 0 && t.toolCalls >= m {
			return t.trip(GuardMaxToolCalls, "%d tool calls reached the limit of %d; %s was not run", t.toolCalls, m, ev.Tool)
		}
		if ev.Arguments == nil {
			ev.Arguments = json.RawMessage("{}")
		}
	}
	ev, err := t.appendLocked(ev)
	if err != nil {
		return err
	}
	switch ev.Type {
	case TypeAction:
		h := actionHash(ev.Tool, ev.Arguments)
		n := 0
		for _, w := range t.window {
			if w == h {
				n++
			}
		}
		if m := t.guards.RepeatMax; m > 0 && n >= m {
			return t.trip(GuardRepeatAction, "action %s %s repeated %d times in the last %d actions", ev.Tool, ev.Arguments, n, len(t.window))
		}
	case TypeUsage:
		if m := t.limits.MaxTokens; m > 0 && t.tokens.Total() > m {
			return t.trip(GuardMaxTokens, "%d tokens used, over the limit of %d", t.tokens.Total(), m)
		}
	case TypeParseFailure:
		if m := t.guards.MaxParseFailures; m > 0 && t.parseFails >= m {
			return t.trip(GuardParseFailures, "%d parse failures in a row; last: %s", t.parseFails, ev.Text)
		}
	}
	return nil
}

// Trace appends a trace event of type typ (TypeThought, TypePlan, ...).
func (rc *RunContext) Trace(typ, text string) error {
	return rc.Emit(Event{Type: typ, Text: text})
}

// Action records that the node is about to call tool with args (any value
// that encodes to JSON). It refuses the call with a *StopError when the
// tool-call limit is reached, and stops the run when the same action has
// been taken too often recently.
func (rc *RunContext) Action(tool string, args any) error {
	raw, err := encodeArgs(args)
	if err != nil {
		return fmt.Errorf("record action %s: %w", tool, err)
	}
	return rc.Emit(Event{Type: TypeAction, Tool: tool, Arguments: raw})
}

func encodeArgs(args any) (json.RawMessage, error) {
	var raw []byte
	switch a := args.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		raw = a
	case []byte:
		raw = a
	default:
		b, err := json.Marshal(a)
		if err != nil {
			return nil, fmt.Errorf("encode arguments: %w", err)
		}
		raw = b
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, fmt.Errorf("arguments are not JSON: %w", err)
	}
	return buf.Bytes(), nil
}

// Observation records what tool returned.
func (rc *RunContext) Observation(tool, text string, ok bool, latency time.Duration) error {
	return rc.Emit(Event{Type: TypeObservation, Tool: tool, Observation: text, OK: &ok, LatencyMs: latency.Milliseconds()})
}

// Usage records tokens spent by one model call.
func (rc *RunContext) Usage(in, out int64) error {
	return rc.Emit(Event{Type: TypeUsage, Tokens: Tokens{In: in, Out: out}})
}

// ParseFailure records a model reply the node could not parse.
func (rc *RunContext) ParseFailure(text string) error {
	return rc.Emit(Event{Type: TypeParseFailure, Text: text})
}

// Progress records that this step moved the task forward, for the
// no-progress guard; text says how (optional).
func (rc *RunContext) Progress(text string) error {
	return rc.Emit(Event{Type: TypeProgress, Text: text})
}

// Once runs a side effect at most once per run and key. If the run's log
// already holds a result for key (the node ran before and was killed
// later) it returns that result without calling fn. Otherwise it calls fn
// and makes the result durable in the log before returning it. A failed
// fn records nothing, so it runs again on the next attempt. A crash after
// fn's effect but before the log write can still repeat it: give fn's
// effect the key too when that window matters.
func (rc *RunContext) Once(key string, fn func() (json.RawMessage, error)) (json.RawMessage, error) {
	if key == "" {
		return nil, errors.New("once: the key is empty")
	}
	t := rc.t
	t.mu.Lock()
	res, done := t.once[key]
	stop := t.stop
	t.mu.Unlock()
	switch {
	case done:
		return res, nil
	case stop != nil:
		return nil, stop
	case rc.abandoned.Load():
		return nil, errAbandoned
	}
	res, err := fn()
	if err != nil {
		return nil, fmt.Errorf("once %q: %w", key, err)
	}
	if len(res) == 0 {
		res = json.RawMessage("null")
	}
	if !json.Valid(res) {
		return nil, fmt.Errorf("once %q: the result is not JSON", key)
	}
	if err := rc.emit(Event{Type: TypeOnce, Key: key, Result: res}); err != nil {
		return nil, fmt.Errorf("once %q: record result: %w", key, err)
	}
	return res, nil
}

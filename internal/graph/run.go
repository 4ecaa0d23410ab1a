package graph

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// abandonAfter is how long the runner waits for a node to return after
// its context was cancelled before it gives up on it, so a node that
// ignores its context cannot hang the run.
const abandonAfter = 2 * time.Second

// errMaxDuration is the cancel cause of the wall-clock limit.
var errMaxDuration = errors.New("wall-clock limit reached")

// Option configures Compile.
type Option func(*options)

type options struct {
	limits    Limits
	guards    Guards
	observers []func(Event)
}

// WithLimits sets the run limits (zero fields keep their defaults).
func WithLimits(l Limits) Option { return func(o *options) { o.limits = l } }

// WithGuards sets the loop guards (zero fields keep their defaults).
func WithGuards(g Guards) Option { return func(o *options) { o.guards = g } }

// WithObserver calls fn with every event of every run as it is appended,
// in order (see Observe).
func WithObserver(fn func(Event)) Option {
	return func(o *options) { o.observers = append(o.observers, fn) }
}

// RunOption configures one Invoke or Resume call.
type RunOption func(*callOptions)

type callOptions struct {
	observers []func(Event)
	limits    *Limits
	guards    *Guards
}

// Observe calls fn with every event this call appends, in log order, as
// soon as it is in the log: for a live view, a trace or a result. fn runs
// outside the run's lock, on the goroutine that appended the event (a node
// waits for its events' observers), so it may take its time or write
// elsewhere; it must not call back into the run.
func Observe(fn func(Event)) RunOption {
	return func(c *callOptions) { c.observers = append(c.observers, fn) }
}

// Bound sets this call's limits in place of the compiled ones (zero fields
// take the defaults), e.g. a resumed run's recorded limits.
func Bound(l Limits) RunOption { return func(c *callOptions) { c.limits = &l } }

// Guard sets this call's guards in place of the compiled ones (zero fields
// take the defaults).
func Guard(g Guards) RunOption { return func(c *callOptions) { c.guards = &g } }

// Errors of a run that could not start or continue (Outcome.Err wraps them
// in a *StartError).
var (
	ErrEmptyRunID   = errors.New("the run id is empty")
	ErrRunExists    = errors.New("the log already has events for this run: Resume it or choose a new id")
	ErrNoCheckpoint = errors.New("the log has no checkpoint for this run: start it with Invoke")
)

// StartError says why a call ran nothing: Invoke of a run that exists or
// has no id, Resume of a run with no checkpoint, a log that cannot be read.
type StartError struct {
	Op  string // "invoke" or "resume"
	Run string
	Err error
}

func (e *StartError) Error() string {
	if e.Run == "" {
		return e.Op + " run: " + e.Err.Error()
	}
	return fmt.Sprintf("%s run %q: %v", e.Op, e.Run, e.Err)
}

// Unwrap returns the cause.
func (e *StartError) Unwrap() error { return e.Err }

// LogError is a failure to write a run's log: the run cannot go on, since
// what it did could not be recorded.
type LogError struct {
	Run  string
	Type string // the event's type
	Err  error
}

func (e *LogError) Error() string {
	return fmt.Sprintf("write %s event of run %q: %v", e.Type, e.Run, e.Err)
}

// Unwrap returns the cause.
func (e *LogError) Unwrap() error { return e.Err }

func notStarted(op, run string, err error) Outcome {
	return failed("", &StartError{Op: op, Run: run, Err: err})
}

// SetFingerprint sets the function the no-progress guard uses to tell
// states apart, e.g. one that looks only at the plan and the step index.
// By default it is a hash of the whole state's JSON.
func (g *Graph[S]) SetFingerprint(fn func(S) string) *Graph[S] {
	g.fingerprint = fn
	return g
}

// SetRestore sets what Resume does to the state it reads from the last
// checkpoint before the run goes on: a state that checkpoints references
// (chunk IDs) rather than copies reads what they name back. An error ends
// the resume before any node runs.
func (g *Graph[S]) SetRestore(fn func(context.Context, S) (S, error)) *Graph[S] {
	g.restore = fn
	return g
}

// Compiled is a validated graph bound to its log (its checkpointer). It is
// safe for concurrent use by runs with different ids.
type Compiled[S any] struct {
	nodes       map[string]Node[S]
	edges       map[string]string
	conds       map[string]conditional
	branches    map[string]Branch[S]
	fingerprint func(S) string
	restore     func(context.Context, S) (S, error)
	log         Log
	opts        options
}

// Compile validates the graph and binds it to log, which records every
// run's trace and checkpoints; nil means a fresh in-memory log. Later
// changes to g do not affect the result.
func (g *Graph[S]) Compile(log Log, opts ...Option) (*Compiled[S], error) {
	if err := g.validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = NewMemLog()
	}
	var o options
	for _, fn := range opts {
		fn(&o)
	}
	o.limits, o.guards = o.limits.resolved(), o.guards.resolved()
	return &Compiled[S]{
		nodes: maps.Clone(g.nodes), edges: maps.Clone(g.edges), conds: maps.Clone(g.conds),
		branches: maps.Clone(g.branches), fingerprint: g.fingerprint, restore: g.restore, log: log, opts: o,
	}, nil
}

// Log returns the log the graph was compiled with.
func (c *Compiled[S]) Log() Log { return c.log }

// Invoke starts run with the input state and runs it until it reaches END,
// fails, or is stopped. It returns the last state and how the run ended;
// every way of ending, including a log failure, is an Outcome. A run that
// could not start has Outcome.Err a *StartError.
func (c *Compiled[S]) Invoke(ctx context.Context, run string, input S, opts ...RunOption) (S, Outcome) {
	if run == "" {
		return input, notStarted("invoke", "", ErrEmptyRunID)
	}
	if err := c.claim(ctx, run); err != nil {
		return input, notStarted("invoke", run, err)
	}
	defer c.release(ctx, run)
	evs, err := c.log.Events(ctx, run)
	if err != nil {
		return input, notStarted("invoke", run, fmt.Errorf("read the log: %w", err))
	}
	if len(evs) > 0 {
		return input, notStarted("invoke", run, fmt.Errorf("%w (%d events)", ErrRunExists, len(evs)))
	}
	r := c.newRun(ctx, run, opts)
	next, err := c.route(START, input)
	if err != nil {
		return r.finish(input, failed(START, err))
	}
	if err := r.checkpoint(START, 0, input, next, 0); err != nil {
		return r.finish(input, failed(START, err))
	}
	return r.loop(ctx, input, next)
}

// Resume rebuilds run from its log (state from its checkpoints; steps,
// tokens, tool calls, guard windows and Once results from the events
// before the last) and continues from the last checkpoint's next node. A
// node that was cut short runs again; its completed Once calls are not.
// Resuming a run that already succeeded returns its final state. Limits
// and guards are this Compiled's (or the call's Bound and Guard), so a
// stopped run can be resumed with larger ones. A run that could not
// continue has Outcome.Err a *StartError.
func (c *Compiled[S]) Resume(ctx context.Context, run string, opts ...RunOption) (S, Outcome) {
	var zero S
	if run == "" {
		return zero, notStarted("resume", "", ErrEmptyRunID)
	}
	if err := c.claim(ctx, run); err != nil {
		return zero, notStarted("resume", run, err)
	}
	defer c.release(ctx, run)
	evs, err := c.log.Events(ctx, run)
	if err != nil {
		return zero, notStarted("resume", run, fmt.Errorf("read the log: %w", err))
	}
	r := c.newRun(ctx, run, opts)
	var rep Replayer
	last := -1
	for i, ev := range evs {
		r.t.account(ev)
		if ev.Type != TypeCheckpoint {
			continue
		}
		if _, err := rep.Add(ev); err != nil {
			return zero, notStarted("resume", run, fmt.Errorf("%w: %w", ErrBadCheckpoint, err))
		}
		raw := rep.State()
		var s S
		if c.fingerprint != nil { // the default fingerprint needs only the JSON
			if s, err = c.decode(raw); err != nil {
				return zero, notStarted("resume", run, fmt.Errorf("%w: checkpoint %d: %w", ErrBadCheckpoint, ev.Seq, err))
			}
		}
		r.t.endStep(ev.Step, c.fp(s, raw))
		last = i
	}
	if last < 0 {
		return zero, notStarted("resume", run, fmt.Errorf("%w (%d events)", ErrNoCheckpoint, len(evs)))
	}
	cp := evs[last]
	state, err := c.decode(rep.State())
	if err != nil {
		return zero, notStarted("resume", run, fmt.Errorf("%w: checkpoint %d: %w", ErrBadCheckpoint, cp.Seq, err))
	}
	if cp.Next != END && c.nodes[cp.Next] == nil {
		return zero, notStarted("resume", run, fmt.Errorf("%w: checkpoint %d continues at node %q, which the graph does not have (was it renamed?)", ErrBadCheckpoint, cp.Seq, cp.Next))
	}
	if c.restore != nil {
		if state, err = c.restore(ctx, state); err != nil {
			return zero, notStarted("resume", run, fmt.Errorf("restore the state of checkpoint %d: %w", cp.Seq, err))
		}
	}
	if end := evs[len(evs)-1]; end.Type == TypeOutcome && cp.Next == END {
		var o Outcome
		if json.Unmarshal(end.Result, &o) == nil && o.Status == Success {
			return state, o
		}
	}
	return r.loop(ctx, state, cp.Next)
}

func (c *Compiled[S]) newRun(ctx context.Context, run string, opts []RunOption) *runner[S] {
	var co callOptions
	for _, o := range opts {
		o(&co)
	}
	limits, guards := c.opts.limits, c.opts.guards
	if co.limits != nil {
		limits = co.limits.resolved()
	}
	if co.guards != nil {
		guards = co.guards.resolved()
	}
	t := newTracker(run, c.log, append(slices.Clone(c.opts.observers), co.observers...), limits, guards)
	t.logCtx = context.WithoutCancel(ctx)
	return &runner[S]{c: c, t: t}
}

func (c *Compiled[S]) decode(raw json.RawMessage) (S, error) {
	var s S
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, fmt.Errorf("decode state: %w", err)
	}
	return s, nil
}

// fp is the fingerprint of a state; raw is its JSON in the form a
// Replayer gives (fields in a fixed order), so a live run and its replay
// agree.
func (c *Compiled[S]) fp(s S, raw json.RawMessage) string {
	if c.fingerprint != nil {
		return c.fingerprint(s)
	}
	h := sha256.Sum256(raw)
	return hex.EncodeToString(h[:12])
}

// route picks the node after from.
func (c *Compiled[S]) route(from string, s S) (next string, err error) {
	if to, ok := c.edges[from]; ok {
		return to, nil
	}
	cd := c.conds[from]
	defer func() {
		if p := recover(); p != nil {
			err = &RouteError{From: from, Branch: cd.branch, Reason: fmt.Sprintf("branch %q after %s panicked: %v", cd.branch, from, p)}
		}
	}()
	key := c.branches[cd.branch](s)
	if len(cd.routes) == 0 {
		if key == END || c.nodes[key] != nil {
			return key, nil
		}
		return "", &RouteError{From: from, Branch: cd.branch, Key: key,
			Reason: fmt.Sprintf("branch %q after %s returned %q, which is not a node", cd.branch, from, key)}
	}
	to, ok := cd.routes[key]
	if !ok {
		return "", &RouteError{From: from, Branch: cd.branch, Key: key,
			Reason: fmt.Sprintf("branch %q after %s returned route key %q, which has no route; add it to the routes (known: %v)",
				cd.branch, from, key, sortedKeys(cd.routes))}
	}
	return to, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func failed(node string, err error) Outcome {
	return Outcome{Status: Failure, Reason: err.Error(), Node: node, Err: err}
}

// runner drives one Invoke or Resume call.
type runner[S any] struct {
	c *Compiled[S]
	t *tracker
	// last is the state of the last checkpoint written, field by field,
	// and sinceFull how many deltas followed the last whole state.
	last      fields
	wrote     bool
	sinceFull int
}

func (r *runner[S]) loop(ctx context.Context, state S, next string) (S, Outcome) {
	if d := r.t.limits.MaxDuration; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, d, errMaxDuration)
		defer cancel()
	}
	for next != END {
		if o, stop := r.check(ctx, next); stop {
			return r.finish(state, o)
		}
		start := time.Now()
		s, err := r.runNode(ctx, next, state)
		r.t.mu.Lock()
		stop := r.t.stop
		r.t.mu.Unlock()
		switch {
		case stop != nil:
			return r.finish(state, stopped(stop, next))
		case err != nil && ctx.Err() != nil:
			o, _ := r.check(ctx, next)
			return r.finish(state, o)
		case err != nil:
			return r.finish(state, failed(next, &NodeError{Node: next, Err: err}))
		}
		after, err := r.c.route(next, s)
		if err != nil {
			return r.finish(s, failed(next, err))
		}
		if err := r.checkpoint(next, r.step()+1, s, after, time.Since(start).Milliseconds()); err != nil {
			return r.finish(s, failed(next, err))
		}
		state, next = s, after
	}
	return r.finish(state, Outcome{Status: Success, Next: END})
}

func stopped(e *StopError, node string) Outcome {
	return Outcome{Status: Stopped, Guard: e.Guard, Reason: e.Reason, Node: node, Next: node, Err: e}
}

// check returns the outcome for a run that must not start node.
func (r *runner[S]) check(ctx context.Context, node string) (Outcome, bool) {
	t := r.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stop == nil {
		l, g := t.limits, t.guards
		switch {
		case ctx.Err() != nil && errors.Is(context.Cause(ctx), errMaxDuration):
			t.trip(GuardMaxDuration, "the run took longer than %s", l.MaxDuration)
		case ctx.Err() != nil:
			err := context.Cause(ctx)
			return Outcome{Status: Stopped, Reason: "cancelled: " + err.Error(), Node: node, Next: node, Err: cancelled(err)}, true
		case l.MaxSteps > 0 && t.step >= l.MaxSteps:
			t.trip(GuardMaxSteps, "%d steps reached the limit of %d before %s", t.step, l.MaxSteps, node)
		case l.MaxTokens > 0 && t.tokens.Total() > l.MaxTokens:
			t.trip(GuardMaxTokens, "%d tokens used, over the limit of %d", t.tokens.Total(), l.MaxTokens)
		case g.NoProgressSteps > 0 && t.noProgress >= g.NoProgressSteps:
			t.trip(GuardNoProgress, "%d steps in a row without progress (no rc.Progress and no new state)", t.noProgress)
		case g.MaxParseFailures > 0 && t.parseFails >= g.MaxParseFailures:
			t.trip(GuardParseFailures, "%d parse failures in a row", t.parseFails)
		}
	}
	if t.stop != nil {
		return stopped(t.stop, node), true
	}
	return Outcome{}, false
}

// runNode runs one node in its own goroutine, turning a panic into an
// error and giving up on a node that outlives its cancelled context.
func (r *runner[S]) runNode(ctx context.Context, name string, state S) (S, error) {
	nctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r.t.mu.Lock()
	r.t.cancel = cancel
	rc := &RunContext{t: r.t, node: name, step: r.t.step + 1}
	r.t.mu.Unlock()
	defer func() {
		r.t.mu.Lock()
		r.t.cancel = nil
		r.t.mu.Unlock()
	}()

	type result struct {
		s   S
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{state, fmt.Errorf("%w: %v", ErrPanic, p)}
			}
		}()
		in := state
		if c, ok := any(state).(Cloner[S]); ok {
			in = c.Clone()
		}
		s, err := r.c.nodes[name](nctx, rc, in)
		done <- result{s, err}
	}()
	select {
	case res := <-done:
		return res.s, res.err
	case <-nctx.Done():
	}
	timer := time.NewTimer(abandonAfter)
	defer timer.Stop()
	select {
	case res := <-done:
		return res.s, res.err
	case <-timer.C:
		rc.abandoned.Store(true)
		return state, fmt.Errorf("node %q did not return after its context ended: %w", name, context.Cause(nctx))
	}
}

func (r *runner[S]) step() int {
	r.t.mu.Lock()
	defer r.t.mu.Unlock()
	return r.t.step
}

// checkpoint appends the state after a completed step and the next node:
// what changed since the last checkpoint (Delta), or the whole state.
func (r *runner[S]) checkpoint(node string, step int, s S, next string, latencyMs int64) error {
	raw, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("checkpoint: encode state: %w", err)
	}
	f := fieldsOf(raw)
	ev := Event{Type: TypeCheckpoint, Node: node, Step: step, Next: next, LatencyMs: latencyMs}
	canonical := raw
	if f != nil {
		canonical = f.encode()
	}
	if f != nil && r.wrote && r.last != nil && r.sinceFull < fullEvery {
		ev.Delta = diff(r.last, f)
		r.sinceFull++
	} else {
		ev.State = raw
		r.sinceFull = 0
	}
	t := r.t
	t.mu.Lock()
	ev.Tokens = t.stepTokens
	_, err = t.appendLocked(ev)
	if err == nil {
		t.endStep(step, r.c.fp(s, canonical))
	}
	t.mu.Unlock()
	t.deliver()
	if err != nil {
		return err
	}
	r.last, r.wrote = f, true
	return nil
}

// finish writes the outcome event and fills in the run's totals. An
// outcome that cannot be written is reported in the outcome, whatever it
// was: a successful run becomes a failure, another keeps its status and
// says so in its Reason and Err.
func (r *runner[S]) finish(state S, o Outcome) (S, Outcome) {
	t := r.t
	t.mu.Lock()
	o.Steps, o.ToolCalls, o.Tokens = t.step, t.toolCalls, t.tokens
	raw, _ := json.Marshal(o)
	ok := o.Status == Success
	ev := Event{Type: TypeOutcome, Node: o.Node, Step: t.step, Text: o.Reason, OK: &ok, Tokens: t.tokens, Result: raw}
	_, err := t.appendLocked(ev)
	t.mu.Unlock()
	t.deliver()
	if err != nil {
		if ok {
			o = failed("", err)
			o.Steps, o.ToolCalls, o.Tokens = t.step, t.toolCalls, t.tokens
		} else {
			o.Reason += "; and its outcome could not be logged: " + err.Error()
			o.Err = errors.Join(o.Err, err)
		}
	}
	return state, o
}

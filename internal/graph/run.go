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

// WithObserver calls fn with every event as it is appended, in order, for
// live display. fn runs while the run's log is locked: keep it quick.
func WithObserver(fn func(Event)) Option {
	return func(o *options) { o.observers = append(o.observers, fn) }
}

// SetFingerprint sets the function the no-progress guard uses to tell
// states apart, e.g. one that looks only at the plan and the step index.
// By default it is a hash of the whole state's JSON.
func (g *Graph[S]) SetFingerprint(fn func(S) string) *Graph[S] {
	g.fingerprint = fn
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
		branches: maps.Clone(g.branches), fingerprint: g.fingerprint, log: log, opts: o,
	}, nil
}

// Log returns the log the graph was compiled with.
func (c *Compiled[S]) Log() Log { return c.log }

// Invoke starts run with the input state and runs it until it reaches END,
// fails, or is stopped. It returns the last state and how the run ended;
// every way of ending, including a log failure, is an Outcome.
func (c *Compiled[S]) Invoke(ctx context.Context, run string, input S) (S, Outcome) {
	if run == "" {
		return input, failed("", errors.New("invoke: the run id is empty"))
	}
	evs, err := c.log.Events(ctx, run)
	if err != nil {
		return input, failed("", fmt.Errorf("invoke run %q: %w", run, err))
	}
	if len(evs) > 0 {
		return input, failed("", fmt.Errorf("invoke run %q: the log already has %d events for it; Resume it or choose a new id", run, len(evs)))
	}
	r := c.newRun(ctx, run)
	next, err := c.route(START, input)
	if err != nil {
		return r.finish(input, failed(START, err))
	}
	if err := r.checkpoint(START, 0, input, next, 0); err != nil {
		return r.finish(input, failed(START, err))
	}
	return r.loop(ctx, input, next)
}

// Resume rebuilds run from its log (state from the last checkpoint; steps,
// tokens, tool calls, guard windows and Once results from the events
// before it) and continues from the checkpoint's next node. A node that was
// cut short runs again; its completed Once calls are not. Resuming a run
// that already succeeded returns its final state. Limits and guards are
// this Compiled's, so a stopped run can be resumed with larger ones.
func (c *Compiled[S]) Resume(ctx context.Context, run string) (S, Outcome) {
	var zero S
	evs, err := c.log.Events(ctx, run)
	if err != nil {
		return zero, failed("", fmt.Errorf("resume run %q: %w", run, err))
	}
	r := c.newRun(ctx, run)
	last := -1
	for i, ev := range evs {
		r.t.account(ev)
		if ev.Type == TypeCheckpoint {
			var s S
			if c.fingerprint != nil { // the default fingerprint needs only the JSON
				if s, err = c.decode(ev.State); err != nil {
					return zero, failed(ev.Node, fmt.Errorf("resume run %q: checkpoint %d: %w", run, ev.Seq, err))
				}
			}
			r.t.endStep(ev.Step, c.fp(s, ev.State))
			last = i
		}
	}
	if last < 0 {
		return zero, failed("", fmt.Errorf("resume run %q: the log has no checkpoint for it (%d events); start it with Invoke", run, len(evs)))
	}
	cp := evs[last]
	state, err := c.decode(cp.State)
	if err != nil {
		return zero, failed(cp.Node, fmt.Errorf("resume run %q: checkpoint %d: %w", run, cp.Seq, err))
	}
	if end := evs[len(evs)-1]; end.Type == TypeOutcome && cp.Next == END {
		var o Outcome
		if json.Unmarshal(end.Result, &o) == nil && o.Status == Success {
			return state, o
		}
	}
	return r.loop(ctx, state, cp.Next)
}

func (c *Compiled[S]) newRun(ctx context.Context, run string) *runner[S] {
	t := newTracker(run, c.log, c.opts.observers, c.opts.limits, c.opts.guards)
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
			err = fmt.Errorf("branch %q after %s panicked: %v", cd.branch, from, p)
		}
	}()
	key := c.branches[cd.branch](s)
	if len(cd.routes) == 0 {
		if key == END || c.nodes[key] != nil {
			return key, nil
		}
		return "", fmt.Errorf("branch %q after %s returned %q, which is not a node", cd.branch, from, key)
	}
	to, ok := cd.routes[key]
	if !ok {
		return "", fmt.Errorf("branch %q after %s returned route key %q, which has no route; add it to the routes (known: %v)",
			cd.branch, from, key, sortedKeys(cd.routes))
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
		if r.c.nodes[next] == nil {
			return r.finish(state, failed(next, fmt.Errorf("no node %q in the graph (was it renamed since the run was checkpointed?)", next)))
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
			return r.finish(state, failed(next, fmt.Errorf("node %q: %w", next, err)))
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
			return Outcome{Status: Stopped, Reason: "cancelled: " + err.Error(), Node: node, Next: node, Err: err}, true
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
				done <- result{state, fmt.Errorf("panic: %v", p)}
			}
		}()
		s, err := r.c.nodes[name](nctx, rc, state)
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

// checkpoint appends the state after a completed step and the next node.
func (r *runner[S]) checkpoint(node string, step int, s S, next string, latencyMs int64) error {
	raw, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("checkpoint: encode state: %w", err)
	}
	t := r.t
	t.mu.Lock()
	defer t.mu.Unlock()
	ev := Event{Type: TypeCheckpoint, Node: node, Step: step, State: raw, Next: next, Tokens: t.stepTokens, LatencyMs: latencyMs}
	if _, err := t.appendLocked(ev); err != nil {
		return err
	}
	t.endStep(step, r.c.fp(s, raw))
	return nil
}

// finish writes the outcome event and fills in the run's totals.
func (r *runner[S]) finish(state S, o Outcome) (S, Outcome) {
	t := r.t
	t.mu.Lock()
	defer t.mu.Unlock()
	o.Steps, o.ToolCalls, o.Tokens = t.step, t.toolCalls, t.tokens
	raw, _ := json.Marshal(o)
	ok := o.Status == Success
	ev := Event{Type: TypeOutcome, Node: o.Node, Step: t.step, Text: o.Reason, OK: &ok, Tokens: t.tokens, Result: raw}
	if _, err := t.appendLocked(ev); err != nil && ok {
		o = failed("", err)
		o.Steps, o.ToolCalls, o.Tokens = t.step, t.toolCalls, t.tokens
	}
	return state, o
}

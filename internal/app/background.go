package app

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/sagasu-dev/sagasu/internal/agent/planact"
	"github.com/sagasu-dev/sagasu/internal/telemetry"
)

// BackgroundRuns drives Plan-and-Act runs in the background for the
// long-lived faces (the web page, the MCP server): a start or a resume
// returns at once with the run's ID while the run goes on, each run can be
// stopped, and at most Max run at once. Why a run failed before it logged
// an outcome is kept for the last maxFailures runs, until it runs again.
type BackgroundRuns struct {
	rt   *Runtime
	base context.Context
	max  int
	// onDone, when set, hears that a run ended (a live view wakes up).
	onDone func(id string)

	mu       sync.Mutex
	running  map[string]context.CancelFunc
	wg       sync.WaitGroup
	failures map[string]string
	order    []string // failures, oldest first
}

// maxFailures is how many runs' failures BackgroundRuns keeps.
const maxFailures = 64

// ErrTooManyRuns refuses a run while the most runs run (errors.Is).
var ErrTooManyRuns = errors.New("too many agent runs at once")

// ErrRunning refuses to start a run that is running (errors.Is).
var ErrRunning = errors.New("the run is already running")

// BackgroundRuns returns a driver of background runs over the runtime;
// base bounds them all (cancel it to stop them), max is how many may run
// at once (0: 4), and onDone (may be nil) hears each run end.
func (r *Runtime) BackgroundRuns(base context.Context, max int, onDone func(id string)) *BackgroundRuns {
	if max <= 0 {
		max = 4
	}
	return &BackgroundRuns{rt: r, base: base, max: max, onDone: onDone, running: map[string]context.CancelFunc{}, failures: map[string]string{}}
}

// Start prepares a new run toward opt.Goal (see NewPlanActRun) and runs it
// in the background; it returns the run's ID once the run is recorded.
func (b *BackgroundRuns) Start(ctx context.Context, opt PlanActOptions) (string, error) {
	if err := b.room(""); err != nil {
		return "", err
	}
	sp := b.span(&opt)
	run, err := b.rt.NewPlanActRun(ctx, opt)
	if err != nil {
		sp.end(err)
		return "", err
	}
	return run.ID, b.launch(run, sp, func(ctx context.Context) error { _, err := run.Start(ctx); return err })
}

// Resume prepares run id to continue with its recorded settings (opt's
// over them, see OpenPlanActRun) and continues it in the background.
func (b *BackgroundRuns) Resume(ctx context.Context, id string, opt PlanActOptions) error {
	if err := b.room(id); err != nil {
		return err
	}
	sp := b.span(&opt)
	run, err := b.rt.OpenPlanActRun(ctx, id, opt)
	if err != nil {
		sp.end(err)
		return err
	}
	return b.launch(run, sp, func(ctx context.Context) error { _, err := run.Resume(ctx); return err })
}

// runSpan is a background run's trace span: ctx carries it (and derives
// from the runs' base context, not from the request that started the run,
// which ends at once).
type runSpan struct {
	ctx context.Context
	end func(error)
}

// span starts the invoke_agent span of a background run, as `sagasu agent
// run` starts one: its model calls nest under it, and opt's event handler
// records its tool calls under it too.
func (b *BackgroundRuns) span(opt *PlanActOptions) runSpan {
	tr := b.rt.app.Tracer
	ctx, end := tr.StartAgent(b.base, "sagasu plan-and-act", "")
	opt.OnEvent = tr.OnEvent(ctx, opt.OnEvent)
	return runSpan{ctx: ctx, end: end}
}

// room checks that a run may start (id, when it is known, is not running).
func (b *BackgroundRuns) room(id string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, busy := b.running[id]; id != "" && busy {
		return fmt.Errorf("run %s: %w", id, ErrRunning)
	}
	if len(b.running) >= b.max {
		return fmt.Errorf("%w: %d are running, the most this server runs; wait for one to end, or stop one", ErrTooManyRuns, len(b.running))
	}
	return nil
}

func (b *BackgroundRuns) launch(run *PlanActRun, sp runSpan, fn func(context.Context) error) error {
	trace.SpanFromContext(sp.ctx).SetAttributes(attribute.String(telemetry.AttrConversation, run.ID))
	b.mu.Lock()
	if _, busy := b.running[run.ID]; busy {
		b.mu.Unlock()
		run.Close()
		err := fmt.Errorf("run %s: %w", run.ID, ErrRunning)
		sp.end(err)
		return err
	}
	if len(b.running) >= b.max {
		b.mu.Unlock()
		run.Close()
		err := fmt.Errorf("%w: %d are running, the most this server runs", ErrTooManyRuns, len(b.running))
		sp.end(err)
		return err
	}
	ctx, cancel := context.WithCancel(sp.ctx)
	b.running[run.ID] = cancel
	b.forget(run.ID)
	b.wg.Add(1)
	b.mu.Unlock()
	go func() {
		defer b.wg.Done()
		// The run is over when fn returns: it stops running then, and its
		// MCP servers (a browser takes seconds to close) close after.
		defer run.Close()
		defer func() {
			b.mu.Lock()
			delete(b.running, run.ID)
			b.mu.Unlock()
			cancel()
			if b.onDone != nil {
				b.onDone(run.ID)
			}
		}()
		err := fn(ctx)
		sp.end(err)
		if err != nil && ctx.Err() == nil {
			b.rt.app.Log.Warn("agent run failed", "run", run.ID, "err", err)
			b.fail(run.ID, err.Error())
		}
	}()
	return nil
}

// fail keeps why run failed, dropping the oldest failure beyond
// maxFailures.
func (b *BackgroundRuns) fail(id, why string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.forget(id)
	b.failures[id] = why
	b.order = append(b.order, id)
	for len(b.order) > maxFailures {
		delete(b.failures, b.order[0])
		b.order = b.order[1:]
	}
}

// forget drops id's failure; the caller holds mu.
func (b *BackgroundRuns) forget(id string) {
	if _, ok := b.failures[id]; !ok {
		return
	}
	delete(b.failures, id)
	for i, o := range b.order {
		if o == id {
			b.order = append(b.order[:i], b.order[i+1:]...)
			break
		}
	}
}

// Stop cancels run id and reports whether it was running.
func (b *BackgroundRuns) Stop(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	cancel, ok := b.running[id]
	if ok {
		cancel()
	}
	return ok
}

// Running reports whether run id runs here.
func (b *BackgroundRuns) Running(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.running[id]
	return ok
}

// Failure is why run id failed before it logged an outcome ("" if it did
// not, or it ran again since).
func (b *BackgroundRuns) Failure(id string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.failures[id]
}

// Wait blocks until every run has ended or ctx is done.
func (b *BackgroundRuns) Wait(ctx context.Context) {
	done := make(chan struct{})
	go func() { b.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// Options are the options of a run a face (the page, the MCP tools)
// starts or resumes from what it received: goal ("" for a resume), the
// configured MCP servers it names (nil: a resume keeps the recorded ones),
// offline, and its tuning over the configuration. A runtime without a
// model runs offline (the research brain).
func (b *BackgroundRuns) Options(goal string, mcp []string, offline bool, in planact.TuningInput) (PlanActOptions, error) {
	t, err := TuningOf(in)
	if err != nil {
		return PlanActOptions{}, err
	}
	return PlanActOptions{Goal: goal, MCP: mcp, Offline: offline || goal != "" && b.rt.LLM == nil, Tuning: t}, nil
}

package graph

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loop is a one-node graph that runs body until it returns done.
func loop(body func(ctx context.Context, rc *RunContext, n int) (int, error)) *Graph[int] {
	g := New[int]()
	g.AddNode("work", body)
	g.RegisterBranch("again", func(n int) string {
		if n < 0 {
			return "done"
		}
		return "again"
	})
	g.AddEdge(START, "work").AddConditionalEdges("work", "again", map[string]string{"again": "work", "done": END})
	return g
}

func TestLimitsAndGuardsStopTheRun(t *testing.T) {
	never := make(chan struct{})
	t.Cleanup(func() { close(never) })
	var finished atomic.Int32 // steps that returned, where the count depends on the clock
	tests := []struct {
		name          string
		opts          []Option
		body          func(ctx context.Context, rc *RunContext, n int) (int, error)
		wantGuard     string
		wantSteps     int
		stepsFinished bool // want the steps that finished (finished), not wantSteps
		reason        string
	}{
		{
			name: "max steps", opts: []Option{WithLimits(Limits{MaxSteps: 7})},
			body: func(_ context.Context, rc *RunContext, n int) (int, error) {
				return n + 1, rc.Action("fetch", map[string]int{"page": n})
			},
			wantGuard: GuardMaxSteps, wantSteps: 7, reason: "7 steps reached the limit of 7",
		},
		{
			name: "max steps default", opts: []Option{WithGuards(Guards{RepeatMax: -1}), WithLimits(Limits{MaxToolCalls: -1})},
			body: func(_ context.Context, rc *RunContext, n int) (int, error) {
				return n + 1, rc.Progress("")
			},
			wantGuard: GuardMaxSteps, wantSteps: 50, reason: "limit of 50",
		},
		{
			name: "max tool calls", opts: []Option{WithLimits(Limits{MaxToolCalls: 3})},
			body: func(_ context.Context, rc *RunContext, n int) (int, error) {
				return n + 1, rc.Action("fetch", map[string]int{"page": n})
			},
			wantGuard: GuardMaxToolCalls, wantSteps: 3, reason: "3 tool calls reached the limit of 3",
		},
		{
			name: "max tokens", opts: []Option{WithLimits(Limits{MaxTokens: 1000})},
			body: func(_ context.Context, rc *RunContext, n int) (int, error) {
				return n + 1, rc.Usage(400, 50)
			},
			wantGuard: GuardMaxTokens, wantSteps: 2, reason: "1350 tokens used, over the limit of 1000",
		},
		{
			name: "repeated action, default window",
			body: func(_ context.Context, rc *RunContext, n int) (int, error) {
				return n + 1, rc.Action("click", map[string]string{"ref": "e12"})
			},
			wantGuard: GuardRepeatAction, wantSteps: 4, reason: `action click {"ref":"e12"} repeated 5 times`,
		},
		{
			name: "no progress, default", opts: []Option{WithGuards(Guards{RepeatMax: -1})},
			body: func(_ context.Context, rc *RunContext, n int) (int, error) {
				return n, nil // the state never changes
			},
			wantGuard: GuardNoProgress, wantSteps: 10, reason: "10 steps in a row without progress",
		},
		{
			name: "no progress, state oscillates", opts: []Option{WithGuards(Guards{NoProgressSteps: 4})},
			body: func(_ context.Context, rc *RunContext, n int) (int, error) {
				return 1 - n, nil // 0, 1, 0, 1: nothing new after the first step
			},
			wantGuard: GuardNoProgress, wantSteps: 5, reason: "4 steps in a row",
		},
		{
			name: "parse failures, default",
			body: func(_ context.Context, rc *RunContext, n int) (int, error) {
				if err := rc.ParseFailure(fmt.Sprintf("reply %d is not JSON", n)); err != nil {
					return n, err
				}
				return n + 1, nil // the node retries through the loop
			},
			wantGuard: GuardParseFailures, wantSteps: 2, reason: "3 parse failures in a row; last: reply 2 is not JSON",
		},
		{
			// Steps 0 and 1 finish at once and step 2 waits for the
			// limit; on a busy machine the limit may come before step 2
			// starts, so the steps counted are the steps that finished.
			name: "max duration, node honours its context", opts: []Option{WithLimits(Limits{MaxDuration: 20 * time.Millisecond})},
			body: func(ctx context.Context, rc *RunContext, n int) (int, error) {
				if n == 2 {
					<-ctx.Done() // a slow tool call
					return n, ctx.Err()
				}
				finished.Add(1)
				return n + 1, nil
			},
			wantGuard: GuardMaxDuration, stepsFinished: true, reason: "longer than 20ms",
		},
		{
			name: "max duration, node ignores its context", opts: []Option{WithLimits(Limits{MaxDuration: 20 * time.Millisecond})},
			body: func(ctx context.Context, rc *RunContext, n int) (int, error) {
				<-never // hangs: the runner must give up on it
				return n, nil
			},
			wantGuard: GuardMaxDuration, wantSteps: 0, reason: "longer than 20ms",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := NewMemLog()
			run, err := loop(tt.body).Compile(log, tt.opts...)
			require.NoError(t, err)
			_, out := run.Invoke(context.Background(), "r", 0)
			assert.Equal(t, Stopped, out.Status)
			assert.Equal(t, tt.wantGuard, out.Guard)
			want := tt.wantSteps
			if tt.stepsFinished {
				want = int(finished.Load())
			}
			assert.Equal(t, want, out.Steps)
			assert.Contains(t, out.Reason, tt.reason)
			assert.Equal(t, "work", out.Next, "Resume would continue at the node that did not finish")
			var stop *StopError
			require.ErrorAs(t, out.Err, &stop)
			assert.ErrorIs(t, out.Err, ErrStopped)
			logged := outcomeEvent(t, log, "r")
			assert.Equal(t, tt.wantGuard, logged.Guard, "the outcome is in the log")
		})
	}
}

func TestGuardsCanBeTurnedOff(t *testing.T) {
	run, err := loop(func(_ context.Context, rc *RunContext, n int) (int, error) {
		if n == 30 {
			return -1, nil
		}
		if err := rc.ParseFailure("bad"); err != nil {
			return n, err
		}
		return n + 1, rc.Action("click", map[string]string{"ref": "same"})
	}).Compile(nil, WithGuards(Guards{RepeatMax: -1, MaxParseFailures: -1}))
	require.NoError(t, err)
	_, out := run.Invoke(context.Background(), "r", 0)
	assert.Equal(t, Success, out.Status, out.Reason)
	assert.Equal(t, 31, out.Steps)
}

func TestRepeatWindowSlides(t *testing.T) {
	// The same click every fifth action never has 5 copies in a window of 20.
	run, err := loop(func(_ context.Context, rc *RunContext, n int) (int, error) {
		if n == 40 {
			return -1, nil
		}
		ref := fmt.Sprint(n)
		if n%5 == 0 {
			ref = "menu"
		}
		return n + 1, rc.Action("click", map[string]string{"ref": ref})
	}).Compile(nil)
	require.NoError(t, err)
	_, out := run.Invoke(context.Background(), "r", 0)
	assert.Equal(t, Success, out.Status, out.Reason)
	assert.Equal(t, 40, out.ToolCalls)
}

func TestCancelFailAndPanicEndWithAnOutcome(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	tests := []struct {
		name   string
		ctx    context.Context
		body   func(ctx context.Context, rc *RunContext, n int) (int, error)
		status Status
		reason string
	}{
		{"cancelled", ctx, func(ctx context.Context, _ *RunContext, n int) (int, error) {
			cancel()
			<-ctx.Done()
			return n, ctx.Err()
		}, Stopped, "cancelled: context canceled"},
		{"node error", context.Background(), func(_ context.Context, _ *RunContext, n int) (int, error) {
			return n, errors.New("browser crashed")
		}, Failure, `node "work": browser crashed`},
		{"node panic", context.Background(), func(_ context.Context, _ *RunContext, n int) (int, error) {
			var plan []string
			return n, errors.New(plan[n+1]) // index out of range
		}, Failure, `node "work": panic: runtime error: index out of range [1] with length 0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run, err := loop(tt.body).Compile(nil)
			require.NoError(t, err)
			_, out := run.Invoke(tt.ctx, "r", 0)
			assert.Equal(t, tt.status, out.Status)
			assert.Equal(t, "", out.Guard)
			assert.Equal(t, "work", out.Node)
			assert.Contains(t, out.Reason, tt.reason)
		})
	}
}

func TestPerStepTokens(t *testing.T) {
	log := NewMemLog()
	run, err := loop(func(_ context.Context, rc *RunContext, n int) (int, error) {
		if n == 3 {
			return -1, nil
		}
		_ = rc.Usage(int64(100*(n+1)), 10)
		return n + 1, rc.Usage(1, 1)
	}).Compile(log)
	require.NoError(t, err)
	_, out := run.Invoke(context.Background(), "r", 0)
	require.Equal(t, Success, out.Status)
	evs, err := log.Events(context.Background(), "r")
	require.NoError(t, err)
	var perStep []Tokens
	for _, ev := range evs {
		if ev.Type == TypeCheckpoint && ev.Step > 0 {
			perStep = append(perStep, ev.Tokens)
		}
	}
	assert.Equal(t, []Tokens{{101, 11}, {201, 11}, {301, 11}, {0, 0}}, perStep)
	assert.Equal(t, Tokens{603, 33}, out.Tokens)
}

func TestObserversSeeTheLogAsItIsWritten(t *testing.T) {
	log := NewMemLog()
	var seen []Event
	run, err := loop(func(_ context.Context, rc *RunContext, n int) (int, error) {
		if n == 2 {
			return -1, rc.Trace(TypeAnswer, "done")
		}
		// Tool calls from parallel goroutines are all counted.
		errs := make(chan error, 8)
		for i := range 8 {
			go func() { errs <- rc.Action("search", map[string]int{"n": n, "i": i}) }()
		}
		for range 8 {
			if err := <-errs; err != nil {
				return n, err
			}
		}
		return n + 1, rc.Usage(10, 5)
	}).Compile(log, WithObserver(func(ev Event) { seen = append(seen, ev) }))
	require.NoError(t, err)
	_, out := run.Invoke(context.Background(), "r", 0)
	require.Equal(t, Success, out.Status, out.Reason)
	assert.Equal(t, 16, out.ToolCalls)
	assert.Equal(t, Tokens{20, 10}, out.Tokens)
	logged, err := log.Events(context.Background(), "r")
	require.NoError(t, err)
	assert.Equal(t, logged, seen)
	for i, ev := range seen {
		assert.Equal(t, int64(i+1), ev.Seq)
	}
	assert.Equal(t, TypeAnswer, seen[len(seen)-3].Type)
	assert.Equal(t, TypeOutcome, seen[len(seen)-1].Type)
}

func TestFingerprintDecidesProgressAcrossResume(t *testing.T) {
	g := loop(func(_ context.Context, _ *RunContext, n int) (int, error) { return n + 1, nil })
	g.SetFingerprint(func(n int) string { return fmt.Sprint(n / 100) }) // the state changes, the fingerprint does not
	log := NewMemLog()
	run, err := g.Compile(log, WithGuards(Guards{NoProgressSteps: 4}))
	require.NoError(t, err)
	last, out := run.Invoke(context.Background(), "r", 0)
	assert.Equal(t, GuardNoProgress, out.Guard)
	assert.Equal(t, 4, out.Steps)
	assert.Equal(t, 4, last)

	// The resumed run rebuilds its fingerprints from the checkpoints and is
	// still stuck.
	last, out = run.Resume(context.Background(), "r")
	assert.Equal(t, GuardNoProgress, out.Guard)
	assert.Equal(t, 4, out.Steps)
	assert.Equal(t, 4, last)
}

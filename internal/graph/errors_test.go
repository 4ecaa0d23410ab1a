package graph

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var errBrowser = errors.New("browser crashed")

// TestFailureKindsAreTyped: every way a call ends that is not success has
// an Outcome.Err of its own kind, for errors.Is and errors.As, so callers
// never read the kind from zero values or from the Reason's text.
func TestFailureKindsAreTyped(t *testing.T) {
	ctx := context.Background()
	invoke := func(body func(ctx context.Context, rc *RunContext, n int) (int, error), opts ...Option) Outcome {
		t.Helper()
		run, err := loop(body).Compile(nil, opts...)
		require.NoError(t, err)
		_, out := run.Invoke(ctx, "r", 0)
		return out
	}

	t.Run("cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		run, err := loop(func(ctx context.Context, _ *RunContext, n int) (int, error) {
			cancel()
			<-ctx.Done()
			return n, ctx.Err()
		}).Compile(nil)
		require.NoError(t, err)
		_, out := run.Invoke(cctx, "r", 0)
		assert.ErrorIs(t, out.Err, ErrCancelled)
		assert.ErrorIs(t, out.Err, context.Canceled, "the context's cause is kept")
		assert.NotErrorIs(t, out.Err, ErrStopped, "a cancel is not a guard")
	})
	t.Run("limit", func(t *testing.T) {
		out := invoke(func(_ context.Context, _ *RunContext, n int) (int, error) { return n + 1, nil },
			WithLimits(Limits{MaxSteps: 3}), WithGuards(Guards{NoProgressSteps: -1}))
		var se *StopError
		require.ErrorAs(t, out.Err, &se)
		assert.Equal(t, GuardMaxSteps, se.Guard)
		assert.NotErrorIs(t, out.Err, ErrCancelled)
	})
	t.Run("node error", func(t *testing.T) {
		out := invoke(func(_ context.Context, _ *RunContext, n int) (int, error) { return n, errBrowser })
		var ne *NodeError
		require.ErrorAs(t, out.Err, &ne)
		assert.Equal(t, "work", ne.Node)
		assert.ErrorIs(t, out.Err, errBrowser, "the node's own error is kept")
		assert.NotErrorIs(t, out.Err, ErrPanic)
	})
	t.Run("node panic", func(t *testing.T) {
		out := invoke(func(_ context.Context, _ *RunContext, _ int) (int, error) { panic("boom") })
		var ne *NodeError
		require.ErrorAs(t, out.Err, &ne)
		assert.ErrorIs(t, out.Err, ErrPanic)
	})
	t.Run("no route", func(t *testing.T) {
		g := New[int]()
		g.AddNode("work", func(_ context.Context, _ *RunContext, n int) (int, error) { return n, nil })
		g.RegisterBranch("pick", func(int) string { return "elsewhere" })
		g.AddEdge(START, "work").AddConditionalEdges("work", "pick", map[string]string{"done": END})
		run, err := g.Compile(nil)
		require.NoError(t, err)
		_, out := run.Invoke(ctx, "r", 0)
		var re *RouteError
		require.ErrorAs(t, out.Err, &re)
		assert.Equal(t, RouteError{From: "work", Branch: "pick", Key: "elsewhere", Reason: re.Reason}, *re)
	})
	t.Run("checkpoint of another graph", func(t *testing.T) {
		log := NewMemLog()
		old, err := loop(func(_ context.Context, _ *RunContext, n int) (int, error) { return n, errBrowser }).Compile(log)
		require.NoError(t, err)
		_, out := old.Invoke(ctx, "r", 0)
		require.Equal(t, Failure, out.Status)
		g := New[int]()
		g.AddNode("renamed", func(_ context.Context, _ *RunContext, _ int) (int, error) { return -1, nil })
		g.AddEdge(START, "renamed").AddEdge("renamed", END)
		run, err := g.Compile(log)
		require.NoError(t, err)
		_, out = run.Resume(ctx, "r")
		var se *StartError
		require.ErrorAs(t, out.Err, &se)
		assert.ErrorIs(t, out.Err, ErrBadCheckpoint)
		assert.Contains(t, out.Reason, `"work"`, "the reason names the node the graph lacks")
	})
}

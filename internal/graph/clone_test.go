package graph

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// steps is a state whose nodes change its slice in place.
type steps struct {
	Done []string `json:"done"`
}

func (s steps) Clone() steps { return steps{Done: slices.Clone(s.Done)} }

// TestClonerStateIsCopiedForEachNode: a node that changes the state's
// slice in place and then fails leaves the state from before it as it was,
// and a node that changes it in place and succeeds is checkpointed with
// its change (the log's delta is taken against the untouched state).
func TestClonerStateIsCopiedForEachNode(t *testing.T) {
	build := func(failSecond bool) *Compiled[steps] {
		g := New[steps]()
		g.AddNode("first", func(_ context.Context, _ *RunContext, s steps) (steps, error) {
			s.Done[0] = "first ran"
			return s, nil
		})
		g.AddNode("second", func(_ context.Context, _ *RunContext, s steps) (steps, error) {
			s.Done[0] = "second ran"
			if failSecond {
				return s, errors.New("boom")
			}
			return s, nil
		})
		g.AddEdge(START, "first").AddEdge("first", "second").AddEdge("second", END)
		c, err := g.Compile(NewMemLog())
		require.NoError(t, err)
		return c
	}
	input := steps{Done: []string{"nothing"}}
	final, out := build(true).Invoke(context.Background(), "fail", input)
	assert.Equal(t, Failure, out.Status)
	assert.Equal(t, []string{"first ran"}, final.Done, "the failed node's change in place stays out")
	assert.Equal(t, []string{"nothing"}, input.Done, "the caller's input is untouched")

	log := NewMemLog()
	g := New[steps]()
	g.AddNode("first", func(_ context.Context, _ *RunContext, s steps) (steps, error) {
		s.Done[0] = "first ran"
		return s, nil
	})
	g.AddEdge(START, "first").AddEdge("first", END)
	c, err := g.Compile(log)
	require.NoError(t, err)
	_, out = c.Invoke(context.Background(), "ok", steps{Done: []string{"nothing"}})
	require.Equal(t, Success, out.Status)
	evs, err := log.Events(context.Background(), "ok")
	require.NoError(t, err)
	var r Replayer
	for _, ev := range evs {
		_, err := r.Add(ev)
		require.NoError(t, err)
	}
	assert.JSONEq(t, `{"done":["first ran"]}`, string(r.State()), "the checkpoint holds the change made in place")
}

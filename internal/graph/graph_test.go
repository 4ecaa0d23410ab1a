package graph

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// agent is the seed's Plan-and-Act state.
type agent struct {
	Goal        string   `json:"goal"`
	Plan        []string `json:"plan"`
	StepIdx     int      `json:"step_idx"`
	Observation string   `json:"observation"`
	History     []string `json:"history"`
	NeedsReplan bool     `json:"needs_replan"`
	Finished    bool     `json:"finished"`
	Replans     int      `json:"replans"`
}

// planActGraph builds the seed's graph without edges; fail lists the
// steps whose tool call returns "ERROR:" on the first try.
func planActGraph(fail ...string) *Graph[agent] {
	failed := map[string]bool{}
	g := New[agent]()
	g.AddNode("planner", func(_ context.Context, rc *RunContext, s agent) (agent, error) {
		s.Plan = []string{"open arxiv", "search plan-and-act", "read abstract"}
		s.StepIdx, s.NeedsReplan = 0, false
		if len(s.History) > 0 {
			s.Replans++
		}
		return s, rc.Trace(TypePlan, strings.Join(s.Plan, " / "))
	})
	g.AddNode("executor", func(_ context.Context, rc *RunContext, s agent) (agent, error) {
		step := s.Plan[s.StepIdx]
		if err := rc.Action("browser", map[string]any{"step": step, "replans": s.Replans}); err != nil {
			return s, err
		}
		s.Observation = "done: " + step
		if slices.Contains(fail, step) && !failed[step] {
			failed[step] = true
			s.Observation = "ERROR: element not found"
		}
		s.History = append(s.History, step+" -> "+s.Observation)
		s.StepIdx++
		return s, rc.Observation("browser", s.Observation, !strings.HasPrefix(s.Observation, "ERROR:"), 0)
	})
	g.AddNode("evaluate", func(_ context.Context, _ *RunContext, s agent) (agent, error) {
		s.NeedsReplan = strings.Contains(s.Observation, "ERROR:")
		s.Finished = !s.NeedsReplan && s.StepIdx >= len(s.Plan)
		return s, nil
	})
	g.RegisterBranch("should_replan", func(s agent) string {
		switch {
		case s.NeedsReplan:
			return "replan"
		case s.Finished:
			return "done"
		}
		return "next"
	})
	return g
}

// visited lists the nodes of a run's checkpoints, in order.
func visited(t *testing.T, log Log, run string) []string {
	t.Helper()
	evs, err := log.Events(context.Background(), run)
	require.NoError(t, err)
	var out []string
	for _, ev := range evs {
		if ev.Type == TypeCheckpoint && ev.Node != START {
			out = append(out, ev.Node)
		}
	}
	return out
}

func TestConditionalEdgesReplanOnError(t *testing.T) {
	g := planActGraph("search plan-and-act")
	g.AddEdge(START, "planner").AddEdge("planner", "executor").AddEdge("executor", "evaluate")
	g.AddConditionalEdges("evaluate", "should_replan", map[string]string{"replan": "planner", "next": "executor", "done": END})
	log := NewMemLog()
	run, err := g.Compile(log)
	require.NoError(t, err)

	final, out := run.Invoke(context.Background(), "r1", agent{Goal: "find the paper"})
	require.Equal(t, Success, out.Status, out.Reason)
	assert.True(t, final.Finished)
	assert.Equal(t, 1, final.Replans)
	assert.Equal(t, []string{
		"planner", "executor", "evaluate", "executor", "evaluate", // second step fails
		"planner", "executor", "evaluate", "executor", "evaluate", "executor", "evaluate",
	}, visited(t, log, "r1"))
	assert.Equal(t, 12, out.Steps)
	assert.Equal(t, 5, out.ToolCalls)
}

func TestTableFromJSON(t *testing.T) {
	g := planActGraph("read abstract")
	require.NoError(t, g.LoadTableFile(filepath.Join("testdata", "planact.json")))
	log := NewMemLog()
	run, err := g.Compile(log)
	require.NoError(t, err)
	final, out := run.Invoke(context.Background(), "t", agent{Goal: "g"})
	require.Equal(t, Success, out.Status, out.Reason)
	assert.Equal(t, 1, final.Replans, "the table's replan route was taken")
	assert.Equal(t, "evaluate", visited(t, log, "t")[2])
}

func TestTableReplacesCodeRoutes(t *testing.T) {
	g := planActGraph()
	g.AddEdge(START, "planner").AddEdge("planner", "executor").AddEdge("executor", "evaluate")
	g.AddConditionalEdges("evaluate", "should_replan", map[string]string{"replan": "planner", "next": "executor", "done": END})
	// The table stops after the first evaluation whatever the branch says.
	require.NoError(t, g.ApplyTable(Table{Edges: []TableEdge{{From: "evaluate", To: END}}}))
	log := NewMemLog()
	run, err := g.Compile(log)
	require.NoError(t, err)
	_, out := run.Invoke(context.Background(), "t", agent{})
	require.Equal(t, Success, out.Status, out.Reason)
	assert.Equal(t, []string{"planner", "executor", "evaluate"}, visited(t, log, "t"))
}

func TestTableRefusesUnknownNames(t *testing.T) {
	tests := []struct {
		name, json, want string
	}{
		{"unknown node in edge", `{"edges":[{"from":"planner","to":"summarizer"}]}`, `unknown node "summarizer"`},
		{"unknown from node", `{"edges":[{"from":"critic","to":"planner"}]}`, `unknown node "critic"`},
		{"unknown route target", `{"conditional":[{"from":"evaluate","branch":"should_replan","routes":{"replan":"replanner"}}]}`, `route "replan": unknown node "replanner"`},
		{"unknown branch", `{"conditional":[{"from":"evaluate","branch":"is_done","routes":{"done":"__end__"}}]}`, `unknown branch "is_done"`},
		{"two exits", `{"edges":[{"from":"planner","to":"executor"},{"from":"planner","to":"evaluate"}]}`, `node "planner" has more than one exit`},
		{"unknown field", `{"edges":[{"from":"planner","too":"executor"}]}`, `unknown field "too"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "routes.json")
			require.NoError(t, os.WriteFile(path, []byte(tt.json), 0o644))
			g := planActGraph()
			g.AddEdge(START, "planner").AddEdge("planner", "executor").AddEdge("executor", "evaluate").AddEdge("evaluate", END)
			err := g.LoadTableFile(path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), path)
			_, err = g.Compile(nil)
			assert.NoError(t, err, "a refused table leaves the graph as it was")
		})
	}
}

func TestUnmappedRouteKeyFailsNamingIt(t *testing.T) {
	g := planActGraph()
	require.NoError(t, g.ApplyTable(Table{
		Edges:       []TableEdge{{From: START, To: "planner"}, {From: "planner", To: "executor"}, {From: "executor", To: "evaluate"}},
		Conditional: []TableBranch{{From: "evaluate", Branch: "should_replan", Routes: map[string]string{"replan": "planner", "done": END}}},
	}))
	run, err := g.Compile(nil)
	require.NoError(t, err)
	_, out := run.Invoke(context.Background(), "r", agent{})
	assert.Equal(t, Failure, out.Status)
	assert.Equal(t, "evaluate", out.Node)
	assert.Contains(t, out.Reason, `route key "next"`)
}

func TestCompileRefusesBrokenGraphs(t *testing.T) {
	noop := func(_ context.Context, _ *RunContext, s int) (int, error) { return s, nil }
	tests := []struct {
		name  string
		build func(g *Graph[int])
		want  string
	}{
		{"no entry", func(g *Graph[int]) { g.AddNode("a", noop).AddEdge("a", END) }, "no entry point"},
		{"edge to unknown node", func(g *Graph[int]) { g.AddNode("a", noop).AddEdge(START, "a").AddEdge("a", "b") }, `no node "b"`},
		{"unreachable node", func(g *Graph[int]) {
			g.AddNode("a", noop).AddNode("orphan", noop).AddEdge(START, "a").AddEdge("a", END).AddEdge("orphan", END)
		}, `node "orphan" is unreachable`},
		{"dead end", func(g *Graph[int]) { g.AddNode("a", noop).AddEdge(START, "a") }, `node "a" has no exit`},
		{"duplicate node", func(g *Graph[int]) { g.AddNode("a", noop).AddNode("a", noop).AddEdge(START, "a").AddEdge("a", END) }, `already exists`},
		{"reserved name", func(g *Graph[int]) { g.AddNode(END, noop).AddEdge(START, END) }, `reserved`},
		{"unregistered branch", func(g *Graph[int]) {
			g.AddNode("a", noop).AddEdge(START, "a").AddConditionalEdges("a", "nope", map[string]string{"x": END})
		}, `branch "nope" is not registered`},
		{"two exits", func(g *Graph[int]) { g.AddNode("a", noop).AddEdge(START, "a").AddEdge("a", END).AddEdge("a", "a") }, `one exit`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := New[int]()
			tt.build(g)
			_, err := g.Compile(nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// outcomeEvent returns the Outcome recorded last in run's log.
func outcomeEvent(t *testing.T, log Log, run string) Outcome {
	t.Helper()
	evs, err := log.Events(context.Background(), run)
	require.NoError(t, err)
	require.NotEmpty(t, evs)
	last := evs[len(evs)-1]
	require.Equal(t, TypeOutcome, last.Type)
	var o Outcome
	require.NoError(t, json.Unmarshal(last.Result, &o))
	return o
}

func TestInvokeRefusesAnExistingRun(t *testing.T) {
	g := New[int]()
	g.AddNode("a", func(_ context.Context, _ *RunContext, s int) (int, error) { return s + 1, nil })
	g.AddEdge(START, "a").AddEdge("a", END)
	run, err := g.Compile(nil)
	require.NoError(t, err)
	_, out := run.Invoke(context.Background(), "r", 0)
	require.Equal(t, Success, out.Status)
	_, out = run.Invoke(context.Background(), "r", 0)
	assert.Equal(t, Failure, out.Status)
	assert.Contains(t, out.Reason, "Resume it or choose a new id")
}

func TestBranchWithoutRoutesNamesTheNode(t *testing.T) {
	build := func(to string) *Compiled[int] {
		g := New[int]()
		g.AddNode("decide", func(_ context.Context, _ *RunContext, s int) (int, error) { return s + 1, nil })
		g.AddNode("finish", func(_ context.Context, _ *RunContext, s int) (int, error) { return s * 10, nil })
		g.RegisterBranch("pick", func(int) string { return to })
		g.AddEdge(START, "decide").AddConditionalEdges("decide", "pick", nil).AddEdge("finish", END)
		run, err := g.Compile(nil)
		require.NoError(t, err, "with no routes every node counts as reachable")
		return run
	}
	final, out := build("finish").Invoke(context.Background(), "r", 1)
	require.Equal(t, Success, out.Status, out.Reason)
	assert.Equal(t, 20, final)

	_, out = build("summarize").Invoke(context.Background(), "r", 1)
	assert.Equal(t, Failure, out.Status)
	assert.Contains(t, out.Reason, `branch "pick" after decide returned "summarize", which is not a node`)
}

package graph_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/graph"
)

// plan is the state of a tiny Plan-and-Act loop.
type plan struct {
	Goal    string   `json:"goal"`
	Steps   []string `json:"steps"`
	Next    int      `json:"next"`
	History []string `json:"history"`
	Replans int      `json:"replans"`
}

func Example() {
	g := graph.New[plan]()
	g.AddNode("planner", func(ctx context.Context, rc *graph.RunContext, s plan) (plan, error) {
		s.Steps = []string{"search " + s.Goal, "read the best hit"}
		if s.Replans > 0 {
			s.Steps = []string{"search " + s.Goal + " in Japanese", "read the best hit"}
		}
		s.Next = 0
		_ = rc.Usage(120, 30)
		return s, rc.Trace(graph.TypePlan, strings.Join(s.Steps, "; "))
	})
	g.AddNode("executor", func(ctx context.Context, rc *graph.RunContext, s plan) (plan, error) {
		step := s.Steps[s.Next]
		if err := rc.Action("search", map[string]string{"step": step}); err != nil {
			return s, err
		}
		obs := "ok: " + step
		if s.Replans == 0 && s.Next == 0 {
			obs = "ERROR: no hits"
		}
		s.History = append(s.History, obs)
		s.Next++
		return s, rc.Observation("search", obs, !strings.HasPrefix(obs, "ERROR:"), 0)
	})
	g.AddNode("replan", func(ctx context.Context, rc *graph.RunContext, s plan) (plan, error) {
		s.Replans++
		return s, rc.Trace(graph.TypeReplan, "the last step failed")
	})
	g.RegisterBranch("should_replan", func(s plan) string {
		switch {
		case strings.HasPrefix(s.History[len(s.History)-1], "ERROR:"):
			return "replan"
		case s.Next < len(s.Steps):
			return "next"
		}
		return "done"
	})
	g.AddEdge(graph.START, "planner").AddEdge("planner", "executor").AddEdge("replan", "planner")
	g.AddConditionalEdges("executor", "should_replan", map[string]string{
		"replan": "replan", "next": "executor", "done": graph.END})

	run, err := g.Compile(graph.NewMemLog(), graph.WithObserver(func(ev graph.Event) {
		if ev.Type == graph.TypeObservation || ev.Type == graph.TypeReplan {
			fmt.Printf("%s %s: %s%s\n", ev.Node, ev.Type, ev.Observation, ev.Text)
		}
	}))
	if err != nil {
		fmt.Println(err)
		return
	}
	final, outcome := run.Invoke(context.Background(), "example", plan{Goal: "plan-and-act"})
	fmt.Println(outcome.Status, outcome.Steps, "steps,", outcome.ToolCalls, "tool calls,", outcome.Tokens.Total(), "tokens")
	fmt.Println(final.History)
	// Output:
	// executor observation: ERROR: no hits
	// replan replan: the last step failed
	// executor observation: ok: search plan-and-act in Japanese
	// executor observation: ok: read the best hit
	// success 6 steps, 3 tool calls, 300 tokens
	// [ERROR: no hits ok: search plan-and-act in Japanese ok: read the best hit]
}

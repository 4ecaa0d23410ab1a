package react

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/llm/llmtest"
)

// TestGraphsAreCompiledOnce: an agent compiles each of its graphs once
// and every Ask or Answer reuses it, each run in the log under an id of
// its own; an agent without a log keeps no finished run.
func TestGraphsAreCompiledOnce(t *testing.T) {
	fns := vitepress(t)
	log := graph.NewMemLog()
	a := New(fns, Options{Log: log})
	var runs []string
	for _, q := range []string{"How do I enable the local search provider?", "How can I remove the trailing .html from URLs?", "How do I enable the local search provider?"} {
		res, err := a.Answer(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, res.Trace[0].Run)
	}
	if n := a.g.compiles.Load(); n != 1 {
		t.Errorf("%d graphs compiled for three offline answers, want 1", n)
	}
	for i, run := range runs {
		evs, _ := log.Events(context.Background(), run)
		if len(evs) == 0 || evs[len(evs)-1].Type != graph.TypeOutcome {
			t.Errorf("run %d (%s) is not a whole run in the log: %d events", i, run, len(evs))
		}
		if i > 0 && run == runs[i-1] {
			t.Errorf("runs %d and %d share the id %s", i-1, i, run)
		}
	}

	mem := New(fns, Options{})
	res, err := mem.Answer(context.Background(), "How do I enable the local search provider?")
	if err != nil {
		t.Fatal(err)
	}
	if evs, _ := mem.g.mem.Events(context.Background(), res.Trace[0].Run); len(evs) != 0 {
		t.Errorf("an agent without a log kept %d events of a finished run", len(evs))
	}
}

// TestModelLimitsAreThisCallsOptions: the model's limits reach the run as
// call options of the graph compiled once: with one turn, four tool calls
// are the most a run may make.
func TestModelLimitsAreThisCallsOptions(t *testing.T) {
	var calls []llm.ToolCall
	for i := range 6 {
		calls = append(calls, llmtest.Call(fmt.Sprintf("c%d", i), ToolSearch, fmt.Sprintf(`{"query":"sitemap %d","k":2}`, i)))
	}
	m := llmtest.New(llmtest.Calls(calls...), llmtest.Text("Kumo writes a sitemap [1]."), llmtest.Text("Kumo writes a sitemap [1]."))
	a := llmAgent(t, m, LLMOptions{MaxTurns: 1})
	res, err := a.Ask(context.Background(), "How do I generate a sitemap?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Stopped, graph.GuardMaxToolCalls) {
		t.Errorf("stopped %q: want the tool-call limit of one turn (4 calls)", res.Stopped)
	}
	actions := 0
	for _, ev := range res.Trace {
		if ev.Type == graph.TypeAction {
			actions++
		}
	}
	if actions != 4 {
		t.Errorf("%d actions, want 4", actions)
	}
}

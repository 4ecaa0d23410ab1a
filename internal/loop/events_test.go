package loop

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestRunReportsEachStep: a live trace hears every search, evaluation and
// refinement in order, the same ones the result records, then the stop.
func TestRunReportsEachStep(t *testing.T) {
	e := testEngine(t, corpus, Options{})
	var trace []string
	var events []Event
	res, err := e.Run(context.Background(), RunOptions{Goal: deployGoal, Query: "deploy", K: 4, OnEvent: func(ev Event) {
		events = append(events, ev)
		trace = append(trace, fmt.Sprintf("%d:%s", ev.Iteration, ev.Kind))
	}})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i, it := range res.Iterations {
		want = append(want, fmt.Sprintf("%d:search", i+1), fmt.Sprintf("%d:evaluate", i+1))
		if it.Refinement != nil {
			want = append(want, fmt.Sprintf("%d:refine", i+1))
		}
	}
	want = append(want, fmt.Sprintf("%d:stop", len(res.Iterations)))
	if strings.Join(trace, " ") != strings.Join(want, " ") {
		t.Fatalf("trace %v\nwant  %v", trace, want)
	}
	it := 0
	for _, ev := range events {
		switch ev.Kind {
		case EventSearch:
			if ev.Query != res.Iterations[it].Query || ev.NewResults != res.Iterations[it].NewResults {
				t.Errorf("search event %+v, iteration %+v", ev, res.Iterations[it])
			}
		case EventEvaluate:
			if ev.Evaluation.Confidence != res.Iterations[it].Evaluation.Confidence {
				t.Errorf("evaluate event confidence %v, iteration %v", ev.Evaluation.Confidence, res.Iterations[it].Evaluation.Confidence)
			}
			if res.Iterations[it].Refinement == nil {
				it++
			}
		case EventRefine:
			if it+1 < len(res.Iterations) && ev.Refinement.RefinedQuery != res.Iterations[it+1].Query {
				t.Errorf("refine event proposes %q, the next search ran %q", ev.Refinement.RefinedQuery, res.Iterations[it+1].Query)
			}
			it++
		case EventStop:
			if ev.Stopped != res.Stopped {
				t.Errorf("stop event %q, result %q", ev.Stopped, res.Stopped)
			}
		}
	}
}

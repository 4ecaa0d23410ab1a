package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/llm"
)

// call runs one model call of name with args through fns.
func call(t *testing.T, fns *Functions, name, args string) (Outcome, error) {
	t.Helper()
	return fns.Call(context.Background(), llm.ToolCall{ID: "c", Name: name, Arguments: json.RawMessage(args)}, nil)
}

// TestFunctionsAreTheOperationsSchemas: a model is offered each operation
// with exactly the input schema its Def derives (which the MCP server
// lists), and nothing else.
func TestFunctionsAreTheOperationsSchemas(t *testing.T) {
	ts, _ := newToolset(t)
	fns, err := ts.Functions()
	if err != nil {
		t.Fatal(err)
	}
	tools := fns.Tools()
	if len(tools) != len(AgentFunctions) {
		t.Fatalf("%d functions, want %v", len(tools), AgentFunctions)
	}
	for i, tl := range tools {
		d, ok := DefOf(AgentFunctions[i], DefOptions{})
		if !ok || tl.Name != d.Name || tl.Description != d.Description {
			t.Fatalf("function %d is %s, want the Def of %s", i, tl.Name, AgentFunctions[i])
		}
		want, _ := json.Marshal(d.Input)
		if string(tl.Parameters) != string(want) {
			t.Errorf("%s: parameters\n got %s\nwant %s", tl.Name, tl.Parameters, want)
		}
	}
	if _, err := ts.Functions(NameIndex); err == nil {
		t.Error("sagasu_index was offered to a model; agents may only read and judge")
	}
}

// TestFunctionsCallTheOperations: a query returns ranked passages and
// pages with a cursor; a document comes back as its section's passages,
// resolved from a unique end of its URI as sagasu_get resolves it; a bad
// call is refused in the words of the one argument check.
func TestFunctionsCallTheOperations(t *testing.T) {
	ts, _ := newToolset(t)
	fns, err := ts.Functions()
	if err != nil {
		t.Fatal(err)
	}
	first, err := call(t, fns, NameQuery, `{"query":"site","k":2}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Hits) != 2 || first.NextCursor == "" {
		t.Fatalf("first page: %d hits, cursor %q; want 2 and a cursor", len(first.Hits), first.NextCursor)
	}
	obs := Observation(first, []int{1, 2})
	if !strings.Contains(obs, "[1] ") || !strings.Contains(obs, "[2] ") || !strings.Contains(obs, first.NextCursor) {
		t.Errorf("observation does not number the passages or give the cursor:\n%s", obs)
	}
	next, err := call(t, fns, NameQuery, `{"query":"site","k":2,"cursor":"`+first.NextCursor+`"}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(next.Hits) == 0 || next.Hits[0].Chunk.ID == first.Hits[0].Chunk.ID || next.Hits[0].Chunk.ID == first.Hits[1].Chunk.ID {
		t.Errorf("the cursor did not lead to the next page: %+v", next.Hits)
	}
	if _, err := call(t, fns, NameQuery, `{"query":"theme","k":2,"cursor":"`+first.NextCursor+`"}`); err == nil || !strings.Contains(err.Error(), "different request") {
		t.Errorf("a cursor of another query was taken: %v", err)
	}

	doc, err := call(t, fns, NameGet, `{"source":"deploy.md","section":"GitHub Pages"}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Hits) != 1 || !strings.Contains(doc.Hits[0].Chunk.Text, "pages action") || !strings.HasSuffix(doc.Hits[0].Source.URI, "deploy.md") {
		t.Errorf("section GitHub Pages: %+v", doc.Hits)
	}
	if !strings.Contains(doc.Text, "§ Deploy Your Site > GitHub Pages") {
		t.Errorf("the text does not say which section: %q", doc.Text)
	}
	if _, err := call(t, fns, NameGet, `{"source":"deploy.md","section":"Nowhere"}`); err == nil || !strings.Contains(err.Error(), "its sections are") {
		t.Errorf("a missing section: %v", err)
	}

	for args, want := range map[string]string{
		`{"query":"site","k":51}`:       "k: got 51; give a whole number from 1 to 50",
		`{"query":"site","bogus":true}`: "bogus: unknown argument",
		`{"k":3}`:                       "query: missing; it is required",
	} {
		if _, err := call(t, fns, NameQuery, args); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
}

// TestFunctionsEvaluateTheRunsPassages: with neither results nor chunk IDs,
// a model's evaluation judges the passages its run found.
func TestFunctionsEvaluateTheRunsPassages(t *testing.T) {
	ts, _ := newToolset(t)
	fns, err := ts.Functions()
	if err != nil {
		t.Fatal(err)
	}
	q, err := call(t, fns, NameQuery, `{"query":"sitemap hostname","k":1}`)
	if err != nil {
		t.Fatal(err)
	}
	none, err := fns.Call(context.Background(), llm.ToolCall{Name: NameEvaluate, Arguments: json.RawMessage(`{"goal":"generate a sitemap"}`)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	found, err := fns.Call(context.Background(), llm.ToolCall{Name: NameEvaluate, Arguments: json.RawMessage(`{"goal":"generate a sitemap"}`)}, q.Hits)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(found.Text, "found: ") || strings.Contains(none.Text, "found: ") {
		t.Errorf("the run's passages were not judged:\nwith them: %s\nwithout: %s", found.Text, none.Text)
	}
}

// TestEvaluateTakesSagasusOwnResults: what sagasu_query returns and what
// sagasu_search returns (summary's topResults, detailed's results) go into
// sagasu_evaluate as they came back, through the same argument check as
// an MCP client's call, and are judged alike; a result without text or
// chunk is refused by name.
func TestEvaluateTakesSagasusOwnResults(t *testing.T) {
	ts, _ := newToolset(t)
	ctx := context.Background()
	def, _ := DefOf(NameEvaluate, DefOptions{})
	judge := func(results any) (float64, error) {
		raw, err := json.Marshal(map[string]any{"goal": "generate a sitemap with a hostname", "results": results})
		if err != nil {
			t.Fatal(err)
		}
		if err := llm.CheckArgs(NameEvaluate, def.Input, raw); err != nil {
			return 0, err
		}
		var in EvaluateInput
		if err := json.Unmarshal(raw, &in); err != nil {
			t.Fatal(err)
		}
		ev, err := ts.Evaluate(ctx, in)
		return ev.Confidence, err
	}
	q, err := ts.Query(ctx, QueryInput{Query: "sitemap hostname", K: 2})
	if err != nil {
		t.Fatal(err)
	}
	fromQuery, err := judge(q.Output(len(q.Hits), NoLimit, "").Results)
	if err != nil {
		t.Fatalf("sagasu_query's results: %v", err)
	}
	s, err := ts.Search(ctx, SearchInput{Goal: "generate a sitemap with a hostname", Query: "sitemap hostname", Options: &SearchOptions{K: 2}})
	if err != nil {
		t.Fatal(err)
	}
	summary := s.Output(len(s.Hits), NoLimit, "")
	fromSummary, err := judge(summary.Results)
	if err != nil {
		t.Fatalf("sagasu_search's summary results: %v", err)
	}
	s.Settings.Detail = ModeDetailed
	detailed := s.Output(len(s.Hits), 20, "") // snippets cut short: read whole from the index
	fromDetailed, err := judge(detailed.Results)
	if err != nil {
		t.Fatalf("sagasu_search's detailed results: %v", err)
	}
	if fromQuery == 0 || fromSummary != fromQuery || fromDetailed != fromQuery {
		t.Errorf("confidence: query %.2f, summary %.2f, detailed %.2f; want the same, above 0", fromQuery, fromSummary, fromDetailed)
	}
	seed, err := judge([]map[string]any{{"content": q.Hits[0].Chunk.Text, "score": 1, "metadata": map[string]any{"uri": "sitemap.md"}}})
	if err != nil || seed == 0 {
		t.Errorf("the seed's shape: confidence %.2f, %v", seed, err)
	}
	if _, err := judge([]map[string]any{{"score": 1}}); err == nil || !strings.Contains(err.Error(), "results[0]: no text") {
		t.Errorf("a result without text or chunk: %v", err)
	}
}

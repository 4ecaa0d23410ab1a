package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sagasu-dev/sagasu/internal/budget"
)

// Every argument of every operation says what it is: a model reads nothing
// else about it.
func TestEveryArgumentIsDescribed(t *testing.T) {
	for _, op := range Ops(DefOptions{}) {
		var walk func(path string, s *jsonschema.Schema)
		walk = func(path string, s *jsonschema.Schema) {
			for name, p := range s.Properties {
				if strings.TrimSpace(p.Description) == "" {
					t.Errorf("%s: argument %s%s has no description", op.Name, path, name)
				}
				walk(path+name+".", p)
				if p.Items != nil {
					walk(path+name+"[].", p.Items)
				}
			}
		}
		walk("", op.Input)
	}
}

// An argument is checked once, by the operation's schema, on every face:
// what the schema refuses never runs, and the error names the argument.
func TestCallChecksArgumentsOnce(t *testing.T) {
	ts, _ := newToolset(t)
	ctx := context.Background()
	reg := ts.Registry(DefOptions{})
	for _, tc := range []struct {
		op, args, names string
	}{
		{NameQuery, `{"query":"x","k":51}`, "k"},
		{NameQuery, `{"query":"x","mmr":2}`, "mmr"},
		{NameQuery, `{"query":""}`, "query"},
		{NameQuery, `{"query":"x","types":["pdf"]}`, "types"},
		{NameSearch, `{"query":"x","options":{"k":11}}`, "k"},
		{NameSearch, `{"query":"x","options":{"detail":"verbose"}}`, "detail"},
		{NameLoop, `{"goal":"x","maxIterations":11}`, "maxIterations"},
		{NameGet, `{"source":"a.md","maxTokens":10}`, "maxTokens"},
		{NameEvaluate, `{"goal":""}`, "goal"},
		{NameQuery, `{"query":"x","glob":"[a"}`, "glob"},
	} {
		_, err := reg.Call(ctx, nil, tc.op, json.RawMessage(tc.args))
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), tc.names) {
			t.Errorf("%s %s: %v, want an invalid argument naming %s", tc.op, tc.args, err, tc.names)
		}
	}
}

// Each operation answers one JSON shape, whatever face asks: the output
// its schema describes, with its measured size written in.
func TestRepliesMatchTheirSchemas(t *testing.T) {
	ts, _ := newToolset(t)
	ctx := context.Background()
	reg := ts.Registry(DefOptions{})
	counter, err := budget.New(budget.Options{Margin: budget.DefaultMargin})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ op, args string }{
		{NameSearch, `{"query":"sitemap hostname","goal":"generate a sitemap"}`},
		{NameSearch, `{"query":"sitemap","options":{"detail":"full","k":2}}`},
		{NameQuery, `{"query":"sitemap","k":3}`},
		{NameGet, `{"source":"sitemap.md"}`},
		{NameList, `{}`},
		{NameEvaluate, `{"goal":"generate a sitemap","results":[{"text":"a sitemap needs a hostname","rank":1,"relevance":1}]}`},
		{NameRefine, `{"goal":"generate a sitemap","currentQuery":"sitemap","missingAspects":["hostname"]}`},
		{NameLoop, `{"goal":"generate a sitemap","maxIterations":2}`},
		{NameExecuteStage, `{"goal":"generate a sitemap and deploy"}`},
		{NameReadCache, `{}`},
	} {
		op, _ := reg.Find(tc.op)
		reply, err := op.Call(ctx, &Env{Counter: counter}, json.RawMessage(tc.args))
		if err != nil {
			t.Errorf("%s %s: %v", tc.op, tc.args, err)
			continue
		}
		resolved, err := op.Output.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: output schema: %v", tc.op, err)
		}
		var v map[string]any
		if err := json.Unmarshal(reply.JSON, &v); err != nil {
			t.Fatalf("%s: %v", tc.op, err)
		}
		if err := resolved.Validate(v); err != nil {
			t.Errorf("%s: the reply breaks its output schema: %v", tc.op, err)
		}
		// The size stated is the size measured with a longer number in its
		// place: never below the truth, and above it by a few tokens.
		measured := counter.Count(mustJSON(map[string]any{"content": append([]any{map[string]any{"type": "text", "text": reply.Text}}, links(reply.Links)...), "structuredContent": reply.JSON}))
		if got := int(v["estimatedTokens"].(float64)); got != reply.Tokens || got < measured || got-measured > 8+measured/50 {
			t.Errorf("%s: estimatedTokens %d, reply says %d, measured %d", tc.op, got, reply.Tokens, measured)
		}
		if reply.Text == "" {
			t.Errorf("%s: no text", tc.op)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func links(ls []Link) []any {
	var out []any
	for _, l := range ls {
		out = append(out, map[string]any{"type": "resource_link", "uri": l.URI, "name": l.Name, "mimeType": l.MIME})
	}
	return out
}

// A search's reply names one next step and says it once: no second
// recommendation beside it, and no refinement beside a use of the results.
func TestSearchSaysOneNextStep(t *testing.T) {
	ts, _ := newToolset(t)
	ctx := context.Background()
	reg := ts.Registry(DefOptions{})
	for _, args := range []string{
		`{"query":"sitemap hostname","goal":"generate a sitemap"}`,
		`{"query":"theme look","goal":"generate a sitemap and deploy to GitHub Pages"}`,
		`{"query":"theme look","goal":"generate a sitemap and deploy to GitHub Pages","options":{"detail":"detailed"}}`,
	} {
		reply, err := reg.Call(ctx, nil, NameSearch, json.RawMessage(args))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(reply.Text, "next:"); n != 1 {
			t.Errorf("%s: %d next steps in the text:\n%s", args, n, reply.Text)
		}
		for _, word := range []string{"suggestedMode", "hints", "recommendation", "primaryAction"} {
			if strings.Contains(string(reply.JSON), `"`+word+`"`) {
				t.Errorf("%s: a second recommendation (%s) in the reply", args, word)
			}
		}
		out := reply.Out.(SearchOutput)
		if out.Next.Action == "" || out.Next.Tool == "" && out.Next.Action != "stop" {
			t.Errorf("%s: next %+v names no tool", args, out.Next)
		}
		seen := map[int64]bool{}
		for _, r := range out.Results {
			if seen[r.ChunkID] {
				t.Errorf("%s: chunk %d twice", args, r.ChunkID)
			}
			seen[r.ChunkID] = true
			if r.Relevance < 0 || r.Relevance > 1 {
				t.Errorf("%s: relevance %v outside 0..1", args, r.Relevance)
			}
		}
	}
}

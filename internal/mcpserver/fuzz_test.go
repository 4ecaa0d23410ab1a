package mcpserver

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// FuzzCursor opens arbitrary cursors: it never panics, every refusal
// names the cursor argument, and a cursor the server issued opens to the
// state it was issued with.
func FuzzCursor(f *testing.F) {
	now := time.Unix(1_800_000_000, 0)
	c, err := tools.NewCursors([]byte("fuzz key of thirty-two bytes ...."), time.Hour, func() time.Time { return now })
	if err != nil {
		f.Fatal(err)
	}
	good := c.Issue(tools.CursorState{Tool: ToolQuery, Args: "abc", Offset: 10, Seen: "def"}, now)
	for _, seed := range []string{good, good[:len(good)-3] + "AAA", "garbage", "", ".", "e30.", good + ".x", strings.Replace(good, ".", "..", 1)} {
		f.Add(seed, ToolQuery, "abc", 10)
	}
	f.Add(good, ToolSearch, "abc", 0)
	f.Add(good, ToolQuery, "other", -5)
	f.Fuzz(func(t *testing.T, tok, tool, args string, offset int) {
		if _, err := c.Open(tok, tool, args); err != nil && !strings.HasPrefix(err.Error(), "cursor: ") {
			t.Fatalf("a refused cursor does not name the cursor: %v", err)
		}
		if !utf8.ValidString(tool) || !utf8.ValidString(args) {
			return // JSON carries text; the server's tools and hashes are ASCII
		}
		want := tools.CursorState{Tool: tool, Args: args, Offset: abs(offset), Seen: args + tool}
		got, err := c.Open(c.Issue(want, now), tool, args)
		want.Issued = now.Unix()
		if err != nil || got != want {
			t.Fatalf("cursor did not round-trip: issued %+v, opened %+v, %v", want, got, err)
		}
		if _, err := c.Open(c.Issue(want, now), tool+"x", args); err == nil || !strings.HasPrefix(err.Error(), "cursor: ") {
			t.Fatalf("a cursor opened for another tool: %v", err)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		n = -n
	}
	return max(n, 0) // -MinInt is MinInt
}

// toolInputs are the input structs the tools decode their arguments into.
var toolInputs = map[string]reflect.Type{
	ToolIndex:        reflect.TypeFor[tools.IndexInput](),
	ToolDelete:       reflect.TypeFor[tools.DeleteInput](),
	ToolQuery:        reflect.TypeFor[tools.QueryInput](),
	ToolSearch:       reflect.TypeFor[tools.SearchInput](),
	ToolGet:          reflect.TypeFor[tools.GetInput](),
	ToolList:         reflect.TypeFor[tools.ListInput](),
	ToolEvaluate:     reflect.TypeFor[tools.EvaluateInput](),
	ToolRefine:       reflect.TypeFor[tools.RefineInput](),
	ToolExecuteStage: reflect.TypeFor[tools.StageInput](),
	ToolLoop:         reflect.TypeFor[tools.LoopInput](),
	ToolReadCache:    reflect.TypeFor[tools.ReadCacheInput](),
}

// argSeeds are arguments good and bad for the tools.
var argSeeds = []string{
	`{}`, `[]`, `null`, `"x"`, `{"query":"sidebar"}`, `{"query":"sidebar","k":2,"mode":"keyword"}`,
	`{"goal":"configure the sidebar","query":"sidebar","options":{"k":3,"detail":"detailed"}}`,
	`{"goal":"g","query":"q","options":{"k":-1}}`, `{"goal":"g","query":"q","options":{"k":null}}`,
	`{"goal":"g","query":"q","options":{"k":1.0}}`, `{"goal":"g","query":"q","options":{"k":1e2}}`,
	`{"query":"x","k":9223372036854775808}`, `{"query":"x","types":["file",3]}`, `{"query":"x","bogus":1}`,
	`{"source":"guide1.md","maxTokens":500}`, `{"glob":"[","limit":5}`, `{"type":"github"}`,
	`{"goal":"g","chunkIds":[1,2,3]}`, `{"goal":"g","results":[{"content":"c","metadata":{"a":{"b":[1]}}}]}`,
	`{"currentQuery":"q","goal":"g","strategy":"pivot"}`, `{"goal":"g","aspects":["a","b"]}`,
	`{"planId":"plan-x","stageIndex":3}`, `{"kind":"stages","limit":3}`, `{"id":"../../etc/passwd"}`,
	`{"text":"# Note\n\nsidebar words","chunkSize":64,"chunkOverlap":8}`, `{"file":"/etc/passwd"}`,
	`{"files":["../*"]}`, `{"sources":["guide1.md"],"dryRun":true}`, `{"glob":"**","dryRun":true}`,
	`{"query":"x","cursor":"garbage"}`, `{"goal":"g","query":"q","cursor":"e30.AAAA"}`,
	`{"a":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`,
}

// FuzzToolArguments sends arbitrary JSON arguments to every tool through
// the SDK client and the server's real decode path (the argument check,
// the SDK's validation and decoding, the handler, budget fitting): no call
// panics or breaks the protocol, no answer shows validator text, and every
// result fits its budget.
func FuzzToolArguments(f *testing.F) {
	fx := newFixture(f, Options{})
	fx.add(512, english(1, 3, 20), english(2, 2, 10), japanese(3, 2, 6))
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range toolInputs {
			if !yield(n) {
				return
			}
		}
	})
	for i, s := range argSeeds {
		f.Add(uint8(i), s)
	}
	f.Fuzz(func(t *testing.T, which uint8, raw string) {
		if !json.Valid([]byte(raw)) {
			return // the client cannot send it; the SDK's JSON-RPC layer answers it
		}
		for _, remote := range []string{"http", "github:", "gist:"} {
			if strings.Contains(raw, remote) {
				return // sagasu_index would fetch from the network
			}
		}
		tool := names[int(which)%len(names)]
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		res, err := fx.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(raw)})
		if err != nil {
			t.Fatalf("%s(%s): protocol error: %v", tool, raw, err)
		}
		got := text(res)
		if res.IsError {
			for _, bad := range rawText {
				if strings.Contains(got, bad) {
					t.Fatalf("%s(%s): the answer shows validator text %q: %s", tool, raw, bad, got)
				}
			}
			if got == "" {
				t.Fatalf("%s(%s): an error with no text", tool, raw)
			}
			return
		}
		var sc struct {
			EstimatedTokens int `json:"estimatedTokens"`
		}
		rawSC, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(rawSC, &sc); err != nil || sc.EstimatedTokens == 0 || sc.EstimatedTokens+tools.Envelope > fx.srv.limits.Cap {
			t.Fatalf("%s(%s): result measures %d tokens against the cap %d (%v)", tool, raw, sc.EstimatedTokens, fx.srv.limits.Cap, err)
		}
	})
}

// FuzzCheckArgs checks the argument check against the SDK's own validator
// (fast, without calls): it never panics, refuses everything the SDK's
// validator refuses, and what it passes decodes into the tool's input
// struct.
func FuzzCheckArgs(f *testing.F) {
	fx := newFixture(f, Options{})
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range toolInputs {
			if !yield(n) {
				return
			}
		}
	})
	for i, s := range argSeeds {
		f.Add(uint8(i), s)
	}
	f.Fuzz(func(t *testing.T, which uint8, raw string) {
		tool := names[int(which)%len(names)]
		op, _ := fx.srv.Ops().Find(tool)
		schema := op.Input
		mine := llm.CheckArgs(tool, schema, json.RawMessage(raw))
		if mine != nil {
			if !strings.Contains(mine.Error(), ": ") {
				t.Fatalf("%s(%s): %q names no argument", tool, raw, mine)
			}
			return
		}
		resolved, err := schema.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			if strings.TrimSpace(raw) == "" {
				return
			}
			t.Fatalf("%s(%s): passed, but is no JSON object: %v", tool, raw, err)
		}
		var v any = m
		if m == nil {
			v = map[string]any{}
		}
		if err := resolved.Validate(&v); err != nil {
			t.Fatalf("%s(%s): passed, but the SDK refuses it: %v", tool, raw, err)
		}
		in := reflect.New(toolInputs[tool])
		if err := json.Unmarshal([]byte(raw), in.Interface()); err != nil {
			t.Fatalf("%s(%s): passed, but does not decode into %s: %v", tool, raw, toolInputs[tool], err)
		}
	})
}

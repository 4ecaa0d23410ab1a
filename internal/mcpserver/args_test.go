package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/doc"
)

// rawText is what validators print and an agent cannot act on.
var rawText = []string{"validating", "<invalid reflect.Value>", "json: cannot unmarshal", "%!", "/properties/", "1.000000"}

// TestArgumentErrorsSayWhatIsAllowed sends every kind of bad argument
// through the SDK client and checks that the answer names the argument,
// shows what was given and says what is allowed.
func TestArgumentErrorsSayWhatIsAllowed(t *testing.T) {
	f := newFixture(t, Options{})
	f.add(512, english(1, 3, 20))
	for _, tc := range []struct {
		kind, tool string
		args       any
		want       string // the whole answer
	}{
		{"minimum", ToolSearch, map[string]any{"goal": "g", "query": "x", "options": map[string]any{"k": -1}},
			"options.k: got -1; give a whole number from 1 to 10"},
		{"maximum", ToolQuery, map[string]any{"query": "x", "k": 51}, "k: got 51; give a whole number from 1 to 50"},
		{"huge number", ToolQuery, map[string]any{"query": "x", "k": 1e300}, "k: got 1e+300; give a whole number from 1 to 50"},
		{"fraction for a whole number", ToolList, map[string]any{"limit": 2.5}, "limit: got 2.5; give a whole number from 1 to 200"},
		{"number range", ToolEvaluate, map[string]any{"goal": "g", "minConfidence": 2}, "minConfidence: got 2; give a number from 0 to 1"},
		{"string for a number", ToolSearch, map[string]any{"goal": "g", "query": "x", "options": map[string]any{"k": "five"}},
			`options.k: got "five"; give a whole number from 1 to 10`},
		{"null", ToolSearch, map[string]any{"goal": "g", "query": "x", "options": map[string]any{"k": nil}},
			"options.k: got null; give a whole number from 1 to 10, or leave options.k out"},
		{"string for a list", ToolQuery, map[string]any{"query": "x", "types": "file"}, `types: got "file"; give a list of one of "file", "text", "url", "github", "gist"`},
		{"list item", ToolQuery, map[string]any{"query": "x", "types": []any{"file", 3}}, `types[1]: got 3; give one of "file", "text", "url", "github", "gist"`},
		{"string for an object", ToolSearch, map[string]any{"goal": "g", "query": "x", "options": "zz"},
			`options: got "zz"; give an object with k, detail, mode, includeDebug`},
		{"boolean", ToolQuery, map[string]any{"query": "x", "wholeSection": "yes"}, `wholeSection: got "yes"; give true or false`},
		{"enum", ToolSearch, map[string]any{"goal": "g", "query": "x", "options": map[string]any{"detail": "verbose"}},
			`options.detail: got "verbose"; give one of "summary", "detailed", "full"`},
		{"enum of a tool", ToolReadCache, map[string]any{"kind": "all"},
			`kind: got "all"; give one of "evaluations", "refinements", "stages", "sessions"`},
		{"empty string", ToolSearch, map[string]any{"goal": "g", "query": ""}, `query: got ""; give a non-empty string`},
		{"required", ToolSearch, map[string]any{"goal": "g"},
			"query: missing; it is required: give a non-empty string (the words to search for)"},
		{"a list item without text", ToolEvaluate, map[string]any{"goal": "g", "results": []any{map[string]any{"score": 1}}},
			"results[0]: no text: give content (or text), or the chunkId of a search result"},
		{"unknown argument", ToolQuery, map[string]any{"query": "x", "bogus": 1},
			"bogus: unknown argument; sagasu_query takes query, k, mode, types, glob, sourceIds, wholeSource, wholeSection, mmr, cursor"},
		{"unknown nested field", ToolSearch, map[string]any{"goal": "g", "query": "x", "options": map[string]any{"K": 3}},
			"options.K: unknown field; options takes k, detail, mode, includeDebug"},
		{"not an object", ToolList, json.RawMessage(`[1,2]`), "arguments: got [1,2]; give an object with type, glob, limit, cursor"},
		{"schema range set by the server", ToolGet, map[string]any{"source": "x", "maxTokens": 3},
			"maxTokens: got 3; give a whole number from 500 to 25000"},
		// The tools' own checks, which no schema can say.
		{"tool: overlap against size", ToolIndex, map[string]any{"text": "hello", "chunkSize": 100, "chunkOverlap": 60},
			"chunkOverlap: got 60; give a whole number from 0 to 49, below half of chunkSize 100"},
		{"source type", ToolQuery, map[string]any{"query": "x", "types": []any{"pdf"}},
			`types[0]: got "pdf"; give one of "file", "text", "url", "github", "gist"`},
		{"tool: glob", ToolList, map[string]any{"glob": "["},
			`glob: glob pattern "[": unclosed character class "[" (add "]", or write "\[" for a literal "["); give a pattern such as docs/**/*.md`},
		{"tool: cursor", ToolQuery, map[string]any{"query": "x", "cursor": "garbage"},
			"cursor: invalid cursor: it was altered, or it comes from another sagasu server (cursors last as long as the server that issued them); repeat the call without a cursor"},
		{"tool: nothing to delete", ToolDelete, map[string]any{},
			`nothing to delete: name the sources (by ID or URI) in "sources", or give a "glob"`},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			res, _, _ := f.call(tc.tool, tc.args)
			got := text(res)
			if !res.IsError || got != tc.want {
				t.Errorf("%s(%v): isError %v\n got %q\nwant %q", tc.tool, tc.args, res.IsError, got, tc.want)
			}
			for _, raw := range rawText {
				if strings.Contains(got, raw) {
					t.Errorf("the answer shows validator text %q: %s", raw, got)
				}
			}
		})
	}
	// Several problems are listed together.
	res, _, _ := f.call(ToolQuery, map[string]any{"k": 0, "mode": "fast"})
	want := "3 problems with the arguments of sagasu_query:\n" +
		"query: missing; it is required: give a non-empty string (what to search for)\n" +
		"k: got 0; give a whole number from 1 to 50\n" +
		`mode: got "fast"; give one of "keyword", "semantic", "hybrid"`
	if got := text(res); !res.IsError || got != want {
		t.Errorf("several problems:\n got %q\nwant %q", got, want)
	}
	// Still serving, and good arguments still pass.
	if sc, _ := f.ok(ToolQuery, map[string]any{"query": "sidebar", "k": 2, "types": []string{"file"}}); len(list(sc, "results")) != 2 {
		t.Errorf("a good query after bad ones: %v", sc)
	}
}

// TestPathsOutsideRootsAnswerAlike checks that a path outside the roots is
// answered the same whether or not it exists, and a missing path inside
// them is called missing.
func TestPathsOutsideRootsAnswerAlike(t *testing.T) {
	f := newFixture(t, Options{})
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "real.md"), []byte("# Real\n\nwords\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	answer := func(args map[string]any) string {
		res, _, _ := f.call(ToolIndex, args)
		if !res.IsError {
			t.Fatalf("index %v succeeded", args)
		}
		return text(res)
	}
	real := answer(map[string]any{"file": filepath.Join(outside, "real.md")})
	missing := answer(map[string]any{"file": filepath.Join(outside, "fake.md")})
	if strings.Replace(real, "real.md", "fake.md", 1) != missing {
		t.Errorf("outside the roots, an existing and a missing file are told apart:\n%s\n%s", real, missing)
	}
	if want := fmt.Sprintf(`file: path %q is not inside the allowed roots (%s)`, filepath.Join(outside, "real.md"), strings.Join(f.srv.tools.Roots(), ", ")); !strings.HasPrefix(real, want) {
		t.Errorf("outside answer %q\nwant it to start %q", real, want)
	}
	if got := answer(map[string]any{"files": []string{"nothere.md"}}); !strings.HasPrefix(got, `files[0]: path "nothere.md" does not exist`) {
		t.Errorf("missing inside the roots: %q", got)
	}
	if got := answer(map[string]any{"files": []string{filepath.Join(outside, "*.md")}}); !strings.Contains(got, "is not inside the allowed roots") {
		t.Errorf("glob outside the roots: %q", got)
	}
}

func TestDeleteTool(t *testing.T) {
	tight, err := budget.WithCap(2500)
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, Options{Limits: tight})
	var ds []doc.Document
	for i := range 120 {
		d := english(i, 1, 5)
		d.URI = filepath.Join(f.dir, "docs", fmt.Sprintf("guide%d.md", i))
		d.Title = strings.Repeat("A long title for the budget ", 4) + fmt.Sprint(i)
		ds = append(ds, d)
	}
	f.add(512, ds...)
	outside := filepath.Join(t.TempDir(), "secret.md")
	f.add(512, doc.Document{URI: outside, Type: doc.TypeFile, Format: doc.FormatMarkdown, Title: "Secret", Content: "# Secret\n\nwords\n"})
	f.add(512, doc.Document{URI: "text:note", Type: doc.TypeText, Format: doc.FormatMarkdown, Title: "Note", Content: "# Note\n\nwords\n"})

	// Refused outside the roots, whether named or globbed; nothing goes.
	f.fails(ToolDelete, map[string]any{"sources": []string{"secret.md"}}, "sources[0]: path "+fmt.Sprintf("%q", outside)+" is not inside the allowed roots")
	f.fails(ToolDelete, map[string]any{"glob": "**/*.md"}, "narrow the glob (nothing was deleted)")
	f.fails(ToolDelete, map[string]any{"sources": []string{"nope.md"}}, "sources[0]: ")

	// A dry run lists, fitted to the budget, and deletes nothing.
	sc, n := f.ok(ToolDelete, map[string]any{"glob": "**/docs/*.md", "dryRun": true})
	checkBudget(t, "dry run", sc, n, tight.Cap)
	shown := len(list(sc, "sources"))
	if sc["dryRun"] != true || num(sc, "deleted") != 0 || shown == 0 || shown+num(sc, "omittedSources") != 120 {
		t.Fatalf("dry run: %d shown + %d omitted, deleted %d: %v", shown, num(sc, "omittedSources"), num(sc, "deleted"), sc)
	}
	if idx := sc["index"].(map[string]any); int(idx["sources"].(float64)) != 122 {
		t.Fatalf("the dry run changed the index: %v", idx)
	}

	// Refused while an index run holds the writer lock.
	unlock, err := f.store.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	f.fails(ToolDelete, map[string]any{"glob": "**/docs/*.md"}, "wait for it to finish")
	unlock()

	sc, n = f.ok(ToolDelete, map[string]any{"glob": "**/docs/*.md", "sources": []string{"text:note"}})
	checkBudget(t, "delete", sc, n, tight.Cap)
	if num(sc, "deleted") != 121 || sc["index"].(map[string]any)["sources"].(float64) != 1 {
		t.Fatalf("delete: %v", sc)
	}
	if q, _ := f.ok(ToolList, map[string]any{}); len(list(q, "sources")) != 1 {
		t.Errorf("after the delete the index lists %v", q["sources"])
	}
}

// TestCallsRaceFree runs calls of several clients at once (go test -race
// finds what they share unguarded).
func TestCallsRaceFree(t *testing.T) {
	f := newFixture(t, Options{})
	f.add(512, english(1, 4, 30), english(2, 4, 30), japanese(3, 3, 10))
	ctx := context.Background()
	errs := make(chan error, 4)
	for c := range 4 {
		go func() {
			ct, st := mcp.NewInMemoryTransports()
			ss, err := f.srv.mcp.Connect(ctx, st, nil)
			if err != nil {
				errs <- err
				return
			}
			defer ss.Close()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil)
			if err != nil {
				errs <- err
				return
			}
			defer cs.Close()
			for i := range 10 {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolSearch, Arguments: map[string]any{
					"goal": "configure the sidebar", "query": fmt.Sprintf("sidebar option%d", c*10+i), "options": map[string]any{"detail": "detailed"}}})
				if err != nil || res.IsError {
					errs <- fmt.Errorf("client %d call %d: %v %v", c, i, err, res)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// deployDocs are pages that answer a two-part goal on two pages, so a
// loop needs more than one search.
func deployDocs() []doc.Document {
	page := func(uri, content string) doc.Document {
		return doc.Document{URI: uri, Type: doc.TypeFile, Format: doc.FormatMarkdown, Title: strings.TrimPrefix(strings.SplitN(content, "\n", 2)[0], "# "), Content: content}
	}
	return []doc.Document{
		page("guide/deploy.md", "# Deploy Your Site\n\nBuild the site and upload the dist folder.\n\n## GitHub Pages\n\nA workflow builds the site and publishes it with the pages action.\n\n## Netlify\n\nConnect the repository and set the build command.\n"),
		page("guide/sitemap.md", "# Sitemap Generation\n\nSet sitemap.hostname in the config to write sitemap.xml when the site is built.\n\n## Options\n\nThe sitemap options go to the generator.\n"),
		page("guide/routing.md", "# Routing\n\nPages map to files; the site uses file-based routing.\n\n## Clean URLs\n\nSet cleanUrls to serve pages without .html.\n"),
		page("guide/theme.md", "# Theme\n\nThe theme decides how the pages of the site look.\n"),
	}
}

const deployGoal = "deploy to GitHub Pages and generate a sitemap"

// TestLoopOverMCP: sagasu_loop runs the loop to its end within maxIterations,
// its answer measures within the cap even when the merged chunks are far
// larger, maxIterations beyond the hard cap is refused by name, and the
// loop is one session in the agent cache, readable with sagasu_read_cache
// by record ID and by session ID.
func TestLoopOverMCP(t *testing.T) {
	f := newFixture(t, Options{})
	f.add(512, deployDocs()...)
	sc, n := f.ok(ToolLoop, map[string]any{"goal": deployGoal, "query": "deploy", "maxIterations": 3})
	checkBudget(t, "sagasu_loop", sc, n, f.srv.limits.Cap)
	its := list(sc, "iterations")
	if len(its) < 2 || len(its) > 3 {
		t.Fatalf("%d iterations; want 2 or 3 (one search finds one of the two pages; maxIterations 3)", len(its))
	}
	found := map[string]bool{}
	for _, r := range list(sc, "results") {
		found[r.(map[string]any)["source"].(map[string]any)["uri"].(string)] = true
	}
	if !found["guide/deploy.md"] || !found["guide/sitemap.md"] {
		t.Errorf("results from %v; want both the deploy and the sitemap page", found)
	}
	session, _ := sc["sessionId"].(string)
	record, _ := sc["sessionRecord"].(string)
	if !strings.HasPrefix(session, "mcp-") || !strings.HasPrefix(record, "session-") {
		t.Fatalf("sessionId %q, sessionRecord %q", session, record)
	}
	for _, by := range []map[string]any{{"id": record}, {"sessionId": session}} {
		rc, _ := f.ok(ToolReadCache, by)
		recs := list(rc, "records")
		if len(recs) != 1 {
			t.Fatalf("read_cache %v: %d records", by, len(recs))
		}
		data := recs[0].(map[string]any)["data"].(map[string]any)
		if len(list(data, "iterations")) != len(its) || data["done"] != true || data["sessionId"] != session {
			t.Errorf("read_cache %v: the session holds %d iterations, done %v, session %v; want %d, true, %s",
				by, len(list(data, "iterations")), data["done"], data["sessionId"], len(its), session)
		}
	}
	f.fails(ToolLoop, map[string]any{"goal": deployGoal, "maxIterations": tools.MaxLoopIterations + 1}, "maxIterations")

	// Long chunks: ten of them whole would be far beyond the cap.
	big := newFixture(t, Options{})
	big.add(4000, english(1, 4, 900), english(2, 4, 900), english(3, 4, 900))
	sc, n = big.ok(ToolLoop, map[string]any{"goal": "configure the sidebar navigation links", "query": "sidebar configuration", "k": 10})
	checkBudget(t, "sagasu_loop over long chunks", sc, n, big.srv.limits.Cap)
	if sc["truncated"] != true && num(sc, "omittedResults") == 0 {
		t.Errorf("the long chunks were neither shortened nor left out (%d tokens)", n)
	}
}

// TestEvaluateTakesResultsOverTheWire: the results sagasu_query,
// sagasu_search (summary, detailed and full), sagasu_plan_execute_stage
// and sagasu_loop sent go back into sagasu_evaluate exactly as the client
// received them, and are judged the same.
func TestEvaluateTakesResultsOverTheWire(t *testing.T) {
	f := newFixture(t, Options{})
	f.add(512, deployDocs()...)
	judge := func(label string, results []any) float64 {
		t.Helper()
		if len(results) == 0 {
			t.Fatalf("%s returned no results", label)
		}
		res, sc, _ := f.call(ToolEvaluate, map[string]any{"goal": deployGoal, "results": results})
		if res.IsError {
			t.Fatalf("%s's results refused: %s", label, text(res))
		}
		return sc["confidence"].(float64)
	}
	q, _ := f.ok(ToolQuery, map[string]any{"query": "GitHub Pages sitemap", "k": 3, "wholeSource": true})
	want := judge("sagasu_query", list(q, "results"))
	if want == 0 {
		t.Fatal("sagasu_query's results judged at confidence 0: the test needs results that answer part of the goal")
	}
	for _, mode := range []string{"summary", "detailed", "full"} {
		s, _ := f.ok(ToolSearch, map[string]any{"goal": deployGoal, "query": "GitHub Pages sitemap", "options": map[string]any{"k": 3, "detail": mode}})
		if got := judge("sagasu_search "+mode, list(s, "results")); got != want {
			t.Errorf("sagasu_search %s: confidence %.2f, want %.2f as for the same chunks from sagasu_query", mode, got, want)
		}
	}
	st, _ := f.ok(ToolExecuteStage, map[string]any{"goal": deployGoal})
	judge("sagasu_plan_execute_stage", list(st, "results"))
	lp, _ := f.ok(ToolLoop, map[string]any{"goal": deployGoal, "query": "deploy"})
	judge("sagasu_loop", list(lp, "results"))
}

// TestClientDrivenLoopIsASession: a client that runs the loop itself
// (search, evaluate, refine, search) and names no session gets one per
// connection and goal: every answer carries the same sessionId, the
// session's record holds the steps in order, another goal is another
// session, another connection another; a session the client names is used
// as given, and sagasu_loop in it keeps the client's steps.
func TestClientDrivenLoopIsASession(t *testing.T) {
	f := newFixture(t, Options{})
	f.add(512, deployDocs()...)
	s1, _ := f.ok(ToolSearch, map[string]any{"goal": deployGoal, "query": "deploy"})
	ev, _ := f.ok(ToolEvaluate, map[string]any{"goal": deployGoal, "query": "deploy", "results": list(s1, "topResults"), "iteration": 1})
	rf, _ := f.ok(ToolRefine, map[string]any{"goal": deployGoal, "currentQuery": "deploy", "missingAspects": list(ev, "missingAspects")})
	s2, _ := f.ok(ToolSearch, map[string]any{"goal": deployGoal, "query": rf["refinedQuery"]})
	session, _ := s1["sessionId"].(string)
	if !strings.HasPrefix(session, "mcp-") || ev["sessionId"] != session || rf["sessionId"] != session || s2["sessionId"] != session {
		t.Fatalf("sessions: search %v, evaluate %v, refine %v, search %v; want one", s1["sessionId"], ev["sessionId"], rf["sessionId"], s2["sessionId"])
	}
	steps := func(sessionID string) []string {
		t.Helper()
		rc, _ := f.ok(ToolReadCache, map[string]any{"sessionId": sessionID})
		data := list(rc, "records")[0].(map[string]any)["data"].(map[string]any)
		var out []string
		for _, s := range list(data, "steps") {
			out = append(out, s.(map[string]any)["tool"].(string))
		}
		return out
	}
	if got := strings.Join(steps(session), ","); got != "sagasu_search,sagasu_evaluate,sagasu_refine_query,sagasu_search" {
		t.Errorf("steps %s", got)
	}
	other, _ := f.ok(ToolSearch, map[string]any{"goal": "configure clean URLs", "query": "cleanUrls"})
	if other["sessionId"] == session {
		t.Error("another goal was recorded in the same session")
	}
	// A second connection to the same server.
	ct, stt := mcp.NewInMemoryTransports()
	ss, err := f.srv.mcp.Connect(context.Background(), stt, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "second", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ToolSearch, Arguments: map[string]any{"goal": deployGoal, "query": "deploy"}})
	if err != nil || res.IsError {
		t.Fatalf("second connection: %v %v", err, res)
	}
	if sc := res.StructuredContent.(map[string]any); sc["sessionId"] == session || sc["sessionId"] == "" {
		t.Errorf("a second connection got session %v (the first's is %s)", sc["sessionId"], session)
	}
	// A named session, then the server's loop in it.
	f.ok(ToolEvaluate, map[string]any{"goal": deployGoal, "sessionId": "my-run", "results": list(s1, "topResults")})
	lp, _ := f.ok(ToolLoop, map[string]any{"goal": deployGoal, "sessionId": "my-run", "maxIterations": 2})
	if lp["sessionId"] != "my-run" {
		t.Errorf("sagasu_loop in session my-run answered session %v", lp["sessionId"])
	}
	if got := strings.Join(steps("my-run"), ","); got != "sagasu_evaluate" {
		t.Errorf("after sagasu_loop the named session's steps are %q; want the client's evaluate kept", got)
	}
}

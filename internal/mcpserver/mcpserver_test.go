package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/agentcache"
	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/chunk"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/runs"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// fixture is a server over a fresh index, with a connected client.
type fixture struct {
	t       testing.TB
	dir     string
	store   store.Store
	srv     *Server
	cs      *mcp.ClientSession
	counter *budget.Counter
	// progress receives the client's progress notifications.
	progress chan *mcp.ProgressNotificationParams
}

func newFixture(t testing.TB, opt Options) *fixture {
	t.Helper()
	return newFixtureOver(t, opt, tools.Options{}, nil)
}

// newFixtureOver is newFixture with options for the toolset (its engine,
// cache and roots are the fixture's) and the server's store seen through
// wrap (nil: as it is), for tests that step in between the server and its
// index.
func newFixtureOver(t testing.TB, opt Options, topt tools.Options, wrap func(store.Store) store.Store) *fixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	var st store.Store
	st, err := app.OpenStore(ctx, filepath.Join(dir, "sagasu.db"), true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if wrap != nil {
		st = wrap(st)
	}
	cache, err := agentcache.Open(filepath.Join(dir, "cache", "agent"), agentcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if topt.Index.Chunk.MaxTokens == 0 {
		topt.Index.Chunk = chunk.Options{MaxTokens: 512, Overlap: 64}
	}
	topt.Engine, topt.Cache, topt.Roots = search.New(st), cache, []string{dir}
	if opt.Groups == nil {
		opt.Groups = tools.Groups // the tests drive every tool
	}
	if opt.Tools, err = tools.New(topt); err != nil {
		t.Fatal(err)
	}
	srv, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, dir: dir, store: st, srv: srv, counter: srv.counter, progress: make(chan *mcp.ProgressNotificationParams, 1000)}
	ct, stt := mcp.NewInMemoryTransports()
	ss, err := srv.mcp.Connect(ctx, stt, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			select {
			case f.progress <- r.Params:
			default:
			}
		},
	})
	f.cs, err = client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.cs.Close() })
	return f
}

// add indexes documents straight into the store, chunked at size tokens.
func (f *fixture) add(size int, docs ...doc.Document) {
	f.t.Helper()
	ix := index.New(f.store, index.Options{Chunk: chunk.Options{MaxTokens: size, Overlap: 0}})
	if _, err := ix.Documents(context.Background(), docs); err != nil {
		f.t.Fatal(err)
	}
}

// call calls a tool and returns its result, its structured content and
// the measured token count of the result as received.
func (f *fixture) call(name string, args any) (*mcp.CallToolResult, map[string]any, int) {
	f.t.Helper()
	res, err := f.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		f.t.Fatalf("%s: protocol error: %v", name, err)
	}
	raw, err := json.Marshal(res)
	if err != nil {
		f.t.Fatal(err)
	}
	var sc map[string]any
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &sc)
	}
	return res, sc, f.counter.Count(string(raw))
}

// ok calls a tool that must succeed.
func (f *fixture) ok(name string, args any) (map[string]any, int) {
	f.t.Helper()
	res, sc, n := f.call(name, args)
	if res.IsError {
		f.t.Fatalf("%s(%v): %s", name, args, text(res))
	}
	if sc == nil {
		f.t.Fatalf("%s: no structuredContent", name)
	}
	return sc, n
}

// fails calls a tool that must fail with a message containing want.
func (f *fixture) fails(name string, args any, want string) {
	f.t.Helper()
	res, _, _ := f.call(name, args)
	if !res.IsError {
		f.t.Fatalf("%s(%v) succeeded, want an error saying %q", name, args, want)
	}
	if !strings.Contains(text(res), want) {
		f.t.Fatalf("%s(%v) error %q does not say %q", name, args, text(res), want)
	}
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

func num(sc map[string]any, key string) int {
	v, _ := sc[key].(float64)
	return int(v)
}

func list(sc map[string]any, key string) []any {
	v, _ := sc[key].([]any)
	return v
}

// english and japanese make long documents with distinct words per section.
func english(i, sections, words int) doc.Document {
	var b strings.Builder
	fmt.Fprintf(&b, "# Guide %d\n\n", i)
	for s := range sections {
		fmt.Fprintf(&b, "## Configure sidebar part %d-%d\n\n", i, s)
		for w := range words {
			fmt.Fprintf(&b, "The sidebar configuration option%d controls navigation links and theme layout value%d. ", w%97, (w*7+s)%101)
			if w%12 == 11 {
				b.WriteString("\n\n")
			}
		}
		b.WriteString("\n\n")
	}
	return doc.Document{URI: fmt.Sprintf("docs/guide%d.md", i), Type: doc.TypeFile, Format: doc.FormatMarkdown, Title: fmt.Sprintf("Guide %d", i), Content: b.String()}
}

func japanese(i, sections, sentences int) doc.Document {
	var b strings.Builder
	fmt.Fprintf(&b, "# 設定ガイド %d\n\n", i)
	for s := range sections {
		fmt.Fprintf(&b, "## サイドバーの設定 %d-%d\n\n", i, s)
		for w := range sentences {
			fmt.Fprintf(&b, "サイドバーの設定ファイルではナビゲーションのリンクとテーマのレイアウトを指定します（項目%d）。", (w*13+s)%89)
			if w%8 == 7 {
				b.WriteString("\n\n")
			}
		}
		b.WriteString("\n\n")
	}
	return doc.Document{URI: fmt.Sprintf("docs/ja%d.md", i), Type: doc.TypeFile, Format: doc.FormatMarkdown, Title: fmt.Sprintf("設定ガイド %d", i), Content: b.String()}
}

// checkBudget asserts a response's estimatedTokens is its measured size
// (the result as sent, less what the wire adds around it) and that the
// whole result is within its budget.
func checkBudget(t *testing.T, label string, sc map[string]any, measured, limit int) {
	t.Helper()
	if got := num(sc, "estimatedTokens"); got > measured+8+measured/50 || measured-got > tools.Envelope {
		t.Errorf("%s: estimatedTokens %d, but the response measures %d tokens", label, got, measured)
	}
	if measured > limit {
		t.Errorf("%s: %d tokens exceed the budget of %d", label, measured, limit)
	}
}

func TestToolsListedWithSchemas(t *testing.T) {
	f := newFixture(t, Options{})
	res, err := f.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{ToolIndex, ToolDelete, ToolQuery, ToolSearch, ToolGet, ToolList, ToolEvaluate, ToolRefine, ToolExecuteStage, ToolLoop, ToolReadCache,
		runs.NameList, runs.NameDelete, runs.NamePrune, runs.NameExport}
	got := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		got[tl.Name] = tl
	}
	for _, name := range want {
		tl := got[name]
		if tl == nil {
			t.Errorf("tool %s is not listed", name)
			continue
		}
		if tl.InputSchema == nil || tl.Description == "" {
			t.Errorf("tool %s lacks an input schema or description", name)
		}
		// Output schemas are listed where programs read the answer by
		// field (index, delete, the run log), not where a model reads it.
		op, _ := f.srv.Ops().Find(name)
		if typed := tl.OutputSchema != nil; typed != op.Typed || typed != (name == ToolIndex || name == ToolDelete || strings.HasPrefix(name, "sagasu_runs_")) {
			t.Errorf("tool %s: output schema listed %v", name, typed)
		}
		if tl.OutputSchema != nil {
			raw, _ := json.Marshal(tl.OutputSchema)
			if !strings.Contains(string(raw), "estimatedTokens") {
				t.Errorf("tool %s: output schema has no estimatedTokens", name)
			}
		}
	}
	if len(res.Tools) != len(want) {
		t.Errorf("%d tools listed, want %d", len(res.Tools), len(want))
	}
	// Only sagasu_delete and the run log's delete and prune destroy; every
	// tool says whether it does.
	for _, tl := range res.Tools {
		a := tl.Annotations
		if a == nil || a.Title == "" {
			t.Errorf("tool %s has no annotations", tl.Name)
			continue
		}
		destroys := a.DestructiveHint != nil && *a.DestructiveHint && !a.ReadOnlyHint
		if destroys != (tl.Name == ToolDelete || tl.Name == runs.NameDelete || tl.Name == runs.NamePrune) {
			t.Errorf("tool %s: destructive hint %v", tl.Name, destroys)
		}
	}
}

func TestSearchModesAndPaging(t *testing.T) {
	f := newFixture(t, Options{})
	f.add(512, english(1, 6, 40), english(2, 6, 40), japanese(1, 6, 30))
	seen := map[float64]bool{}
	args := map[string]any{"goal": "understand how to configure the sidebar", "query": "sidebar configuration", "options": map[string]any{"k": 3, "detail": "detailed"}}
	for page := 0; page < 3; page++ {
		sc, _ := f.ok(ToolSearch, args)
		rs := list(sc, "results")
		if len(rs) != 3 {
			t.Fatalf("page %d: %d results, want 3", page, len(rs))
		}
		for _, r := range rs {
			id := r.(map[string]any)["chunkId"].(float64)
			if seen[id] {
				t.Fatalf("page %d repeats chunk %v", page, id)
			}
			seen[id] = true
		}
		if num(sc, "offset") != page*3 {
			t.Errorf("page %d: offset %d", page, num(sc, "offset"))
		}
		cur, _ := sc["nextCursor"].(string)
		if cur == "" {
			t.Fatalf("page %d has no nextCursor", page)
		}
		args["cursor"] = cur
	}
	// summary mode: no texts, a coverage status and a next action.
	sc, _ := f.ok(ToolSearch, map[string]any{"goal": "サイドバーの設定方法を理解する", "query": "サイドバー 設定"})
	if sc["detail"] != "summary" || len(list(sc, "results")) == 0 || list(sc, "results")[0].(map[string]any)["text"] != nil {
		t.Errorf("summary: detail %v, results %v; want results without text", sc["detail"], sc["results"])
	}
	summary := sc["summary"].(map[string]any)
	if summary["coverageStatus"].(map[string]any)["status"] == "" || sc["next"].(map[string]any)["action"] == "" {
		t.Errorf("summary lacks coverage status or next step: %v", sc)
	}
}

func TestCursorsAreTamperEvident(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	f := newFixture(t, Options{CursorTTL: time.Hour, Now: func() time.Time { return now }})
	f.add(512, english(1, 8, 30), english(2, 8, 30))
	args := map[string]any{"query": "sidebar configuration", "k": 2}
	sc, _ := f.ok(ToolQuery, args)
	cur := sc["nextCursor"].(string)

	forged := []byte(cur)
	forged[5] ^= 1
	f.fails(ToolQuery, map[string]any{"query": "sidebar configuration", "k": 2, "cursor": string(forged)}, "invalid cursor")
	f.fails(ToolQuery, map[string]any{"query": "sidebar configuration", "k": 2, "cursor": "garbage"}, "invalid cursor")
	f.fails(ToolQuery, map[string]any{"query": "navigation", "k": 2, "cursor": cur}, "different request")
	f.fails(ToolSearch, map[string]any{"goal": "g", "query": "sidebar configuration", "cursor": cur}, "issued by sagasu_query")

	// Stale: the index changed under the cursor; a new best hit moves the ranking.
	f.add(512, doc.Document{URI: "best.md", Type: doc.TypeFile, Format: doc.FormatMarkdown, Title: "Sidebar configuration",
		Content: "# Sidebar configuration\n\n" + strings.Repeat("sidebar configuration ", 20)})
	f.fails(ToolQuery, map[string]any{"query": "sidebar configuration", "k": 2, "cursor": cur}, "stale cursor")

	// Expired.
	sc, _ = f.ok(ToolQuery, args)
	cur = sc["nextCursor"].(string)
	now = now.Add(2 * time.Hour)
	f.fails(ToolQuery, map[string]any{"query": "sidebar configuration", "k": 2, "cursor": cur}, "expired cursor")

	// A cursor from another server (another key) is refused.
	g := newFixture(t, Options{})
	g.add(512, english(1, 8, 30), english(2, 8, 30))
	g.fails(ToolQuery, map[string]any{"query": "sidebar configuration", "k": 2, "cursor": cur}, "invalid cursor")
}

// TestResponsesAreStampedAtOneInstant: a response is rendered several times
// while it is fitted to its budget, so each rendering must be the same but
// for its shape. Cursors carry the time they were issued; were the clock
// read at each rendering, a second that passes during the fitting (a busy
// machine, a large response) would change the cursor, and so the size, from
// one rendering to the next, and the stated estimatedTokens would be
// another rendering's. The clock here ticks a second at every read: each
// call must read it once, and state its own size.
func TestResponsesAreStampedAtOneInstant(t *testing.T) {
	var reads atomic.Int64
	clock := func() time.Time { return time.Unix(1_700_000_000+reads.Add(1), 0) }
	f := newFixture(t, Options{CursorTTL: time.Hour, Now: clock, Limits: budget.Limits{Summary: 1000, Detailed: 1500, Cap: 1500}})
	var docs []doc.Document
	for i := range 12 {
		docs = append(docs, english(i, 8, 60))
	}
	f.add(512, docs...)
	calls := []struct {
		tool string
		args map[string]any
	}{
		{ToolQuery, map[string]any{"query": "sidebar configuration", "k": 10}},
		{ToolSearch, map[string]any{"goal": "configure the sidebar", "query": "sidebar configuration", "options": map[string]any{"k": 10, "detail": ModeFull}}},
		{ToolList, map[string]any{"limit": 11}},
		{ToolGet, map[string]any{"source": "guide3.md"}},
	}
	for _, c := range calls {
		before := reads.Load()
		sc, n := f.ok(c.tool, c.args)
		if got := reads.Load() - before; got != 1 {
			t.Errorf("%s read the clock %d times for one response, want 1", c.tool, got)
		}
		if sc["nextCursor"] == nil || sc["nextCursor"] == "" {
			t.Errorf("%s: no nextCursor: the call does not exercise a cut response (%v)", c.tool, sc)
		}
		checkBudget(t, c.tool, sc, n, 1500)
	}
}

func TestBadInputKeepsServing(t *testing.T) {
	f := newFixture(t, Options{})
	f.add(512, english(1, 3, 20))
	ctx := context.Background()
	if _, err := f.cs.CallTool(ctx, &mcp.CallToolParams{Name: "sagasu_nope", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("unknown tool: error %v, want a protocol error naming it", err)
	}
	f.fails(ToolSearch, map[string]any{"goal": "x"}, "query")
	f.fails(ToolSearch, map[string]any{"goal": "g", "query": "x", "options": map[string]any{"k": 11}}, "options.k: got 11; give a whole number from 1 to 10")
	f.fails(ToolSearch, map[string]any{"goal": "g", "query": "x", "options": map[string]any{"k": "five"}}, "options")
	f.fails(ToolSearch, map[string]any{"goal": "g", "query": "x", "options": map[string]any{"detail": "verbose"}}, "detail")
	f.fails(ToolQuery, map[string]any{"query": "x", "k": 0.5}, "k")
	f.fails(ToolQuery, map[string]any{"query": "x", "bogus": 1}, "bogus")
	f.fails(ToolGet, map[string]any{"source": "nope.md"}, "not found")
	f.fails(ToolList, map[string]any{"glob": "[", "limit": 5}, "glob")
	f.fails(ToolEvaluate, map[string]any{"goal": "g", "chunkIds": []int{999999}}, "not in the index")
	f.fails(ToolExecuteStage, map[string]any{}, "no plan")
	f.fails(ToolExecuteStage, map[string]any{"planId": "plan-nothere"}, "not in the agent cache")
	f.fails(ToolReadCache, map[string]any{"id": "../../etc/passwd"}, "not a record ID")
	f.fails(ToolIndex, map[string]any{}, "nothing to index")
	f.fails(ToolIndex, map[string]any{"file": "/etc/passwd"}, "not inside the allowed roots")
	f.fails(ToolIndex, map[string]any{"files": []string{"../*"}}, "climbs out")
	f.fails(ToolIndex, map[string]any{"file": "-"}, "standard input")
	// Still serving.
	sc, _ := f.ok(ToolQuery, map[string]any{"query": "sidebar"})
	if len(list(sc, "results")) == 0 {
		t.Error("no results after bad input")
	}
}

func TestIndexRootsAndSymlinks(t *testing.T) {
	f := newFixture(t, Options{})
	docs := filepath.Join(f.dir, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(docs, "a.md"), []byte("# Alpha\n\nsidebar settings\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret.md")
	if err := os.WriteFile(outside, []byte("# Secret\n\ntop secret words\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(docs, "link.md")); err != nil {
		t.Fatal(err)
	}
	sc, _ := f.ok(ToolIndex, map[string]any{"files": []string{docs}, "text": "# Note\n\nremember the sidebar"})
	if num(sc, "added") != 2 {
		t.Errorf("added %d sources, want 2 (a.md and the text): %v", num(sc, "added"), sc)
	}
	skipped := fmt.Sprint(sc["skipped"])
	if !strings.Contains(skipped, "reason:link") {
		t.Errorf("the symlink out of the folder was not reported as skipped: %s", skipped)
	}
	q, _ := f.ok(ToolQuery, map[string]any{"query": "top secret"})
	if len(list(q, "results")) != 0 {
		t.Errorf("a file outside the roots was indexed through a symlink: %v", q["results"])
	}
}

// heldStore is a store whose first Replace commits its batch, calls
// onFirst and then holds the writer until the run's context is cancelled;
// every later Replace of that run waits for the cancellation and writes
// nothing. So the cancelled run has written exactly one batch, however the
// scheduler orders the reader and the writers. released is closed when
// that run lets go of the index's writer lock; from then on the store is
// the plain one.
type heldStore struct {
	store.Store
	onFirst  func()
	released chan struct{}
	mu       sync.Mutex
	calls    int
	done     bool
}

func (h *heldStore) Replace(ctx context.Context, batch []store.SourceData) error {
	h.mu.Lock()
	h.calls++
	first, done := h.calls == 1, h.done
	h.mu.Unlock()
	switch {
	case done:
		return h.Store.Replace(ctx, batch)
	case first:
		if err := h.Store.Replace(ctx, batch); err != nil {
			return err
		}
		h.onFirst()
		<-ctx.Done()
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}

func (h *heldStore) Lock(ctx context.Context) (func(), error) {
	unlock, err := h.Store.Lock(ctx)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	done := h.done
	h.mu.Unlock()
	if done {
		return unlock, nil
	}
	return func() {
		unlock()
		h.mu.Lock()
		h.done = true
		h.mu.Unlock()
		close(h.released)
	}, nil
}

func TestIndexCancelledMidRunStaysConsistent(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var held *heldStore
	var f *fixture
	var progressSeen atomic.Bool
	f = newFixtureOver(t, Options{}, tools.Options{Index: index.Options{BatchBytes: 200 << 10}}, func(s store.Store) store.Store {
		held = &heldStore{Store: s, released: make(chan struct{}), onFirst: func() {
			// The first batch is committed: wait for the progress
			// notification the reader sent before it (so the client has
			// it), then cancel the call.
			<-f.progress
			progressSeen.Store(true)
			cancel()
		}}
		return held
	})
	docs := filepath.Join(f.dir, "corpus")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	// About 60 KB a file and 200 KB a batch: six batches.
	const files = 24
	for i := range files {
		d := english(i, 10, 60)
		if err := os.WriteFile(filepath.Join(docs, fmt.Sprintf("f%02d.md", i)), []byte(d.Content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := f.cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolIndex, Arguments: map[string]any{"file": docs},
		Meta: mcp.Meta{"progressToken": "tok"}})
	if err == nil {
		t.Fatal("the cancelled call returned a result")
	}
	if !progressSeen.Load() {
		t.Error("no progress notification arrived")
	}
	// The cancelled run ends and lets go of the index's writer lock.
	<-held.released
	// Exactly the first batch is written, and every source of it is
	// whole: its chunks are all there.
	st, err := f.store.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Sources == 0 || st.Sources >= files {
		t.Fatalf("%d sources after cancelling mid-run; want the first batch's (some but not all of %d)", st.Sources, files)
	}
	srcs, _ := f.store.Sources(context.Background(), store.ListOptions{})
	for _, s := range srcs {
		cs, err := f.store.Chunks(context.Background(), s.ID)
		if err != nil || len(cs) != s.Chunks || len(cs) == 0 {
			t.Fatalf("source %s: %d chunks stored, record says %d (%v)", s.URI, len(cs), s.Chunks, err)
		}
	}
	// The server still serves, and running again finishes the job.
	sc, _ := f.ok(ToolIndex, map[string]any{"file": docs})
	if num(sc, "unchanged") != st.Sources || num(sc, "added") != files-st.Sources {
		t.Errorf("second run: %v added, %v unchanged; want %d and %d", sc["added"], sc["unchanged"], files-st.Sources, st.Sources)
	}
	if idx := sc["index"].(map[string]any); int(idx["sources"].(float64)) != files {
		t.Errorf("index holds %v sources after finishing, want %d", idx["sources"], files)
	}
}

func TestGetPagesLargeSource(t *testing.T) {
	f := newFixture(t, Options{})
	d := english(1, 60, 80)
	f.add(512, d)
	var got strings.Builder
	args := map[string]any{"source": "guide1.md", "maxTokens": 3000}
	pages := 0
	for {
		sc, n := f.ok(ToolGet, args)
		checkBudget(t, "get page", sc, n, 3000)
		got.WriteString(sc["content"].(string))
		pages++
		if sc["complete"] == true {
			break
		}
		args["cursor"] = sc["nextCursor"]
		if pages > 200 {
			t.Fatal("paging does not end")
		}
	}
	if got.String() != d.Content {
		t.Errorf("the pages do not join into the source (%d of %d bytes)", got.Len(), len(d.Content))
	}
	if pages < 5 {
		t.Errorf("%d pages for a %d-byte source at 3000 tokens a page", pages, len(d.Content))
	}
}

func TestResourcesAndLinks(t *testing.T) {
	f := newFixture(t, Options{})
	f.add(512, english(1, 3, 20))
	res, _, _ := f.call(ToolQuery, map[string]any{"query": "sidebar", "k": 2})
	var link *mcp.ResourceLink
	for _, c := range res.Content {
		if l, ok := c.(*mcp.ResourceLink); ok {
			link = l
			break
		}
	}
	if link == nil {
		t.Fatal("no resource_link in the results")
	}
	rr, err := f.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: link.URI})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "sidebar") {
		t.Fatalf("read %s: %v %v", link.URI, rr, err)
	}
	id := doc.SourceID("docs/guide1.md")
	rr, err = f.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: tools.SourceURI(id)})
	if err != nil || rr.Contents[0].Text != english(1, 3, 20).Content {
		t.Fatalf("read source: %v", err)
	}
	if _, err := f.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "sagasu://chunk/987654"}); err == nil {
		t.Error("reading a missing chunk succeeded")
	}
}

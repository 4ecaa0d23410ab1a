package web

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/httpguard"
	"github.com/sagasu-dev/sagasu/internal/httpguard/httpguardtest"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// TestRunFloodIsRefused: a client that starts run after run gets 429 once
// the server runs as many background tasks as it allows, with what to do.
func TestRunFloodIsRefused(t *testing.T) {
	f := newFixture(t, "", docs)
	release := make(chan struct{})
	defer close(release)
	for i := range 100 {
		if f.srv.startTask(fmt.Sprintf("run:held-%d", i), func(ctx context.Context) {
			select {
			case <-ctx.Done():
			case <-release:
			}
		}) != nil {
			break
		}
	}
	var e struct{ Error string }
	code := f.call(t, "POST", "/api/runs", map[string]string{"goal": "understand how to rotate the API keys"}, &e)
	if code != http.StatusTooManyRequests || !strings.Contains(e.Error, "stop") {
		t.Fatalf("a run while 100 tasks run: %d %q, want 429 saying to wait or stop one", code, e.Error)
	}
	var th struct{ ID string }
	f.call(t, "POST", "/api/threads", map[string]string{"title": "q"}, &th)
	if code := f.call(t, "POST", "/api/threads/"+th.ID+"/ask", map[string]any{"question": "How do I deploy?"}, &e); code != http.StatusTooManyRequests {
		t.Errorf("a chat turn while the server is full: %d %q, want 429", code, e.Error)
	}
	if code := f.call(t, "POST", "/api/index", map[string]string{"path": "."}, &e); code != http.StatusTooManyRequests {
		t.Errorf("an index job while the server is full: %d %q, want 429", code, e.Error)
	}
}

// TestStreamsAreCapped: live streams past the server's cap get 429.
func TestStreamsAreCapped(t *testing.T) {
	f := newFixture(t, "", docs)
	var th struct{ ID string }
	f.call(t, "POST", "/api/threads", map[string]string{"title": "q"}, &th)
	refused := 0
	for i := range 100 {
		req, _ := http.NewRequest("GET", f.ts.URL+"/api/threads/"+th.ID+"/events", nil)
		f.auth(req)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		if res.StatusCode == http.StatusTooManyRequests {
			body, _ := io.ReadAll(res.Body)
			if !strings.Contains(string(body), "close") {
				t.Errorf("stream %d refused without saying what to do: %s", i, body)
			}
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("100 live streams were all served: want 429 past the cap")
	}
}

// TestBodiesAreCapped: every POST route answers 413 to a body over the cap,
// whether or not it reads its body.
func TestBodiesAreCapped(t *testing.T) {
	f := newFixture(t, "", docs)
	var th struct{ ID string }
	f.call(t, "POST", "/api/threads", map[string]string{"title": "q"}, &th)
	big := `{"title":"` + strings.Repeat("x", 2<<20) + `"}`
	for _, p := range []string{"/api/threads", "/api/threads/" + th.ID + "/ask", "/api/threads/" + th.ID + "/stop",
		"/api/search", "/api/evaluate", "/api/runs", "/api/runs/x/resume", "/api/runs/x/stop", "/api/index"} {
		res, body := f.send(t, "POST", p, big)
		if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "MiB") {
			t.Errorf("POST %s with a 2 MiB body: %d %.200s, want 413 naming the limit", p, res.StatusCode, body)
		}
	}
}

// TestDotfilesRefused: the page neither indexes a dotfile or dot-folder nor
// hands out one the user indexed from the command line.
func TestDotfilesRefused(t *testing.T) {
	f := newFixture(t, "", nil)
	dir := t.TempDir()
	for name, body := range map[string]string{".env": "API_KEY=sk-neighbour-must-not-read\n", ".ssh/id_rsa": "PRIVATE sk-neighbour-must-not-read\n", "docs/a.md": "# A\n\nAlpha.\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, ".env"), filepath.Join(dir, "docs", "env.md")); err != nil {
		t.Fatal(err)
	}
	// The command line (the user naming a file) indexes the key.
	cli, err := tools.New(tools.Options{Engine: f.srv.rt.Engine, Index: f.srv.app.IndexOptions(), Roots: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := cli.Index(context.Background(), tools.IndexInput{File: filepath.Join(dir, ".ssh", "id_rsa")}, nil)
	if err != nil || res.Added != 1 {
		t.Fatalf("the command line indexing a file it names: %v %+v", err, res)
	}
	f.roots(t, dir)

	var e struct{ Error string }
	for _, p := range []string{filepath.Join(dir, ".env"), ".env", ".ssh/id_rsa", ".ssh", "docs/env.md", "**/.env"} {
		if code := f.call(t, "POST", "/api/index", map[string]string{"path": p}, &e); code != http.StatusForbidden || !strings.Contains(e.Error, "--allow-dotfiles") {
			t.Errorf("index %s: %d %q, want 403 naming --allow-dotfiles", p, code, e.Error)
		}
	}
	var list tools.ListOutput
	f.call(t, "GET", "/api/sources", nil, &list)
	if len(list.Sources) != 1 {
		t.Fatalf("sources: %+v", list.Sources)
	}
	key := list.Sources[0]
	if code := f.call(t, "GET", "/api/source?ref="+key.ID, nil, &e); code != http.StatusForbidden || !strings.Contains(e.Error, "--allow-dotfiles") {
		t.Errorf("read the key the user indexed: %d %q, want 403", code, e.Error)
	}
	var sr struct{ Results []searchResult }
	f.call(t, "POST", "/api/search", map[string]any{"query": "PRIVATE"}, &sr)
	for _, r := range sr.Results {
		if code := f.call(t, "GET", "/api/chunks/"+itoa(r.ChunkID), nil, &e); code != http.StatusForbidden {
			t.Errorf("read a chunk of the key: %d, want 403", code)
		}
	}
	// A folder walk skips the link to .env.
	var j struct{ Job string }
	if code := f.call(t, "POST", "/api/index", map[string]string{"path": "docs"}, &j); code != http.StatusAccepted {
		t.Fatalf("index docs: %d", code)
	}
	evs := f.stream(t, "/api/jobs/"+j.Job+"/events", "", func(e sseEv) bool { return e.event == "done" || e.event == "failed" })
	if last := evs[len(evs)-1]; last.event != "done" || !strings.Contains(last.data, `"added":1`) {
		t.Errorf("index docs: %s %s, want a.md alone added", last.event, last.data)
	}
	var out struct{ Results []searchResult }
	f.call(t, "POST", "/api/search", map[string]any{"query": "API_KEY neighbour"}, &out)
	for _, r := range out.Results {
		if strings.Contains(r.Text, "API_KEY") {
			t.Errorf("the .env behind docs/env.md was indexed: %+v", r.Source)
		}
	}
}

// TestOnePollerPerRun: many tabs on one thread share one store poller,
// which still brings them what another process appends.
func TestOnePollerPerRun(t *testing.T) {
	f := newFixture(t, "", docs)
	var th struct{ ID string }
	f.call(t, "POST", "/api/threads", map[string]string{"title": "q"}, &th)
	var tabs []func(func(sseEv) bool) []sseEv
	for range 5 {
		tabs = append(tabs, f.open(t, "/api/threads/"+th.ID+"/events", ""))
	}
	if pollers, streams := f.srv.watch.watching(th.ID); pollers != 1 || streams != 5 {
		t.Fatalf("5 streams on one thread: %d pollers, %d streams counted; want 1 poller for 5", pollers, streams)
	}
	// Another process (`sagasu chat`) appends to the thread.
	if _, err := f.srv.rt.Store.AppendEvents(context.Background(), th.ID, []store.Event{{Type: "question", Data: []byte(`{"question":"from the terminal"}`)}}); err != nil {
		t.Fatal(err)
	}
	for i, tab := range tabs {
		evs := tab(func(e sseEv) bool { return e.event == "question" })
		if last := evs[len(evs)-1]; !strings.Contains(last.data, "from the terminal") {
			t.Errorf("tab %d got %v", i, last)
		}
	}
}

// TestSlowClientsAreCut: the page's server closes connections whose
// client stalls in its headers or body.
func TestSlowClientsAreCut(t *testing.T) {
	f := newFixture(t, "", nil)
	f.srv.opt.Timeouts = httpguard.Timeouts{ReadHeader: 100 * time.Millisecond, Read: 200 * time.Millisecond}
	for _, slowHeaders := range []bool{true, false} {
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		httpguardtest.SlowClientIsCut(t, func(ln net.Listener) { done <- f.srv.Serve(ctx, ln) }, slowHeaders)
		stop()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// TestLastEventID: where a stream resumes, and the values refused (each
// found by fuzzing the API).
func TestLastEventID(t *testing.T) {
	for _, tc := range []struct {
		header []string // nil: no header
		query  string
		want   int64
		bad    bool
	}{
		{nil, "", 0, false},
		{[]string{"7"}, "", 7, false},
		{nil, "after=5", 5, false},
		{[]string{"7"}, "after=5", 7, false},
		{[]string{"0"}, "after=-1", 0, true},
		{[]string{""}, "", 0, true},
		{nil, "after=", 0, true},
		{nil, "after=9007199254740992", 0, true},
		{[]string{"x"}, "", 0, true},
	} {
		r, _ := http.NewRequest("GET", "/api/runs/r/events?"+tc.query, nil)
		if tc.header != nil {
			r.Header["Last-Event-Id"] = tc.header
		}
		got, err := lastEventID(r)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("header %q, query %q: %d, %v; want %d, refused %v", tc.header, tc.query, got, err, tc.want, tc.bad)
		}
	}
}

// TestStrictJSON: bodies are one object, without nulls or unknown fields;
// whole numbers may be written as JSON allows.
func TestStrictJSON(t *testing.T) {
	for body, ok := range map[string]bool{
		`{"question":"q","k":15}`:    true,
		`{"question":"q","k":15.0}`:  true,
		`{"question":"q","k":1.5e1}`: true,
		`{"question":"q","k":15.5}`:  false,
		`{"question":"q","k":null}`:  false,
		`{"question":"q","x":1}`:     false,
		`{"question":"q"} {}`:        false,
		`null`:                       false,
		`[]`:                         false,
	} {
		var in askInput
		err := strictJSON([]byte(body), &in)
		if (err == nil) != ok || ok && in.K != 15 && strings.Contains(body, "k") {
			t.Errorf("%s: %+v, %v; want accepted %v", body, in, err, ok)
		}
	}
}

package web

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/agent/react"
	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/embed"
	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/llm/llmtest"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// fixture is a server over a fresh index holding texts.
type fixture struct {
	srv   *Server
	ts    *httptest.Server
	token string
}

func newFixture(t *testing.T, token string, texts map[string]string) *fixture {
	t.Helper()
	return newFixtureWith(t, token, texts, app.EmbedderConfig{})
}

// newFixtureWith is newFixture over an index with emb pinned (none when
// its driver is empty).
func newFixtureWith(t *testing.T, token string, texts map[string]string, emb app.EmbedderConfig) *fixture {
	t.Helper()
	dir := t.TempDir()
	cfg := app.Defaults()
	cfg.DB = filepath.Join(dir, "index.db")
	cfg.CacheDir = filepath.Join(dir, "cache")
	cfg.LLM.Driver = ""
	cfg.Embedder = emb
	a := app.New(cfg, io.Discard, nil)
	ctx, cancel := context.WithCancel(context.Background())
	rt, err := a.Open(ctx, app.OpenOptions{Create: true, LongLived: true, PinEmpty: emb.Driver != ""})
	if err != nil {
		t.Fatal(err)
	}
	for title, body := range texts {
		if _, err := rt.Tools.Index(ctx, tools.IndexInput{Text: body, Title: title}, nil); err != nil {
			t.Fatal(err)
		}
	}
	listen := "127.0.0.1:7373"
	if token != "" {
		listen = "0.0.0.0:7373"
	} else {
		// As `sagasu serve` runs by default: on loopback, with a token.
		token = "fixture-token"
	}
	srv, err := New(ctx, a, rt, Options{Listen: listen, Token: token, Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ts.Close()
		cancel()
		srv.Wait(context.Background())
		rt.Close()
	})
	return &fixture{srv: srv, ts: ts, token: token}
}

var docs = map[string]string{
	"Keys":   "# API keys\n\n## Rotate the keys\n\nTo rotate the API keys, run acme keys rotate and restart the server. The old keys stop working after one hour.\n",
	"Deploy": "# Deploy\n\nDeploy the site with acme deploy. The deploy command uploads the build folder to the bucket.\n",
}

// auth adds the token to req as a script would.
func (f *fixture) auth(req *http.Request) {
	if f.token != "" {
		req.Header.Set("Authorization", "Bearer "+f.token)
	}
}

// roots lets the page's Index tab add files from dirs.
func (f *fixture) roots(t *testing.T, dirs ...string) {
	t.Helper()
	ts, err := tools.New(tools.Options{Engine: f.srv.rt.Engine, Cache: f.srv.rt.Cache, Index: f.srv.app.IndexOptions(), Roots: dirs})
	if err != nil {
		t.Fatal(err)
	}
	f.srv.useTools(ts)
}

// send makes a request as the page does (X-Sagasu: 1 on writes, the
// token) with a raw body, and returns the answer with its body read.
func (f *fixture) send(t *testing.T, method, path, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, f.ts.URL+path, strings.NewReader(body))
	if method != http.MethodGet {
		req.Header.Set("X-Sagasu", "1")
		req.Header.Set("Content-Type", "application/json")
	}
	f.auth(req)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, b
}

// call makes a request as the page does (X-Sagasu: 1 on writes) with
// body as JSON, and decodes the answer into out when not nil.
func (f *fixture) call(t *testing.T, method, path string, body any, out any) int {
	t.Helper()
	var raw []byte
	if body != nil {
		raw, _ = json.Marshal(body)
	}
	res, b := f.send(t, method, path, string(raw))
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: decode: %v", method, path, err)
		}
	}
	return res.StatusCode
}

// sseEv is one received server-sent event.
type sseEv struct {
	id, event, data string
}

// stream reads events from path until stop says so or 10 s pass.
func (f *fixture) stream(t *testing.T, path, lastID string, stop func(sseEv) bool) []sseEv {
	t.Helper()
	return f.open(t, path, lastID)(stop)
}

// open connects to an event stream (the server is then subscribed) and
// returns a function that reads from it until stop says so.
func (f *fixture) open(t *testing.T, path, lastID string) func(stop func(sseEv) bool) []sseEv {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.ts.URL+path, nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	f.auth(req)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("GET %s: content type %q, status %d", path, ct, res.StatusCode)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	return func(stop func(sseEv) bool) []sseEv {
		var out []sseEv
		var cur sseEv
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if cur.event != "" {
					out = append(out, cur)
					if stop(cur) {
						return out
					}
				}
				cur = sseEv{}
			case strings.HasPrefix(line, "id: "):
				cur.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				cur.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				cur.data = line[6:]
			}
		}
		t.Errorf("GET %s: the stream ended before the awaited event; got %v", path, out)
		return out
	}
}

func TestChatTurnStreamsStepsAnswerAndSpans(t *testing.T) {
	f := newFixture(t, "", docs)
	var th struct{ ID string }
	if code := f.call(t, "POST", "/api/threads", map[string]string{"title": "keys"}, &th); code != http.StatusCreated {
		t.Fatalf("start thread: %d", code)
	}
	if code := f.call(t, "POST", "/api/threads/"+th.ID+"/ask", map[string]any{"question": "How do I rotate the API keys?"}, nil); code != http.StatusAccepted {
		t.Fatalf("ask: %d", code)
	}
	evs := f.stream(t, "/api/threads/"+th.ID+"/events", "", func(e sseEv) bool { return e.event == react.ThreadSpans })
	kinds := map[string]int{}
	var answer struct {
		Answer    string
		Citations []struct{ N int }
	}
	for _, e := range evs {
		kinds[e.event]++
		if e.event == "answer" {
			_ = json.Unmarshal([]byte(e.data), &answer)
		}
	}
	if kinds["turn"] != 1 || kinds["step"] < 3 || kinds["answer"] != 1 {
		t.Fatalf("want a turn, its steps and an answer; got %v", kinds)
	}
	if !strings.Contains(answer.Answer, "acme keys rotate") || len(answer.Citations) == 0 {
		t.Errorf("answer %q with %d citations: want the rotation command, cited", answer.Answer, len(answer.Citations))
	}
	var spans struct{ Spans []react.Span }
	_ = json.Unmarshal([]byte(evs[len(evs)-1].data), &spans)
	// The answer may open with the quoted section's heading, which is not a
	// claim: every checked sentence is supported, and there is one.
	checked := 0
	for _, sp := range spans.Spans {
		if sp.End > len(answer.Answer) || sp.Checked && !sp.Supported {
			t.Errorf("span %+v of %d bytes: want every checked sentence supported, within the answer", sp, len(answer.Answer))
		}
		if sp.Checked {
			checked++
		}
	}
	if checked == 0 {
		t.Errorf("spans %+v do not mark the answer's supported sentences", spans.Spans)
	}

	// A reconnecting stream (Last-Event-ID) gets only what came after.
	// Status events carry no ID and come at any time: resume from the
	// event with an ID just before the answer.
	var last string
	for _, e := range evs {
		if e.event == "answer" {
			break
		}
		if e.id != "" {
			last = e.id
		}
	}
	again := f.stream(t, "/api/threads/"+th.ID+"/events", last, func(e sseEv) bool { return e.event == react.ThreadSpans })
	var replayed []string
	for _, e := range again {
		if e.id != "" {
			replayed = append(replayed, e.event)
		}
	}
	if strings.Join(replayed, ",") != "answer,spans" {
		t.Errorf("after Last-Event-ID %s the stream replayed %v, want answer,spans", last, replayed)
	}

	// A second turn sees the first as history and is recorded too.
	var list []runView
	f.call(t, "GET", "/api/threads", nil, &list)
	if len(list) != 1 || list[0].ID != th.ID {
		t.Errorf("thread list %+v, want the one thread", list)
	}
}

func TestAskRefusesEmptyIndexAndBusyThread(t *testing.T) {
	empty := newFixture(t, "", nil)
	var th struct{ ID string }
	empty.call(t, "POST", "/api/threads", map[string]string{"title": "q"}, &th)
	var e struct{ Error string }
	if code := empty.call(t, "POST", "/api/threads/"+th.ID+"/ask", map[string]any{"question": "anything?"}, &e); code != http.StatusConflict || !strings.Contains(e.Error, "index is empty") {
		t.Errorf("ask on an empty index: %d %q, want 409 saying the index is empty", code, e.Error)
	}

	f := newFixture(t, "", docs)
	f.call(t, "POST", "/api/threads", map[string]string{"title": "q"}, &th)
	// A turn in progress (held open here) is not started twice, and Stop
	// cancels it.
	cancelled := make(chan struct{})
	f.srv.startTask(threadKey(th.ID), func(ctx context.Context) { <-ctx.Done(); close(cancelled) })
	if code := f.call(t, "POST", "/api/threads/"+th.ID+"/ask", map[string]any{"question": "How do I deploy?"}, &e); code != http.StatusConflict || !strings.Contains(e.Error, "in progress") {
		t.Errorf("a second turn: %d %q, want 409 saying a turn is in progress", code, e.Error)
	}
	if code := f.call(t, "POST", "/api/threads/"+th.ID+"/stop", map[string]any{}, nil); code != http.StatusAccepted {
		t.Errorf("stop: %d", code)
	}
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("Stop did not cancel the turn's context")
	}
	if code := f.call(t, "POST", "/api/threads/nope/ask", map[string]any{"question": "x"}, &e); code != http.StatusNotFound {
		t.Errorf("ask in an unknown thread: %d", code)
	}
}

func TestStoppedTurnIsLogged(t *testing.T) {
	f := newFixture(t, "", docs)
	var th struct{ ID string }
	f.call(t, "POST", "/api/threads", map[string]string{"title": "q"}, &th)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f.srv.turn(ctx, th.ID, "How do I deploy?", f.srv.rt.Asker(app.AskOptions{}), new(atomic.Int64))
	evs := f.stream(t, "/api/threads/"+th.ID+"/events", "", func(e sseEv) bool { return e.event == react.ThreadError || e.event == "answer" })
	last := evs[len(evs)-1]
	if last.event != react.ThreadError || !strings.Contains(last.data, "stopped") {
		t.Errorf("a cancelled turn ended with %s %s, want a turn_error saying it was stopped", last.event, last.data)
	}
}

func TestSearchSourceChunkEvaluate(t *testing.T) {
	huge := "# Huge\n\n" + strings.Repeat("a line about rotation of many things\n", 12000)
	f := newFixture(t, "", map[string]string{"Keys": docs["Keys"], "Huge": huge})
	var res struct {
		Mode    string
		Terms   []string
		Results []searchResult
	}
	if code := f.call(t, "POST", "/api/search", map[string]any{"query": "rotate keys", "mode": "keyword", "k": 5}, &res); code != http.StatusOK {
		t.Fatalf("search: %d", code)
	}
	if len(res.Results) == 0 || !strings.Contains(res.Results[0].Snippet, "rotate") {
		t.Fatalf("search results %+v: want the keys document first", res.Results)
	}
	var e struct{ Error string }
	for _, bad := range []map[string]any{{"query": ""}, {"query": "x", "mode": "fuzzy"}, {"query": "x", "types": []string{"pdf"}}, {"query": "x", "k": 1000}} {
		if code := f.call(t, "POST", "/api/search", bad, &e); code != http.StatusBadRequest || e.Error == "" {
			t.Errorf("search %v: %d %q, want 400 with a message", bad, code, e.Error)
		}
	}

	// The toolset's k rule (1 to 50) and what the index cannot do as it is.
	for _, tc := range []struct {
		path string
		body map[string]any
		want int
	}{
		{"/api/search", map[string]any{"query": "x", "k": 51}, http.StatusBadRequest},
		{"/api/search", map[string]any{"query": "x", "glob": "docs/[x"}, http.StatusBadRequest},
		{"/api/search", map[string]any{"query": "rotate keys", "mode": "semantic"}, http.StatusConflict},
		{"/api/evaluate", map[string]any{"goal": "keys", "chunkIds": []int64{987654}}, http.StatusNotFound},
	} {
		if code := f.call(t, "POST", tc.path, tc.body, &e); code != tc.want || e.Error == "" {
			t.Errorf("%s %v: %d %q, want %d with a message", tc.path, tc.body, code, e.Error, tc.want)
		}
	}
	if code := f.call(t, "GET", "/api/source?ref=nowhere.md", nil, &e); code != http.StatusNotFound {
		t.Errorf("a source that is not there: %d, want 404", code)
	}

	var ev tools.EvaluateOutput
	ids := []int64{res.Results[0].ChunkID}
	if code := f.call(t, "POST", "/api/evaluate", map[string]any{"goal": "how to rotate the API keys", "chunkIds": ids}, &ev); code != http.StatusOK || ev.Confidence <= 0 {
		t.Errorf("evaluate: %d, confidence %v", code, ev.Confidence)
	}

	var ch struct {
		Passage struct{ Text string }
	}
	if code := f.call(t, "GET", "/api/chunks/"+itoa(ids[0]), nil, &ch); code != http.StatusOK || !strings.Contains(ch.Passage.Text, "rotate") {
		t.Errorf("chunk: %d %q", code, ch.Passage.Text)
	}

	var src struct {
		Content    string
		TotalBytes int
		Truncated  bool
	}
	var list tools.ListOutput
	if code := f.call(t, "GET", "/api/sources", nil, &list); code != http.StatusOK || list.Index.Sources != 2 {
		t.Fatalf("sources: %d, %d sources", code, list.Index.Sources)
	}
	hugeID := list.Sources[0].ID
	if list.Sources[1].Title == "Huge" {
		hugeID = list.Sources[1].ID
	}
	if code := f.call(t, "GET", "/api/source?ref="+hugeID, nil, &src); code != http.StatusOK {
		t.Fatalf("source: %d", code)
	}
	if !src.Truncated || len(src.Content) > MaxSourceBytes || src.TotalBytes <= MaxSourceBytes {
		t.Errorf("a %d-byte source came back %d bytes, truncated=%v: want it cut to %d", src.TotalBytes, len(src.Content), src.Truncated, MaxSourceBytes)
	}
	if code := f.call(t, "GET", "/api/source?ref="+res.Results[0].Source.ID+"&section=Rotate%20the%20keys", nil, &src); code != http.StatusOK || src.Truncated || !strings.HasPrefix(src.Content, "## Rotate") {
		t.Errorf("section: %d %q", code, src.Content)
	}
	var cache tools.ReadCacheOutput
	if code := f.call(t, "GET", "/api/cache?kind=evaluations", nil, &cache); code != http.StatusOK || len(cache.Records) == 0 {
		t.Errorf("cache: %d, %d records; want the evaluation just made", code, len(cache.Records))
	}
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestAgentRunFinishesAndStreams(t *testing.T) {
	f := newFixture(t, "", docs)
	var started struct{ ID, Mode string }
	if code := f.call(t, "POST", "/api/runs", map[string]string{"goal": "understand how to rotate the API keys"}, &started); code != http.StatusAccepted || started.Mode != "offline" {
		t.Fatalf("start run: %d %+v", code, started)
	}
	evs := f.stream(t, "/api/runs/"+started.ID+"/events", "", func(e sseEv) bool { return e.event == "outcome" })
	sawPlan := false
	for _, e := range evs {
		if e.event == "state" && strings.Contains(e.data, `"plan":[{`) {
			sawPlan = true
		}
	}
	if !sawPlan {
		t.Errorf("the run's stream carried no plan: %v", evs)
	}
	f.srv.Wait(context.Background())
	var show struct {
		Run     runView
		State   planView
		Outcome struct{ Status string }
	}
	if code := f.call(t, "GET", "/api/runs/"+started.ID, nil, &show); code != http.StatusOK || show.Outcome.Status != "success" || len(show.State.Plan) == 0 {
		t.Errorf("show run: %d %+v", code, show)
	}
	var e struct{ Error string }
	if code := f.call(t, "POST", "/api/runs", map[string]string{"goal": "open https://example.com and click login"}, &e); code != http.StatusBadRequest || e.Error == "" {
		t.Errorf("a browser goal offline: %d %q, want 400 asking for a model", code, e.Error)
	}
	if code := f.call(t, "POST", "/api/runs/"+started.ID+"/stop", map[string]any{}, &e); code != http.StatusConflict {
		t.Errorf("stop a finished run: %d", code)
	}
}

func TestIndexJobStreamsProgress(t *testing.T) {
	f := newFixture(t, "", nil)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("# A\n\nAlpha text.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.roots(t, dir)
	var j struct{ Job string }
	if code := f.call(t, "POST", "/api/index", map[string]string{"path": dir}, &j); code != http.StatusAccepted {
		t.Fatalf("index: %d", code)
	}
	evs := f.stream(t, "/api/jobs/"+j.Job+"/events", "", func(e sseEv) bool { return e.event == "done" || e.event == "failed" })
	last := evs[len(evs)-1]
	if last.event != "done" || !strings.Contains(last.data, `"added":1`) {
		t.Errorf("index job ended with %s %s, want done with one source added", last.event, last.data)
	}
}

func TestSecurity(t *testing.T) {
	f := newFixture(t, "", docs)
	cases := []struct {
		name   string
		method string
		path   string
		header map[string]string
		want   int
	}{
		{"page", "GET", "/", nil, 200},
		{"api from the page", "GET", "/api/info", map[string]string{"Origin": "ORIGIN"}, 200},
		{"DNS rebinding: another Host", "GET", "/api/info", map[string]string{"Host": "evil.example:7373"}, 403},
		{"another Origin", "GET", "/api/threads", map[string]string{"Origin": "http://evil.example"}, 403},
		{"POST without X-Sagasu", "POST", "/api/threads", map[string]string{"Content-Type": "application/json"}, 403},
		{"POST from another Origin", "POST", "/api/threads", map[string]string{"Origin": "http://evil.example", "X-Sagasu": "1"}, 403},
		{"cross-site POST", "POST", "/api/threads", map[string]string{"Sec-Fetch-Site": "cross-site", "X-Sagasu": "1"}, 403},
		{"POST from the page", "POST", "/api/threads", map[string]string{"Origin": "ORIGIN", "X-Sagasu": "1"}, 201},
		{"page without the token (its files carry no data)", "GET", "/", map[string]string{"Authorization": ""}, 200},
		{"api without the token", "GET", "/api/info", map[string]string{"Authorization": ""}, 401},
		{"POST without the token", "POST", "/api/threads", map[string]string{"Origin": "ORIGIN", "X-Sagasu": "1", "Authorization": ""}, 401},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, f.ts.URL+c.path, strings.NewReader(`{"title":"t"}`))
			f.auth(req)
			for k, v := range c.header {
				v = strings.ReplaceAll(v, "ORIGIN", f.ts.URL)
				if k == "Host" {
					req.Host = v
					continue
				}
				req.Header.Set(k, v)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != c.want {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, c.want, body)
			}
			if c.want == 403 && !strings.Contains(string(body), "refused") && !strings.Contains(string(body), "not served") {
				t.Errorf("a refusal without a reason: %s", body)
			}
			if c.want == 401 && !strings.Contains(string(body), "#token=") {
				t.Errorf("a refusal that does not say how to get in: %s", body)
			}
			if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
				t.Errorf("CSP %q", csp)
			}
		})
	}
}

func TestToken(t *testing.T) {
	for _, noToken := range []bool{false, true} {
		if err := checkListen("0.0.0.0:7373", "", noToken); err == nil || !strings.Contains(err.Error(), "--token") {
			t.Errorf("listening on every interface without a token (NoToken %v): %v, want a refusal naming --token", noToken, err)
		}
	}
	if err := checkListen("127.0.0.1:7373", "", false); err == nil || !strings.Contains(err.Error(), "--no-token") {
		t.Errorf("loopback without a token: %v, want a refusal naming --no-token", err)
	}
	if err := checkListen("127.0.0.1:7373", "", true); err != nil {
		t.Errorf("loopback with NoToken: %v", err)
	}
	f := newFixture(t, "s3cret", docs)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string, set func(*http.Request)) *http.Response {
		req, _ := http.NewRequest("GET", f.ts.URL+path, nil)
		if set != nil {
			set(req)
		}
		res, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	if res := get("/api/info", nil); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: %d, want 401", res.StatusCode)
	}
	if res := get("/api/info", func(r *http.Request) { r.Header.Set("Authorization", "Bearer wrong") }); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong token: %d, want 401", res.StatusCode)
	}
	if res := get("/api/info", func(r *http.Request) { r.Header.Set("Authorization", "Bearer s3cret") }); res.StatusCode != http.StatusOK {
		t.Errorf("bearer token: %d, want 200", res.StatusCode)
	}
	// The attack: a browser sends a cookie for 127.0.0.1 to every port, so
	// another local service the user visits would have received a token
	// cookie. Holding the right value in a cookie opens nothing, and no
	// answer, the page's or the API's, sets one.
	ts, _ := url.Parse(f.ts.URL)
	for _, name := range []string{"sagasu_token_" + ts.Port(), "token"} {
		res := get("/api/info", func(r *http.Request) { r.AddCookie(&http.Cookie{Name: name, Value: "s3cret"}) })
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("the token in cookie %s: %d, want 401", name, res.StatusCode)
		}
	}
	for _, path := range []string{"/?token=s3cret", "/", "/app.js", "/client.js", "/api/info"} {
		res := get(path, func(r *http.Request) { r.Header.Set("Authorization", "Bearer s3cret") })
		if res.StatusCode != http.StatusOK || len(res.Cookies()) > 0 || res.Header.Get("Set-Cookie") != "" {
			t.Errorf("GET %s: %d, cookies %v: want 200 and none set", path, res.StatusCode, res.Cookies())
		}
	}
	// Without the token the page's files load, and they are the embedded
	// files byte for byte: they carry nothing of the index.
	for _, name := range []string{"index.html", "app.js", "client.js"} {
		want, err := fs.ReadFile(assets, "assets/"+name)
		if err != nil {
			t.Fatal(err)
		}
		path := "/" + name
		if name == "index.html" {
			path = "/"
		}
		res, err := http.Get(f.ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !bytes.Equal(got, want) {
			t.Errorf("GET %s without the token: %d, %d bytes, want 200 and the embedded %d bytes", path, res.StatusCode, len(got), len(want))
		}
	}
}

func TestRenderedPageHasNoInlineScript(t *testing.T) {
	f := newFixture(t, "", nil)
	_, body := f.send(t, "GET", "/", "")
	page := string(body)
	// The CSP forbids inline script; the page must not need any, and it
	// carries the accessible names the browser test relies on.
	if strings.Contains(page, "<script>") || strings.Contains(page, "onclick=") {
		t.Error("the page has inline script, which the CSP blocks")
	}
	for _, name := range []string{`>Message</label>`, `id="send">Send<`, `aria-label="Search"`, `aria-label="Results"`, `aria-label="Trace"`} {
		if !strings.Contains(page, name) {
			t.Errorf("the page lacks %s", name)
		}
	}
	js, _ := assets.ReadFile("assets/app.js")
	md, _ := assets.ReadFile("assets/md.js")
	i18n, _ := assets.ReadFile("assets/i18n.js")
	for _, src := range []string{string(js), string(md), string(i18n)} {
		if strings.Contains(src, "innerHTML") || strings.Contains(src, "insertAdjacentHTML") || strings.Contains(src, "document.write") {
			t.Error("the page's scripts write HTML from strings; text must go in as text nodes")
		}
	}
}

func TestModelAnswerStreamsDeltasToEveryTab(t *testing.T) {
	f := newFixture(t, "", docs)
	answer := "To rotate the API keys, run acme keys rotate and restart the server [1]."
	f.srv.rt.LLM = llmtest.New(
		llmtest.Calls(llmtest.Call("c1", tools.NameQuery, `{"query":"rotate API keys"}`)),
		llmtest.Text(answer), llmtest.Text(answer), llmtest.Text(answer),
	)
	var th struct{ ID string }
	f.call(t, "POST", "/api/threads", map[string]string{"title": "keys"}, &th)
	tab1 := f.open(t, "/api/threads/"+th.ID+"/events", "")
	tab2 := f.open(t, "/api/threads/"+th.ID+"/events", "")
	var started struct{ Mode string }
	if code := f.call(t, "POST", "/api/threads/"+th.ID+"/ask", map[string]any{"question": "How do I rotate the API keys?"}, &started); code != http.StatusAccepted {
		t.Fatalf("ask: %d", code)
	}
	if !strings.HasPrefix(started.Mode, "llmtest/") {
		t.Errorf("mode %q, want the model's driver/model", started.Mode)
	}
	for i, tab := range []func(func(sseEv) bool) []sseEv{tab1, tab2} {
		evs := tab(func(e sseEv) bool { return e.event == react.ThreadSpans })
		var streamed strings.Builder
		answered := false
		for _, e := range evs {
			switch e.event {
			case "delta":
				if answered {
					t.Errorf("tab %d: a delta came after the answer it belongs to", i+1)
				}
				var d struct{ Text string }
				_ = json.Unmarshal([]byte(e.data), &d)
				streamed.WriteString(d.Text)
			case "answer":
				answered = strings.Contains(e.data, "acme keys rotate")
			}
		}
		if !strings.Contains(streamed.String(), "acme keys rotate") || !answered {
			t.Errorf("tab %d: streamed %q, answered %v: want the answer streamed, then recorded", i+1, streamed.String(), answered)
		}
	}
}

func TestStopCancelsAModelTurn(t *testing.T) {
	f := newFixture(t, "", docs)
	release := make(chan struct{})
	f.srv.rt.LLM = llmtest.New(llmtest.Func(func(llm.Request) (*llm.Response, error) {
		<-release
		return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: "too late"}}, nil
	}))
	var th struct{ ID string }
	f.call(t, "POST", "/api/threads", map[string]string{"title": "keys"}, &th)
	tab := f.open(t, "/api/threads/"+th.ID+"/events", "")
	f.call(t, "POST", "/api/threads/"+th.ID+"/ask", map[string]any{"question": "How do I rotate the API keys?"}, nil)
	tab(func(e sseEv) bool { return e.event == react.ThreadTurn })
	if code := f.call(t, "POST", "/api/threads/"+th.ID+"/stop", map[string]any{}, nil); code != http.StatusAccepted {
		t.Fatalf("stop: %d", code)
	}
	close(release)
	evs := tab(func(e sseEv) bool { return e.event == react.ThreadError || e.event == "answer" })
	if last := evs[len(evs)-1]; last.event != react.ThreadError || !strings.Contains(last.data, `"stopped":true`) {
		t.Errorf("a stopped turn ended with %s %s, want turn_error, stopped", last.event, last.data)
	}
}

func TestHostAllowed(t *testing.T) {
	tests := []struct {
		listen, token, host string
		want                bool
	}{
		{"127.0.0.1:7373", "", "127.0.0.1:7373", true},
		{"127.0.0.1:7373", "", "localhost:7373", true},
		{"127.0.0.1:7373", "", "[::1]:7373", true},
		{"127.0.0.1:7373", "", "attacker.example:7373", false},
		{"127.0.0.1:7373", "", "192.168.1.5:7373", false},
		{"192.168.1.5:7373", "t", "192.168.1.5:7373", true},
		{"192.168.1.5:7373", "t", "attacker.example:7373", false},
		{"0.0.0.0:7373", "t", "box.lan:7373", true},
	}
	for _, tt := range tests {
		s := &Server{opt: Options{Listen: tt.listen, Token: tt.token}}
		if got := s.hostAllowed(tt.host); got != tt.want {
			t.Errorf("listen %s (token %q), Host %s: allowed %v, want %v", tt.listen, tt.token, tt.host, got, tt.want)
		}
	}
}

// failingEmbedder fails every embedding, as a server that is down does.
type failingEmbedder struct{}

func (failingEmbedder) Info() embed.Info { return embed.Info{Driver: "test", Model: "down", Dim: 4} }
func (failingEmbedder) EmbedQuery(context.Context, string) ([]float32, error) {
	return nil, errors.New("connection refused")
}
func (failingEmbedder) EmbedDocuments(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("connection refused")
}

// TestAnEmbedderThatFailsIsUnavailable: a search whose embedder fails is
// the embedding server's failure (503), not the request's (400).
func TestAnEmbedderThatFailsIsUnavailable(t *testing.T) {
	f := newFixture(t, "", docs)
	f.useEngine(t, search.New(f.srv.rt.Store, search.WithEmbedder(failingEmbedder{})))
	var e struct{ Error string }
	if code := f.call(t, "POST", "/api/search", map[string]any{"query": "rotate keys", "mode": "hybrid"}, &e); code != http.StatusServiceUnavailable || !strings.Contains(e.Error, "connection refused") {
		t.Errorf("hybrid search with the embedder down: %d %q, want 503 naming the cause", code, e.Error)
	}
}

// TestRunsStartWithTheirSettings: the page starts a run with settings of
// its own (limits here: the run is offline), which the run records and
// the run view shows; a server the configuration does not name, a setting
// out of range and a resume of a run that runs are refused with what to
// do.
func TestRunsStartWithTheirSettings(t *testing.T) {
	f := newFixture(t, "", docs)
	var info map[string]any
	if code := f.call(t, "GET", "/api/info", nil, &info); code != http.StatusOK || info["mcpServers"] == nil {
		t.Fatalf("info: %d %v: want the MCP servers a run may name", code, info)
	}
	var started struct{ ID string }
	body := map[string]any{"goal": "understand how to rotate the API keys", "settings": map[string]any{"maxToolCalls": 7, "maxDuration": "3m"}}
	if code := f.call(t, "POST", "/api/runs", body, &started); code != http.StatusAccepted {
		t.Fatalf("start: %d", code)
	}
	f.srv.Wait(context.Background())
	var show struct {
		Settings app.RunSettings
		Outcome  struct{ Status string }
	}
	if code := f.call(t, "GET", "/api/runs/"+started.ID, nil, &show); code != http.StatusOK || show.Settings.Limits.MaxToolCalls != 7 || show.Settings.Limits.MaxDuration != "3m0s" {
		t.Errorf("show: %d, settings %+v", code, show.Settings)
	}
	var e struct{ Error string }
	for _, bad := range []map[string]any{
		{"goal": "research the keys", "mcp": []string{"nowhere"}},
		{"goal": "research the keys", "settings": map[string]any{"temperature": 5}},
		{"goal": "research the keys", "settings": map[string]any{"maxDuration": "soon"}},
	} {
		if code := f.call(t, "POST", "/api/runs", bad, &e); code != http.StatusBadRequest || e.Error == "" {
			t.Errorf("start %v: %d %q, want 400 saying what to do", bad, code, e.Error)
		}
	}
	if !strings.Contains(e.Error, "maxDuration") {
		t.Errorf("a bad duration is not named: %q", e.Error)
	}
}

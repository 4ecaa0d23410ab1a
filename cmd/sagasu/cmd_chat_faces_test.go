package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/agent/react"
	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/web"
)

// TestChatTurnSameOnBothFaces: the same two questions asked with the same
// scripted model through `sagasu chat` and through the web page record the
// same thread: the same events in the same order, with the same steps,
// questions, answers, spans and mode (times, run IDs and latencies aside).
// One chat turn (react.Threads.Turn) lies under both faces.
func TestChatTurnSameOnBothFaces(t *testing.T) {
	dir := docsFixture(t)
	mustRun(t, dir, "index", "docs")
	url := streamingModel(t, "Build the site and upload the dist folder [1].")
	questions := []string{"how do I deploy?", "and on Fridays?"}

	code, _, errs := sagasu(t, dir, strings.Join(questions, "\n")+"\n", "chat", "--llm", "openai", "--llm-url", url, "--llm-model", "m")
	if code != 0 {
		t.Fatalf("chat: exit %d: %s", code, errs)
	}
	m := regexp.MustCompile(`\(thread (chat-\S+)\)`).FindStringSubmatch(errs)
	if m == nil {
		t.Fatalf("chat named no thread: %s", errs)
	}
	cliThread := m[1]

	cfg := app.Defaults()
	cfg.DB = filepath.Join(dir, ".sagasu", "sagasu.db")
	cfg.CacheDir = filepath.Join(dir, "cache")
	cfg.LLM = app.LLMConfig{Driver: "openai", URL: url, Model: "m"}
	a := app.New(cfg, io.Discard, []string{"HOME=" + dir})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rt, err := a.Open(ctx, app.OpenOptions{LongLived: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	srv, err := web.New(ctx, a, rt, web.Options{Listen: "127.0.0.1:7373", Token: "tok", Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	post := func(path string, body any, out any) {
		t.Helper()
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, ts.URL+path, strings.NewReader(string(raw)))
		req.Header.Set("X-Sagasu", "1")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer tok")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode/100 != 2 {
			b, _ := io.ReadAll(res.Body)
			t.Fatalf("POST %s: %d %s", path, res.StatusCode, b)
		}
		if err := json.NewDecoder(res.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
	var th struct{ ID string }
	post("/api/threads", map[string]string{"title": questions[0]}, &th)
	for _, q := range questions {
		var accepted struct{ Mode string }
		post("/api/threads/"+th.ID+"/ask", map[string]string{"question": q}, &accepted)
		if accepted.Mode != "openai/m" {
			t.Errorf("the page answers in mode %q, want openai/m", accepted.Mode)
		}
		srv.Wait(ctx) // the turn runs in the background
	}

	cli, page := recorded(t, rt.Store, cliThread), recorded(t, rt.Store, th.ID)
	if len(cli) == 0 || len(cli) != len(page) {
		t.Fatalf("sagasu chat recorded %d events, the page %d:\n%v\n%v", len(cli), len(page), cli, page)
	}
	t.Logf("%d events recorded by each face", len(cli))
	answers := 0
	for i := range cli {
		if cli[i] != page[i] {
			t.Errorf("event %d differs:\nchat: %s\npage: %s", i, cli[i], page[i])
		}
		if strings.HasPrefix(cli[i], react.ThreadAnswer+" ") {
			answers++
		}
	}
	if answers != len(questions) || !strings.Contains(cli[0], `"mode":"openai/m"`) {
		t.Errorf("recorded %d answers (want %d), first event %s", answers, len(questions), cli[0])
	}
}

// recorded returns a thread's events as "type data", with what differs
// from run to run (times, run IDs, latencies) left out.
func recorded(t *testing.T, runs store.Runs, id string) []string {
	t.Helper()
	evs, err := runs.Events(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		var v any
		if err := json.Unmarshal(e.Data, &v); err != nil {
			t.Fatalf("event %d of %s: %v", e.Seq, id, err)
		}
		b, _ := json.Marshal(stable(v))
		out = append(out, e.Type+" "+string(b))
	}
	return out
}

// stable drops the keys whose values change from run to run.
func stable(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range []string{"run", "time", "latency_ms", "tookMs"} {
			delete(v, k)
		}
		for k, x := range v {
			v[k] = stable(x)
		}
	case []any:
		for i, x := range v {
			v[i] = stable(x)
		}
	}
	return v
}

package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/httpguard/httpguardtest"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// scriptedBrowsing is an OpenAI-compatible model that plays Plan-and-Act's
// roles for a browser goal on site: plan "open the site, open the opening
// hours, read the time"; the executor navigates to the page each of the
// first two steps names and takes a snapshot for the third; the judge
// calls the goal done with the time a snapshot shows.
// The executor's call for step 2 waits until gate is closed (or the
// caller hangs up); step2 hears each such call arrive.
func scriptedBrowsing(t *testing.T, site string) (url string, step2 chan struct{}, gate chan struct{}) {
	step2, gate = make(chan struct{}, 10), make(chan struct{})
	currentStep := regexp.MustCompile(`Current step (\d+):`)
	opens := regexp.MustCompile(`reading room opens at (\d\d:\d\d)`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string `json:"model"`
			Tools    []any  `json:"tools"`
			Messages []struct {
				Content any `json:"content"`
			} `json:"messages"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
			t.Errorf("model request %s: %v", body, err)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		system, last := fmt.Sprint(req.Messages[0].Content), fmt.Sprint(req.Messages[len(req.Messages)-1].Content)
		reply := func(msg string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"x","object":"chat.completion","model":%q,"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant",%s}}],"usage":{"prompt_tokens":50,"completion_tokens":10}}`, req.Model, msg)
		}
		content := func(v any) string {
			b, _ := json.Marshal(v)
			s, _ := json.Marshal(string(b))
			return `"content":` + string(s)
		}
		navigate := func(u string) string {
			args, _ := json.Marshal(map[string]string{"url": u})
			call, _ := json.Marshal([]any{map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "playwright__browser_navigate", "arguments": string(args)}}})
			return `"tool_calls":` + string(call)
		}
		switch {
		case len(req.Tools) > 0:
			m := currentStep.FindStringSubmatch(last)
			if m != nil && m[1] == "2" {
				step2 <- struct{}{}
				select {
				case <-gate:
				case <-r.Context().Done():
					return
				}
				reply(navigate(site + "/hours"))
				return
			}
			if m != nil && m[1] == "3" {
				reply(`"tool_calls":[{"id":"c2","type":"function","function":{"name":"playwright__browser_snapshot","arguments":"{}"}}]`)
				return
			}
			reply(navigate(site + "/"))
		case strings.Contains(system, "judging"):
			// The answer is what the page says, read from the snapshot.
			if m := opens.FindStringSubmatch(last); m != nil {
				reply(content(map[string]string{"decision": "done", "answer": "The reading room opens at " + m[1] + " on Saturdays."}))
				return
			}
			reply(content(map[string]string{"decision": "next", "result": "the site is open"}))
		default:
			reply(content(map[string]any{"plan": []string{"Open the library's site", "Open the opening hours page", "Read when the reading room opens on Saturdays"}}))
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", step2, gate
}

// TestBrowserPlaywrightRunResumedAfterKill: the page starts a Plan-and-Act
// run with the Playwright MCP server (a real browser, chromium, on a site
// on 127.0.0.1) and a scripted model; the server is killed with SIGKILL
// while the run waits for its second step; a new server's page resumes
// the run, which restores its MCP server from the run's recorded settings
// and finishes with the browser, without making the first step's call
// again. Screenshots of both pages go to the artifact folder (docs/img
// with SAGASU_WRITE_SCREENSHOTS=1).
func TestBrowserPlaywrightRunResumedAfterKill(t *testing.T) {
	node, modules := browserTools(t)
	root := repoRoot(t)
	_, err := os.Stat(filepath.Join(root, ".tools", "playwright-mcp", "node_modules", "@playwright", "mcp", "cli.js"))
	testenv.Need(t, err == nil, "Playwright MCP is not installed: run bash scripts/playwright-mcp.sh")

	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<!doctype html><html><head><title>Harbour Library</title></head><body><h1>Harbour Library</h1><p><a href="/hours">Opening hours</a></p></body></html>`)
		case "/hours":
			fmt.Fprint(w, `<!doctype html><html><head><title>Opening hours</title></head><body><h1>Opening hours</h1><p>The reading room opens at 09:30 on Saturdays.</p></body></html>`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	model, step2, gate := scriptedBrowsing(t, site.URL)
	var release sync.Once
	defer release.Do(func() { close(gate) })

	dir := t.TempDir()
	bin := filepath.Join(dir, "sagasu")
	build := exec.Command("go", "build", "-o", bin, "./cmd/sagasu")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build sagasu: %v\n%s", err, out)
	}
	db := filepath.Join(dir, "index.db")
	env := append(os.Environ(), "SAGASU_CACHE_DIR="+filepath.Join(dir, "cache"), "SAGASU_LLM=openai", "SAGASU_LLM_URL="+model,
		"SAGASU_LLM_MODEL=scripted", "OPENAI_API_KEY=sk-test", "SAGASU_PLAYWRIGHT_TOOLS="+filepath.Join(root, ".tools"),
		"SAGASU_INDEX_ALLOW_PRIVATE=true")
	index := exec.Command(bin, "--db", db, "index", writeDocs(t, filepath.Join(dir, "docs")))
	index.Env = env
	if out, err := index.CombinedOutput(); err != nil {
		t.Fatalf("index: %v\n%s", err, out)
	}
	// serve starts `sagasu serve` and returns it, the link it prints (with
	// its token, as the user clicks it) and what it prints.
	exited := map[*exec.Cmd]chan struct{}{}
	serve := func() (*exec.Cmd, string, *httpguardtest.Output) {
		cmd := exec.Command(bin, "--db", db, "serve", "--listen", "127.0.0.1:0")
		cmd.Env = env
		pr, pw := io.Pipe()
		cmd.Stdout, cmd.Stderr = pw, pw
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		exited[cmd] = done
		go func() { _ = cmd.Wait(); pw.Close(); close(done) }()
		link, log := httpguardtest.Watch(t, pr, linkRE)
		return cmd, link, log
	}
	out := os.Getenv("SAGASU_ARTIFACTS")
	if out == "" {
		out = t.TempDir()
	}
	var current *exec.Cmd // the server running now
	goal := "On the Harbour Library site at " + site.URL + "/ find out when the reading room opens on Saturdays"
	page := func(mode, link string, log *httpguardtest.Output) map[string]any {
		cmd := exec.Command(node, filepath.Join("testdata", "playwright-run.mjs"), mode, link, out, goal)
		cmd.Env = append(os.Environ(), "SAGASU_WEB_TEST_MODULES="+modules)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		runErr := cmd.Run()
		line := strings.TrimSpace(stdout.String())
		if i := strings.LastIndexByte(line, '\n'); i >= 0 {
			line = line[i+1:]
		}
		var rep map[string]any
		if err := json.Unmarshal([]byte(line), &rep); err != nil || runErr != nil {
			var runs []map[string]any
			getJSON(t, link, "api/runs", &runs)
			for _, r := range runs {
				var shown any
				getJSON(t, link, "api/runs/"+fmt.Sprint(r["id"]), &shown)
				b, _ := json.Marshal(shown)
				_ = os.WriteFile(filepath.Join(out, "run.json"), b, 0o644)
				t.Logf("the run's log is in %s", filepath.Join(out, "run.json"))
			}
			if current != nil {
				// A goroutine dump of the server, for what it waits on.
				_ = current.Process.Signal(syscall.SIGQUIT)
				<-exited[current]
				_ = os.WriteFile(filepath.Join(out, "serve.log"), []byte(log.String()), 0o644)
			}
			t.Fatalf("%s in the page: %v %v: %s\nstderr: %s\nserver: %s", mode, runErr, err, stdout.String(), stderr.String(), log.String())
		}
		if errs, _ := rep["errors"].([]any); len(errs) > 0 {
			t.Errorf("the page logged console errors: %v", errs)
		}
		return rep
	}

	first, link, log := serve()
	current = first
	started := page("start", link, log)
	t.Logf("started from the page: %v", started)
	if !strings.Contains(fmt.Sprint(started["settings"]), "MCP: playwright") {
		t.Errorf("the page does not show the run's MCP server: %v", started["settings"])
	}
	select {
	case <-step2:
	case <-time.After(3 * time.Minute):
		t.Fatalf("the run never asked for its second step\nserver: %s", log.String())
	}
	// The run waits on the model for step 2: kill the server outright.
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	release.Do(func() { close(gate) })

	<-exited[first]
	second, link, log := serve()
	current = second
	defer func() { _ = second.Process.Kill(); <-exited[second] }()
	resumed := page("resume", link, log)
	t.Logf("resumed from the page: %v", resumed)
	if !strings.Contains(fmt.Sprint(resumed["status"]), "success") || !strings.Contains(fmt.Sprint(resumed["answer"]), "09:30") {
		t.Fatalf("the resumed run: %v\nserver: %s", resumed, log.String())
	}

	// The run's log: its recorded MCP server, one navigation per step
	// (the first step's call was not made again), the answer.
	var runs []struct {
		ID string `json:"id"`
	}
	getJSON(t, link, "api/runs", &runs)
	if len(runs) != 1 {
		t.Fatalf("%d runs listed, want 1", len(runs))
	}
	var shown struct {
		Settings struct {
			MCP []string `json:"mcp"`
		} `json:"settings"`
		Outcome struct {
			Status string `json:"status"`
		} `json:"outcome"`
		Events []struct {
			Type      string          `json:"type"`
			Tool      string          `json:"tool"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"events"`
	}
	getJSON(t, link, "api/runs/"+runs[0].ID, &shown)
	var navigations []string
	for _, ev := range shown.Events {
		if ev.Type == "action" && ev.Tool == "playwright__browser_navigate" {
			navigations = append(navigations, string(ev.Arguments))
		}
	}
	if len(shown.Settings.MCP) != 1 || shown.Settings.MCP[0] != "playwright" || shown.Outcome.Status != "success" ||
		len(navigations) != 2 || !strings.Contains(navigations[0], site.URL+"/\"") || !strings.Contains(navigations[1], "/hours") {
		t.Errorf("the run's log: settings %v, outcome %q, navigations %q", shown.Settings.MCP, shown.Outcome.Status, navigations)
	}
	if os.Getenv("SAGASU_WRITE_SCREENSHOTS") == "1" {
		for _, name := range []string{"runs-playwright", "runs-playwright-resumed"} {
			b, err := os.ReadFile(filepath.Join(out, name+".png"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "docs", "img", "web-"+name+".png"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// getJSON reads path of the server behind link (its #token= link) into
// into, with the token.
func getJSON(t *testing.T, link, path string, into any) {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u.Scheme+"://"+u.Host+"/"+path, nil)
	client := &http.Client{Transport: httpguardtest.Bearer(httpguardtest.LinkToken(u), nil)}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(into); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", path, res.StatusCode, err)
	}
}

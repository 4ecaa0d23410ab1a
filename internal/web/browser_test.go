package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/httpguard/httpguardtest"
)

// repoRoot is the repository's root, two folders up from this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// needs skips the test when an external part is missing, or fails it
// under CI=true.
func needs(t *testing.T, ok bool, msg string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// TestBrowser drives `sagasu serve` in Debian's chromium: ask offline and
// see the answer, its citations and trace; open a citation; search and
// evaluate; start a research run and watch it finish; no console errors.
// It prints the time to the first trace event and to the answer.
func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test is not short")
	}
	root := repoRoot(t)
	modules := filepath.Join(root, ".tools", "web-test", "node_modules")
	_, err := os.Stat(filepath.Join(modules, "playwright-core"))
	needs(t, err == nil, "playwright-core is not installed: run bash scripts/web-test.sh")
	_, err = os.Stat("/usr/bin/chromium")
	needs(t, err == nil, "/usr/bin/chromium is missing: run bash scripts/playwright-mcp.sh")
	node, err := exec.LookPath("node")
	needs(t, err == nil, "node is not installed (apt-get install nodejs)")

	dir := t.TempDir()
	bin := filepath.Join(dir, "sagasu")
	build := exec.Command("go", "build", "-o", bin, "./cmd/sagasu")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build sagasu: %v\n%s", err, out)
	}
	db := filepath.Join(dir, "index.db")
	// The shared data sits beside the repository (../shared/data), or
	// beside the folder of worktrees.
	docs := ""
	for _, up := range []string{"..", filepath.Join("..", "..")} {
		d := filepath.Join(root, up, "shared", "data", "vitepress-docs", "en")
		if _, err := os.Stat(d); err == nil {
			docs = d
			break
		}
	}
	question, query, goal := "How do I deploy to GitHub Pages?", "sidebar", "understand how to configure the sidebar"
	if docs == "" {
		docs = writeDocs(t, filepath.Join(dir, "docs"))
		question, query, goal = "How do I rotate the API keys?", "keys", "understand how to rotate the API keys"
	}
	env := append(os.Environ(), "SAGASU_LLM=", "SAGASU_CACHE_DIR="+filepath.Join(dir, "cache"))
	index := exec.Command(bin, "--db", db, "index", docs)
	index.Env = env
	if out, err := index.CombinedOutput(); err != nil {
		t.Fatalf("index %s: %v\n%s", docs, err, out)
	}

	// A document that tries to run script in the page: it must show as text.
	hostile := filepath.Join(dir, "hostile")
	if err := os.MkdirAll(hostile, 0o755); err != nil {
		t.Fatal(err)
	}
	attack := "# Zebraquux\n\nThe zebraquux marker <img src=x onerror=\"window.__pwned=1\"> is here <script>window.__pwned=1</script> and [a link](javascript:window.__pwned=1).\n"
	if err := os.WriteFile(filepath.Join(hostile, "zebraquux.md"), []byte(attack), 0o644); err != nil {
		t.Fatal(err)
	}
	index = exec.Command(bin, "--db", db, "index", hostile)
	index.Env = env
	if out, err := index.CombinedOutput(); err != nil {
		t.Fatalf("index %s: %v\n%s", hostile, err, out)
	}

	// A folder the Index tab adds while the page is open.
	extra := filepath.Join(dir, "extra")
	if err := os.MkdirAll(extra, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(extra, "added.md"), []byte("# Added from the page\n\nThis page was added with the Index tab.\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	serve := exec.CommandContext(ctx, bin, "--db", db, "serve", "--listen", "127.0.0.1:0", "--root", extra)
	serve.Env = env
	pr, pw := io.Pipe()
	serve.Stdout, serve.Stderr = pw, pw
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = serve.Wait(); pw.Close() }()
	// The user clicks the link serve prints, token and all.
	base, serveLog := httpguardtest.Watch(t, pr, linkRE)

	out := os.Getenv("SAGASU_ARTIFACTS")
	if out == "" {
		out = t.TempDir()
	}
	run := exec.Command(node, filepath.Join("testdata", "browser.mjs"), base, out, question, query, goal, extra)
	run.Env = append(os.Environ(), "SAGASU_WEB_TEST_MODULES="+modules)
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	runErr := run.Run()
	var rep struct {
		Errors          []string `json:"errors"`
		Failure         string   `json:"failure"`
		FirstTraceMs    int64    `json:"firstTraceMs"`
		AnswerMs        int64    `json:"answerMs"`
		TraceSteps      int      `json:"traceSteps"`
		Citations       int      `json:"citations"`
		SupportedClaims int      `json:"supportedClaims"`
		Answer          string   `json:"answer"`
		CitedPassage    int      `json:"citedPassage"`
		Results         int      `json:"results"`
		Highlights      int      `json:"highlights"`
		Run             string   `json:"run"`
		RunMs           int64    `json:"runMs"`
		PlanSteps       int      `json:"planSteps"`
		Injected        []string `json:"injected"`
		HostileAnswer   string   `json:"hostileAnswer"`
		Indexed         string   `json:"indexed"`
		URLAfterLink    string   `json:"urlAfterLink"`
		ScriptCookies   string   `json:"scriptCookies"`
	}
	line := strings.TrimSpace(stdout.String())
	if i := strings.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:]
	}
	if err := json.Unmarshal([]byte(line), &rep); err != nil {
		t.Fatalf("the browser script printed no report (%v): %s\nstderr: %s\nserver: %s", runErr, stdout.String(), stderr.String(), serveLog)
	}
	t.Logf("screenshots in %s", out)
	fmt.Printf("web (offline): first trace event after %d ms, answer after %d ms in the browser; research run finished after %d ms\n", rep.FirstTraceMs, rep.AnswerMs, rep.RunMs)
	if rep.Failure != "" {
		t.Fatalf("a step failed: %s\nserver: %s", rep.Failure, serveLog)
	}
	if strings.Contains(rep.URLAfterLink, "token") || rep.ScriptCookies != "" {
		t.Errorf("after the link the address is %q and scripts see cookies %q: want the token gone from both", rep.URLAfterLink, rep.ScriptCookies)
	}
	if len(rep.Errors) > 0 {
		t.Errorf("the page logged console errors: %q", rep.Errors)
	}
	if rep.TraceSteps < 3 || rep.Citations == 0 || rep.SupportedClaims == 0 || rep.Answer == "" {
		t.Errorf("the answer came without its trace, citations or checked claims: %+v", rep)
	}
	if !strings.Contains(rep.Indexed, "1 added") {
		t.Errorf("adding a folder in the Index tab reported %q, want one source added", rep.Indexed)
	}
	if len(rep.Injected) > 0 || !strings.Contains(rep.HostileAnswer, "zebraquux") {
		t.Errorf("document text became markup in the page: %q (answer %q)", rep.Injected, rep.HostileAnswer)
	}
	if rep.CitedPassage == 0 {
		t.Errorf("opening a citation showed no passage")
	}
	if rep.Results == 0 || rep.Highlights == 0 {
		t.Errorf("the search showed %d results with %d highlighted words", rep.Results, rep.Highlights)
	}
	if !strings.Contains(rep.Run, "success") && !strings.Contains(rep.Run, "failure") || rep.PlanSteps == 0 {
		t.Errorf("the research run did not finish with a plan: %q, %d plan steps", rep.Run, rep.PlanSteps)
	}
	if os.Getenv("SAGASU_WRITE_SCREENSHOTS") == "1" {
		img := filepath.Join(root, "docs", "img")
		if err := os.MkdirAll(img, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"chat", "citation", "search", "runs", "cache", "index"} {
			b, err := os.ReadFile(filepath.Join(out, name+".png"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(img, "web-"+name+".png"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

var linkRE = regexp.MustCompile(`http://127\.0\.0\.1:\d+/\?token=[0-9a-f]+`)

// writeDocs writes a few documents for when the shared data is absent.
func writeDocs(t *testing.T, dir string) string {
	t.Helper()
	docs := map[string]string{
		"keys.md":    "# API keys\n\n## Rotate the keys\n\nTo rotate the API keys, run `acme keys rotate` and restart the server. The old keys stop working after one hour.\n",
		"deploy.md":  "# Deploy\n\nDeploy the site with `acme deploy`. The deploy command uploads the build folder to the configured bucket.\n",
		"sidebar.md": "# Sidebar\n\nThe sidebar lists the pages of a section. Configure the sidebar in config.yaml under `sidebar:`.\n",
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range docs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

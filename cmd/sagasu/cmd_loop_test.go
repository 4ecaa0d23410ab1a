package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// agentCLI runs one command line in dir with the loop, plan, cache and eval
// goals commands registered (whether or not main.go registers them yet) and
// returns the exit code and output, as run does.
func agentCLI(t *testing.T, dir, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	g := &globals{stdout: &out, stderr: &errb, stdin: strings.NewReader(stdin), environ: []string{"HOME=" + dir}}
	root := newRootCmd(g)
	has := func(parent *cobra.Command, name string) bool {
		for _, c := range parent.Commands() {
			if c.Name() == name {
				return true
			}
		}
		return false
	}
	for _, c := range []*cobra.Command{newLoopCmd(g), newPlanCmd(g), newCacheCmd(g)} {
		if !has(root, c.Name()) {
			root.AddCommand(c)
		}
	}
	for _, c := range root.Commands() {
		if c.Name() == "eval" && !has(c, "goals") {
			c.AddCommand(newEvalGoalsCmd(g))
		}
	}
	root.SetArgs(args)
	root.SetIn(g.stdin)
	root.SetOut(&out)
	root.SetErr(&errb)
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	err := root.ExecuteContext(context.Background())
	code := exitOK
	if err != nil {
		errb.WriteString("sagasu: " + err.Error() + "\n")
		code = exitError
		var ue usageError
		if errors.As(err, &ue) {
			code = exitUsage
		}
	}
	return code, out.String(), errb.String()
}

func mustAgentCLI(t *testing.T, dir string, args ...string) string {
	t.Helper()
	code, out, errs := agentCLI(t, dir, "", args...)
	if code != 0 {
		t.Fatalf("sagasu %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// loopDocs is a small documentation folder: one query for "deploy" misses
// the sitemap page.
var loopDocs = map[string]string{
	"docs/deploy.md":     "# Deploy Your Site\n\nBuild the site and upload the dist folder.\n\n## HTTP Cache Headers\n\nServe hashed assets with Cache-Control: immutable.\n\n## GitHub Pages\n\nCreate a workflow that builds and publishes the site.\n",
	"docs/sitemap.md":    "# Sitemap Generation\n\nSet sitemap.hostname in the config to generate sitemap.xml when the site is built.\n",
	"docs/routing.md":    "# Routing\n\nPages map to files.\n\n## Clean URLs\n\nSet cleanUrls to drop the .html extension.\n",
	"docs/ja/sitemap.md": "# サイトマップ生成\n\n設定ファイルで sitemap.hostname を指定すると sitemap.xml を生成します。\n",
}

// indexedDir writes loopDocs into a fresh folder and indexes them there.
func indexedDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range loopDocs {
		write(t, filepath.Join(dir, name), content)
	}
	mustAgentCLI(t, dir, "index", "docs")
	return dir
}

const cliGoal = "Deploy to GitHub Pages, generate a sitemap, and set HTTP cache headers"

func TestLoopCommandJSON(t *testing.T) {
	dir := indexedDir(t)
	out := mustAgentCLI(t, dir, "loop", "--goal", cliGoal, "--query", "deploy", "-k", "4", "--json")
	var res struct {
		Goal       string   `json:"goal"`
		Aspects    []string `json:"aspects"`
		Iterations []struct {
			Query          string   `json:"query"`
			Confidence     float64  `json:"confidence"`
			MissingAspects []string `json:"missingAspects"`
			Action         string   `json:"action"`
			RefinedQuery   string   `json:"refinedQuery"`
		} `json:"iterations"`
		FinalQuery string            `json:"finalQuery"`
		Results    []json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	n := len(res.Iterations)
	if res.Goal != cliGoal || len(res.Aspects) != 3 || n < 2 || res.Iterations[0].Query != "deploy" {
		t.Fatalf("loop JSON: %s", out)
	}
	if last := res.Iterations[n-1]; last.Action != "use_results" || len(last.MissingAspects) != 0 || res.FinalQuery != last.Query {
		t.Fatalf("last iteration %+v, final query %q", last, res.FinalQuery)
	}
	if len(res.Results) == 0 || len(res.Results) > 4 {
		t.Fatalf("%d results", len(res.Results))
	}
	// Each result has exactly the keys of a `sagasu query --json` result.
	qout := mustAgentCLI(t, dir, "query", "--json", "-k", "1", "sitemap")
	var q struct {
		Results []map[string]json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal([]byte(qout), &q); err != nil || len(q.Results) != 1 {
		t.Fatalf("query --json: %v %s", err, qout)
	}
	var r map[string]json.RawMessage
	if err := json.Unmarshal(res.Results[0], &r); err != nil {
		t.Fatal(err)
	}
	for key := range q.Results[0] {
		if _, ok := r[key]; !ok {
			t.Errorf("loop result lacks %q, which query --json has", key)
		}
	}
	if len(r) != len(q.Results[0]) {
		t.Errorf("loop result keys %d, query result keys %d", len(r), len(q.Results[0]))
	}
	// Every step went to the agent cache beside the index.
	sessions, _ := filepath.Glob(filepath.Join(dir, ".sagasu", "cache", "agent", "sessions", "session-*.json"))
	evals, _ := filepath.Glob(filepath.Join(dir, ".sagasu", "cache", "agent", "evaluations", "eval-*.json"))
	if len(sessions) != 1 || len(evals) != n {
		t.Fatalf("cache: %d sessions, %d evaluations for %d iterations", len(sessions), len(evals), n)
	}
}

func TestLoopCommandTrace(t *testing.T) {
	dir := indexedDir(t)
	cacheDir := filepath.Join(dir, "elsewhere")
	out := mustAgentCLI(t, dir, "loop", "--goal", "サイトマップを生成する", "--cache-dir", cacheDir)
	for _, want := range []string{"goal     サイトマップを生成する", "aspects  サイトマップ", "1. query", "confidence", "stopped", "sitemap"} {
		if !strings.Contains(out, want) {
			t.Errorf("trace lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(cacheDir, "agent-cache.md")); err != nil {
		t.Errorf("--cache-dir not used: %v", err)
	}
	// Retention: the oldest records beyond the bound go.
	for i := 0; i < 3; i++ {
		mustAgentCLI(t, dir, "loop", "--goal", "sitemap", "--cache-dir", cacheDir, "--cache-retention", "2")
	}
	if sessions, _ := filepath.Glob(filepath.Join(cacheDir, "sessions", "*.json")); len(sessions) != 2 {
		t.Errorf("%d sessions kept; want 2", len(sessions))
	}
	mustAgentCLI(t, dir, "loop", "--goal", "sitemap", "--no-cache", "--db", filepath.Join(dir, ".sagasu", "sagasu.db"))
	if _, err := os.Stat(filepath.Join(dir, ".sagasu", "cache")); !os.IsNotExist(err) {
		t.Errorf("--no-cache wrote a cache: %v", err)
	}
}

func TestLoopCommandBadInput(t *testing.T) {
	dir := indexedDir(t)
	for _, tt := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"loop"}, exitUsage, "--goal is required"},
		{[]string{"loop", "--goal", "   "}, exitUsage, "--goal is required"},
		// Checked by sagasu_loop's schema, as over MCP: the argument named.
		{[]string{"loop", "--goal", "x", "-k", "0"}, exitUsage, "k: got 0"},
		{[]string{"loop", "--goal", "x", "-k", "11"}, exitUsage, "k: got 11"},
		{[]string{"loop", "--goal", "x", "--max-iterations", "0"}, exitUsage, "maxIterations"},
		{[]string{"loop", "--goal", "x", "--min-confidence", "1.5"}, exitUsage, "minConfidence"},
		{[]string{"loop", "--goal", "x", "--glob", "[oops"}, exitUsage, "glob"},
		{[]string{"loop", "--goal", "x", "--cache-retention", "0"}, exitUsage, "--cache-retention"},
		{[]string{"loop", "--goal", "x", "--db", filepath.Join(dir, "none.db")}, exitError, "index"},
	} {
		code, _, errs := agentCLI(t, dir, "", tt.args...)
		if code != tt.code || !strings.Contains(errs, tt.msg) {
			t.Errorf("%v: exit %d, %q; want exit %d mentioning %q", tt.args, code, errs, tt.code, tt.msg)
		}
	}
	// A goal the index has no words for: a clear stop, not an error.
	out := mustAgentCLI(t, dir, "loop", "--goal", "Kubernetes operators", "--no-cache")
	if !strings.Contains(out, "index_more") {
		t.Errorf("unindexed goal:\n%s", out)
	}
}

func TestLoopCommandLiveTrace(t *testing.T) {
	dir := indexedDir(t)
	code, out, errs := agentCLI(t, dir, "", "loop", "--goal", cliGoal, "--query", "deploy", "-k", "4", "--json", "--verbose")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res struct {
		Iterations []struct {
			Query string `json:"query"`
		} `json:"iterations"`
		Stopped string `json:"stopped"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("stdout is not the JSON alone: %v\n%s", err, out)
	}
	// stderr traces every search as it ran, then the stop.
	for i, it := range res.Iterations {
		if want := fmt.Sprintf("[%d] search   %q", i+1, it.Query); !strings.Contains(errs, want) {
			t.Errorf("trace lacks %s:\n%s", want, errs)
		}
	}
	if !strings.Contains(errs, "stop     "+res.Stopped) || !strings.Contains(errs, "evaluate confidence") {
		t.Errorf("trace lacks the evaluation or the stop:\n%s", errs)
	}
	// Without --verbose (and no terminal) stderr stays quiet.
	if _, _, quiet := agentCLI(t, dir, "", "loop", "--goal", cliGoal, "--query", "deploy", "-k", "4", "--json"); strings.Contains(quiet, "search   ") {
		t.Errorf("trace without --verbose:\n%s", quiet)
	}
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/agent/react/reacteval"
	"github.com/sagasu-dev/sagasu/internal/loop/loopeval"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// TestEvalGoalsCommand runs the measurement the issue asks for on the real
// corpus: the loop covers more labelled aspects than one query and than the
// goal text, and never fewer than one query on any goal, with no exception.
func TestEvalGoalsCommand(t *testing.T) {
	wd, _ := os.Getwd()
	docs := testenv.Shared(t, "vitepress-docs")
	set := filepath.Join(wd, "../../testdata/goals/vitepress.json")
	dir := t.TempDir()
	out := mustAgentCLI(t, dir, "eval", "goals", "--set", set, "--docs", docs, "--json")
	var rep loopeval.GoalReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(rep.Goals) < 8 || rep.K != 10 {
		t.Fatalf("%d goals, k %d", len(rep.Goals), rep.K)
	}
	av := rep.Average
	if av.Loop <= av.Single || av.Loop <= av.GoalText || len(rep.LoopWorseThanSingle) > 0 {
		t.Errorf("loop %.3f, single %.3f, goal text %.3f, worse than one query on %v", av.Loop, av.Single, av.GoalText, rep.LoopWorseThanSingle)
	}
	text := mustAgentCLI(t, dir, "eval", "goals", "--set", set, "--docs", docs)
	for _, want := range []string{"single", "goal text", "loop", "average", "calibration", "ja-config"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("eval goals left files in the working folder: %v", entries)
	}
}

func TestEvalGoalsCommandBadInput(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "set.json"), `{"goals": []}`)
	write(t, filepath.Join(dir, "docs", "a.md"), "# A\n")
	for _, tt := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"eval", "goals"}, exitUsage, "--set and --docs are required"},
		{[]string{"eval", "goals", "--set", "set.json", "--docs", "docs"}, exitError, "no goals"},
		{[]string{"eval", "goals", "--set", "missing.json", "--docs", "docs"}, exitError, "read goal set"},
		{[]string{"eval", "goals", "--set", "set.json", "--docs", "docs", "-k", "0"}, exitUsage, "out of range"},
	} {
		code, _, errs := agentCLI(t, dir, "", tt.args...)
		if code != tt.code || !strings.Contains(errs, tt.msg) {
			t.Errorf("%v: exit %d, %q; want exit %d mentioning %q", tt.args, code, errs, tt.code, tt.msg)
		}
	}
	write(t, filepath.Join(dir, "one.json"), `{"goals": [{"id": "a", "goal": "g", "query": "q", "aspects": [{"name": "x", "pages": ["a.md"]}]}]}`)
	code, _, errs := agentCLI(t, dir, "", "eval", "goals", "--set", "one.json", "--docs", "nowhere")
	if code != exitError || !strings.Contains(errs, "nowhere") {
		t.Errorf("missing docs: exit %d, %q", code, errs)
	}
}

// TestEvalAskCommand runs the offline answerer on the project's questions
// over the real corpus, and measures the research brain beside the loop.
func TestEvalAskCommand(t *testing.T) {
	wd, _ := os.Getwd()
	docs := testenv.Shared(t, "vitepress-docs")
	dir := t.TempDir()
	out := mustAgentCLI(t, dir, "eval", "ask", "--set", filepath.Join(wd, "../../testdata/ask/vitepress.json"), "--docs", docs, "--json")
	var rep reacteval.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Questions != 15 || len(rep.Scores) != 15 || rep.WithPage*10 < rep.Questions*9 {
		t.Errorf("report: %d questions, %d cite an expected page", rep.Questions, rep.WithPage)
	}
	text := mustAgentCLI(t, dir, "eval", "ask", "--set", filepath.Join(wd, "../../testdata/ask/vitepress.json"), "--docs", docs)
	for _, want := range []string{"question", "fact", "node-version", "expected page cited"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	code, _, errs := agentCLI(t, dir, "", "eval", "ask", "--set", "missing.json", "--docs", docs)
	if code != exitError || !strings.Contains(errs, "read question set") {
		t.Errorf("missing set: exit %d, %q", code, errs)
	}

	goals := mustAgentCLI(t, dir, "eval", "goals", "--research", "--set", filepath.Join(wd, "../../testdata/goals/vitepress-holdout.json"), "--docs", docs, "--json")
	var grep loopeval.GoalReport
	if err := json.Unmarshal([]byte(goals), &grep); err != nil {
		t.Fatal(err)
	}
	for _, g := range grep.Goals {
		if g.Research == nil || g.Research.Aspects == 0 {
			t.Errorf("goal %s has no research coverage: %+v", g.ID, g.Research)
		}
	}
	if grep.Average.Research <= 0 {
		t.Errorf("research average %.3f", grep.Average.Research)
	}
}

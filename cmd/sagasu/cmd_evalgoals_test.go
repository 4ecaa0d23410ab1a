package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/loop"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// TestEvalGoalsCommand runs the measurement the issue asks for on the real
// corpus: the loop covers more labelled aspects than one query and than the
// goal text, and never fewer than one query on any goal.
func TestEvalGoalsCommand(t *testing.T) {
	wd, _ := os.Getwd()
	docs := testenv.Shared(t, "vitepress-docs")
	set := filepath.Join(wd, "../../testdata/goals/vitepress.json")
	dir := t.TempDir()
	out := mustAgentCLI(t, dir, "eval", "goals", "--set", set, "--docs", docs, "--json")
	var rep loop.GoalReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(rep.Goals) < 8 || rep.K != 10 {
		t.Fatalf("%d goals, k %d", len(rep.Goals), rep.K)
	}
	av := rep.Average
	if av.Loop <= av.Single || av.Loop <= av.GoalText || len(rep.UnexpectedWorse()) > 0 {
		t.Errorf("loop %.3f, single %.3f, goal text %.3f, worse on %v (known: KnownWorseThanSingle)", av.Loop, av.Single, av.GoalText, rep.LoopWorseThanSingle)
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

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlanCommand(t *testing.T) {
	dir := indexedDir(t)
	out := mustAgentCLI(t, dir, "plan", "--goal", cliGoal, "-k", "3", "--json")
	var res planOutput
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(res.Plan.Stages) != 3 || len(res.Stages) != 3 {
		t.Fatalf("%d stages planned, %d run", len(res.Plan.Stages), len(res.Stages))
	}
	for i, s := range res.Stages {
		if s.StageIndex != i || !s.Success || len(s.Results) == 0 || len(s.Results) > 3 || s.Next.Reason == "" {
			t.Errorf("stage %d: %+v", i, s)
		}
	}
	if res.Stages[2].ShouldContinue && res.Stages[2].Evaluation.IsSuccessful {
		t.Errorf("the last successful stage says to continue")
	}

	// An agent's plan, saved and run one stage at a time.
	plain := mustAgentCLI(t, dir, "plan", "--goal", cliGoal, "--no-run", "--json")
	planFile := filepath.Join(dir, "plan.json")
	write(t, planFile, plain)
	one := mustAgentCLI(t, dir, "plan", "--plan", planFile, "--stage-index", "1", "--json")
	var single planOutput
	if err := json.Unmarshal([]byte(one), &single); err != nil || len(single.Stages) != 1 || single.Stages[0].StageIndex != 1 {
		t.Fatalf("one stage: %v %s", err, one)
	}
	// From stdin too.
	if code, out, errs := agentCLI(t, dir, plain, "plan", "--plan", "-", "--stage-index", "0"); code != 0 || !strings.Contains(out, "stage 1:") {
		t.Fatalf("plan from stdin: exit %d\n%s\n%s", code, out, errs)
	}
	// The readable form.
	text := mustAgentCLI(t, dir, "plan", "--goal", cliGoal, "--no-run")
	if !strings.Contains(text, "stage 1 (index 0)") || !strings.Contains(text, "expect") {
		t.Errorf("plan text:\n%s", text)
	}
	stages, _ := filepath.Glob(filepath.Join(dir, ".sagasu", "cache", "agent", "stages", "stage-*.json"))
	if len(stages) != 5 {
		t.Errorf("%d stage records; want 5 (3 + 1 + 1)", len(stages))
	}
}

func TestPlanCommandBadInput(t *testing.T) {
	dir := indexedDir(t)
	plain := mustAgentCLI(t, dir, "plan", "--goal", cliGoal, "--no-run", "--json")
	good := filepath.Join(dir, "plan.json")
	write(t, good, plain)
	write(t, filepath.Join(dir, "broken.json"), `{"id": "p", "goal": "g", "stages": [{"stageNumber": 2, "query": "x"}]}`)
	write(t, filepath.Join(dir, "empty.json"), `{"id": "p", "goal": "g", "stages": []}`)
	write(t, filepath.Join(dir, "junk.json"), `stages: [`)
	before, _ := filepath.Glob(filepath.Join(dir, ".sagasu", "cache", "agent", "*", "*.json"))
	for _, tt := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"plan"}, exitUsage, "either --goal"},
		{[]string{"plan", "--goal", "x", "--plan", good}, exitUsage, "either --goal"},
		{[]string{"plan", "--goal", "  "}, exitUsage, "--goal is empty"},
		{[]string{"plan", "--plan", good, "--stage-index", "9"}, exitError, "out of range"},
		{[]string{"plan", "--plan", good, "--stage-index", "-1"}, exitError, "out of range"},
		{[]string{"plan", "--plan", filepath.Join(dir, "broken.json")}, exitError, "malformed plan: stage 1 (index 0) has stageNumber 2"},
		{[]string{"plan", "--plan", filepath.Join(dir, "empty.json")}, exitError, "malformed plan: it has no stages"},
		{[]string{"plan", "--plan", filepath.Join(dir, "junk.json")}, exitError, "malformed plan"},
		{[]string{"plan", "--plan", filepath.Join(dir, "missing.json")}, exitError, "read plan"},
		{[]string{"plan", "--goal", "x", "--timeout", "0s"}, exitUsage, "--timeout"},
	} {
		code, _, errs := agentCLI(t, dir, "", tt.args...)
		if code != tt.code || !strings.Contains(errs, tt.msg) {
			t.Errorf("%v: exit %d, %q; want exit %d mentioning %q", tt.args, code, errs, tt.code, tt.msg)
		}
	}
	after, _ := filepath.Glob(filepath.Join(dir, ".sagasu", "cache", "agent", "*", "*.json"))
	if len(after) != len(before) {
		t.Errorf("bad input changed the cache: %d records before, %d after", len(before), len(after))
	}
	if _, err := os.Stat(good); err != nil {
		t.Fatal(err)
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestAgentSettingsRecordedAndShown: a run started with limits on the
// command line records them; `agent show` prints them (and --json has
// them); `agent resume` runs with them unless told otherwise, and records
// what it was told.
func TestAgentSettingsRecordedAndShown(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a", "b"} {
		write(t, filepath.Join(dir, name+".md"), "# Sidebar "+name+"\n\n## Configure the sidebar\n\nSet the sidebar in config.js.\n\n## Theme\n\nThe theme is set in the theme config.\n")
	}
	mustRun(t, dir, "index", "a.md", "b.md")
	out := mustRun(t, dir, "agent", "run", "--offline", "--max-tool-calls", "1", "--max-duration", "7m", "--goal", "configure the sidebar and the theme")
	id := regexp.MustCompile(`run (planact-\S+): stopped`).FindStringSubmatch(out)
	if id == nil {
		t.Fatalf("a run with one tool call did not stop at its limit:\n%s", out)
	}
	show := mustRun(t, dir, "agent", "show", id[1])
	if !strings.Contains(show, "limits      1 tool calls, 7m0s per start or resume") {
		t.Errorf("agent show does not print the recorded limits:\n%s", show)
	}
	// The resume keeps the recorded duration and takes the new call limit.
	out = mustRun(t, dir, "agent", "resume", id[1], "--max-tool-calls", "20")
	if !strings.Contains(out, ": success") {
		t.Errorf("resume with room for more tool calls:\n%s", out)
	}
	var rec struct {
		Settings struct {
			Offline bool `json:"offline"`
			Limits  struct {
				MaxToolCalls int    `json:"maxToolCalls"`
				MaxDuration  string `json:"maxDuration"`
			} `json:"limits"`
		} `json:"settings"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, dir, "--json", "agent", "show", id[1])), &rec); err != nil {
		t.Fatal(err)
	}
	if s := rec.Settings; !s.Offline || s.Limits.MaxToolCalls != 20 || s.Limits.MaxDuration != "7m0s" {
		t.Errorf("recorded settings after the resume: %+v", s)
	}
}

// TestInterruptedRunExitsInterrupted: a run whose context ends (Ctrl-C)
// while the planner waits for its model prints its stopped result as the
// one JSON document and exits 130, not 0, so a script can tell it from a
// finished run.
func TestInterruptedRunExitsInterrupted(t *testing.T) {
	dir := docsFixture(t)
	mustRun(t, dir, "index", "docs")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	release := make(chan struct{})
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cancel() // Ctrl-C while the model thinks
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer model.Close()
	defer close(release)
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	var out, errb bytes.Buffer
	args := []string{"--json", "agent", "run", "--llm", "openai", "--llm-url", model.URL + "/v1", "--llm-model", "m", "--goal", "how are pages routed"}
	code := run(ctx, args, strings.NewReader(""), &out, &errb, []string{"HOME=" + dir})
	if code != exitInterrupted {
		t.Fatalf("exit %d, want %d; stdout %s stderr %s", code, exitInterrupted, out.String(), errb.String())
	}
	var res struct {
		Run     string `json:"run"`
		Outcome string `json:"outcome"`
	}
	dec := json.NewDecoder(&out)
	if err := dec.Decode(&res); err != nil || res.Outcome != "stopped" || res.Run == "" {
		t.Fatalf("stdout is not the stopped run (%v): %+v\n%s\nstderr %s", err, res, out.String(), errb.String())
	}
	if dec.More() {
		t.Errorf("stdout holds more than the run's one JSON document: %s", out.String())
	}
	if !strings.Contains(errb.String(), "sagasu agent resume "+res.Run) {
		t.Errorf("stderr does not say how to continue: %s", errb.String())
	}
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/agentcache"
)

func TestCacheCommand(t *testing.T) {
	dir := indexedDir(t)
	if out := mustAgentCLI(t, dir, "cache", "list"); !strings.Contains(out, "no records") {
		t.Fatalf("empty cache lists:\n%s", out)
	}
	mustAgentCLI(t, dir, "loop", "--goal", cliGoal, "--query", "deploy")
	out := mustAgentCLI(t, dir, "cache", "list")
	for _, want := range []string{"session-", "eval-", "refine-", cliGoal[:20]} {
		if !strings.Contains(out, want) {
			t.Errorf("cache list lacks %q:\n%s", want, out)
		}
	}
	var sessions []agentcache.Record
	if err := json.Unmarshal([]byte(mustAgentCLI(t, dir, "cache", "list", "--kind", "sessions", "--json")), &sessions); err != nil || len(sessions) != 1 {
		t.Fatalf("sessions: %v %v", sessions, err)
	}
	show := mustAgentCLI(t, dir, "cache", "show", sessions[0].ID)
	if !strings.Contains(show, "kind      sessions") || !strings.Contains(show, `"iterations"`) {
		t.Errorf("cache show:\n%s", show)
	}
	var rec agentcache.Record
	if err := json.Unmarshal([]byte(mustAgentCLI(t, dir, "cache", "show", sessions[0].ID, "--json")), &rec); err != nil || rec.ID != sessions[0].ID {
		t.Errorf("cache show --json: %+v %v", rec, err)
	}
	md, err := os.ReadFile(filepath.Join(dir, ".sagasu", "cache", "agent", "agent-cache.md"))
	if err != nil || !strings.Contains(string(md), sessions[0].ID) {
		t.Errorf("agent-cache.md: %v\n%s", err, md)
	}
	out = mustAgentCLI(t, dir, "cache", "clear", "--kind", "evaluations")
	if !strings.HasPrefix(out, "removed ") || strings.HasPrefix(out, "removed 0") {
		t.Errorf("clear evaluations: %s", out)
	}
	if out := mustAgentCLI(t, dir, "cache", "list", "--kind", "evaluations"); !strings.Contains(out, "no records") {
		t.Errorf("evaluations after clear:\n%s", out)
	}
	if out := mustAgentCLI(t, dir, "cache", "list", "--kind", "sessions"); !strings.Contains(out, sessions[0].ID) {
		t.Errorf("clearing evaluations lost the session:\n%s", out)
	}
}

func TestCacheCommandBadInput(t *testing.T) {
	dir := indexedDir(t)
	mustAgentCLI(t, dir, "loop", "--goal", "sitemap")
	for _, tt := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"cache", "list", "--kind", "nope"}, exitUsage, "unknown record kind"},
		{[]string{"cache", "clear", "--kind", "nope"}, exitUsage, "unknown record kind"},
		{[]string{"cache", "list", "--limit", "-1"}, exitUsage, "--limit"},
		{[]string{"cache", "show", "eval-20000101T000000.000000000Z-1-1"}, exitError, "no such record"},
		{[]string{"cache", "show", "../../etc/passwd"}, exitError, "not a record ID"},
		{[]string{"cache", "show"}, exitUsage, "accepts 1 arg"},
	} {
		code, _, errs := agentCLI(t, dir, "", tt.args...)
		if code != tt.code || !strings.Contains(errs, tt.msg) {
			t.Errorf("%v: exit %d, %q; want exit %d mentioning %q", tt.args, code, errs, tt.code, tt.msg)
		}
	}
	// A corrupt record is skipped with a warning; the rest still list.
	agent := filepath.Join(dir, ".sagasu", "cache", "agent")
	write(t, filepath.Join(agent, "evaluations", "eval-19990101T000000.000000000Z-1-1.json"), "{broken")
	code, out, errs := agentCLI(t, dir, "", "cache", "list")
	if code != 0 || !strings.Contains(out, "session-") || !strings.Contains(errs, "skipping unreadable record") {
		t.Errorf("corrupt record: exit %d\n%s\n%s", code, out, errs)
	}
	// An unusable folder is a clear error, and the loop goes on without it.
	sessions := filepath.Join(agent, "sessions")
	before, _ := filepath.Glob(filepath.Join(sessions, "*.json"))
	if err := os.Rename(sessions, sessions+".bak"); err != nil {
		t.Fatal(err)
	}
	write(t, sessions, "not a folder")
	code, _, errs = agentCLI(t, dir, "", "cache", "list")
	if code != exitError || !strings.Contains(errs, filepath.Join(".sagasu", "cache", "agent", "sessions")) || !strings.Contains(errs, "--cache-dir") {
		t.Errorf("unusable folder: exit %d, %q", code, errs)
	}
	code, out, errs = agentCLI(t, dir, "", "loop", "--goal", "sitemap")
	if code != 0 || !strings.Contains(out, "results") || !strings.Contains(errs, "agent cache") {
		t.Errorf("loop with an unusable cache: exit %d\n%s\n%s", code, out, errs)
	}
	os.Remove(sessions)
	if err := os.Rename(sessions+".bak", sessions); err != nil {
		t.Fatal(err)
	}
	after, _ := filepath.Glob(filepath.Join(sessions, "*.json"))
	if len(after) != len(before) {
		t.Errorf("sessions before %d, after %d: a failure lost records", len(before), len(after))
	}
}

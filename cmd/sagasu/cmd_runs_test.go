package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRunLifecycleCLI: agent runs and chat threads are exported (JSON with
// their events, Markdown as a transcript), pruned by count with a dry run
// first, by the configured retention, and deleted, each command refusing
// an ID of the other kind.
func TestRunLifecycleCLI(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.md"), "# Sidebar\n\n## Configure the sidebar\n\nSet the sidebar in config.js.\n\n## Theme\n\nThe theme is set in the theme config.\n")
	mustRun(t, dir, "index", "a.md")
	runID := regexp.MustCompile(`run (planact-\S+):`)
	var ids []string
	for _, goal := range []string{"configure the sidebar", "set the theme"} {
		m := runID.FindStringSubmatch(mustRun(t, dir, "agent", "run", "--offline", "--goal", goal))
		if m == nil {
			t.Fatal("no run ID in the output of agent run")
		}
		ids = append(ids, m[1])
	}
	if code, _, errs := sagasu(t, dir, "how do I configure the sidebar?\n", "chat", "--offline"); code != 0 {
		t.Fatalf("chat: exit %d: %s", code, errs)
	}
	var threads []struct{ ID string }
	if err := json.Unmarshal([]byte(mustRun(t, dir, "--json", "chat", "--list")), &threads); err != nil || len(threads) != 1 {
		t.Fatalf("chat --list: %v %v", threads, err)
	}
	thread := threads[0].ID

	// Export.
	md := mustRun(t, dir, "agent", "export", ids[0], "--format", "md")
	if !strings.HasPrefix(md, "# configure the sidebar") || !strings.Contains(md, "## Plan") || !strings.Contains(md, "## Outcome") {
		t.Errorf("agent export --format md:\n%s", md)
	}
	out := filepath.Join(dir, "out", "run.json")
	mustRun(t, dir, "agent", "export", ids[0], "-o", out)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Run    struct{ ID string }
		Events []struct{ Seq int64 }
	}
	if err := json.Unmarshal(b, &doc); err != nil || doc.Run.ID != ids[0] || len(doc.Events) == 0 {
		t.Errorf("agent export -o: %v, %+v", err, doc)
	}
	chatMD := mustRun(t, dir, "chat", "export", thread, "--format", "md")
	if !strings.Contains(chatMD, "## 1. how do I configure the sidebar?") {
		t.Errorf("chat export --format md:\n%s", chatMD)
	}
	if code, _, errs := sagasu(t, dir, "", "chat", "export", ids[0]); code == 0 || !strings.Contains(errs, "no chat thread") {
		t.Errorf("chat export of an agent run: exit %d: %s", code, errs)
	}
	if code, _, errs := sagasu(t, dir, "", "agent", "export", ids[0], "--format", "pdf"); code == 0 || !strings.Contains(errs, "--format") {
		t.Errorf("export --format pdf: exit %d: %s", code, errs)
	}

	// Prune by count: a dry run first, then for real; the thread is another kind.
	if code, _, errs := sagasu(t, dir, "", "agent", "prune"); code == 0 || !strings.Contains(errs, "runs.keep") {
		t.Errorf("prune without a rule: exit %d: %s", code, errs)
	}
	dry := mustRun(t, dir, "agent", "prune", "--keep", "1", "--dry-run")
	if !strings.Contains(dry, "would delete "+ids[0]) || strings.Contains(dry, ids[1]) {
		t.Errorf("prune --keep 1 --dry-run should name the older run only:\n%s", dry)
	}
	if list := mustRun(t, dir, "agent", "runs"); !strings.Contains(list, ids[0]) {
		t.Errorf("a dry run deleted %s:\n%s", ids[0], list)
	}
	mustRun(t, dir, "agent", "prune", "--keep", "1")
	list := mustRun(t, dir, "agent", "runs")
	if strings.Contains(list, ids[0]) || !strings.Contains(list, ids[1]) {
		t.Errorf("after prune --keep 1:\n%s", list)
	}
	if !strings.Contains(mustRun(t, dir, "chat", "--list"), thread) {
		t.Errorf("agent prune deleted a chat thread")
	}

	// The configured retention (a file named with --config is the user's own).
	write(t, filepath.Join(dir, "keep.yaml"), "runs:\n  keep_days: 0\n  keep: 1\n")
	mustRun(t, dir, "agent", "run", "--offline", "--goal", "configure the theme")
	pruned := mustRun(t, dir, "--config", "keep.yaml", "agent", "prune")
	if !strings.Contains(pruned, "deleted "+ids[1]) || !strings.Contains(pruned, "newest 1") {
		t.Errorf("prune by the configured runs.keep:\n%s", pruned)
	}

	// Delete.
	if code, _, errs := sagasu(t, dir, "", "agent", "delete", thread); code == 0 || !strings.Contains(errs, "no agent run") {
		t.Errorf("agent delete of a chat thread: exit %d: %s", code, errs)
	}
	mustRun(t, dir, "chat", "delete", thread)
	if strings.Contains(mustRun(t, dir, "chat", "--list"), thread) {
		t.Errorf("chat delete left the thread listed")
	}
}

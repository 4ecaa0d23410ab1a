package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/runs"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// TestRunToolsListExportDeletePrune drives the lifecycle tools: list by
// kind, export as Markdown, a running run refused without force, a prune
// dry run that deletes nothing, then a prune that does.
func TestRunToolsListExportDeletePrune(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	old := time.Now().Add(-72 * time.Hour)
	for _, r := range []store.Run{
		{ID: "a1", Kind: store.RunAgent, Title: "first goal", Status: "done", Created: old},
		{ID: "a2", Kind: store.RunAgent, Title: "second goal", Status: store.RunRunning},
		{ID: "c1", Kind: store.RunChat, Title: "a question", Status: "open", Created: old},
	} {
		if err := f.store.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.store.AppendEvents(ctx, "c1", []store.Event{{Type: "question", Data: json.RawMessage(`{"text":"a question"}`)},
		{Type: "answer", Data: json.RawMessage(`{"question":"a question","answer":"an answer"}`)}}); err != nil {
		t.Fatal(err)
	}

	sc, _ := f.ok(runs.NameList, map[string]any{"kind": "agent"})
	if got := sc["runs"].([]any); len(got) != 2 {
		t.Errorf("list kind agent: %v, want the two agent runs", got)
	}
	sc, _ = f.ok(runs.NameExport, map[string]any{"id": "c1", "format": "md"})
	if c := sc["content"].(string); !strings.Contains(c, "## 1. a question") || !strings.Contains(c, "an answer") {
		t.Errorf("export md:\n%s", c)
	}
	f.fails(runs.NameExport, map[string]any{"id": "c1", "format": "html"}, "format")
	f.fails(runs.NameDelete, map[string]any{"ids": []string{"a2"}}, "force")
	sc, _ = f.ok(runs.NameDelete, map[string]any{"ids": []string{"a2"}, "force": true})
	if got := sc["deleted"].([]any); len(got) != 1 {
		t.Errorf("forced delete: %v", got)
	}
	f.fails(runs.NamePrune, map[string]any{}, "runs.keep")
	sc, _ = f.ok(runs.NamePrune, map[string]any{"keep": 1, "kind": "chat", "dryRun": true})
	if got := sc["pruned"].([]any); len(got) != 0 {
		t.Errorf("prune keep 1 of one thread: %v", got)
	}
	sc, _ = f.ok(runs.NamePrune, map[string]any{"olderThan": "1d", "dryRun": true})
	// c1 was created days ago but its events were appended now.
	if got := sc["pruned"].([]any); len(got) != 1 || got[0].(map[string]any)["id"] != "a1" {
		t.Errorf("prune dry run older than 1d: %v, want a1 only", got)
	}
	if _, err := f.store.Run(ctx, "a1"); err != nil {
		t.Errorf("a dry run deleted a1: %v", err)
	}
	f.ok(runs.NamePrune, map[string]any{"keep": 1})
	if _, err := f.store.Run(ctx, "a1"); err != nil {
		t.Errorf("prune keep 1 deleted the only agent run: %v", err)
	}
	f.ok(runs.NameDelete, map[string]any{"ids": []string{"a1", "c1"}})
	sc, _ = f.ok(runs.NameList, map[string]any{})
	if got := sc["runs"].([]any); len(got) != 0 {
		t.Errorf("after deleting every run: %v", got)
	}
}

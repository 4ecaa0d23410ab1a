package runs_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/agent/planact"
	"github.com/sagasu-dev/sagasu/internal/agent/react"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/runs"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
)

func open(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "idx.db"), sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func create(t *testing.T, st store.Store, r store.Run, events ...store.Event) {
	t.Helper()
	ctx := context.Background()
	if err := st.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	if len(events) > 0 {
		if _, err := st.AppendEvents(ctx, r.ID, events); err != nil {
			t.Fatal(err)
		}
	}
}

func exists(t *testing.T, st store.Store, id string) bool {
	t.Helper()
	_, err := st.Run(context.Background(), id)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

func TestDeleteChecksEveryIDFirst(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	create(t, st, store.Run{ID: "done", Kind: store.RunAgent, Status: "done"}, store.Event{Type: "x"})
	create(t, st, store.Run{ID: "live", Kind: store.RunAgent, Status: store.RunRunning})
	create(t, st, store.Run{ID: "here", Kind: store.RunAgent, Status: store.RunRunning})
	create(t, st, store.Run{ID: "chat-1", Kind: store.RunChat, Status: "open"})
	ops := runs.New(runs.Options{Store: st, Busy: func(id string) bool { return id == "here" }})

	_, err := ops.Delete(ctx, runs.DeleteInput{IDs: []string{"done", "live"}})
	if !errors.Is(err, store.ErrRunning) || !strings.Contains(err.Error(), "live") || !strings.Contains(err.Error(), "force") {
		t.Fatalf("Delete(done, running) = %v, want a refusal naming live and force", err)
	}
	if !exists(t, st, "done") {
		t.Errorf("a refused delete removed the run before the refused one")
	}
	if _, err := ops.Delete(ctx, runs.DeleteInput{IDs: []string{"chat-1"}, Kind: store.RunAgent}); !errors.Is(err, store.ErrNotFound) || !exists(t, st, "chat-1") {
		t.Errorf("Delete(a chat thread as an agent run) = %v, want not found and the thread kept", err)
	}
	if _, err := ops.Delete(ctx, runs.DeleteInput{IDs: []string{"here"}, Force: true}); !errors.Is(err, store.ErrRunning) || !exists(t, st, "here") {
		t.Errorf("Delete(a run this process drives, forced) = %v, want refused and kept", err)
	}
	out, err := ops.Delete(ctx, runs.DeleteInput{IDs: []string{"done", "live", "done"}, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Deleted) != 2 || exists(t, st, "done") || exists(t, st, "live") {
		t.Errorf("Delete(forced) = %+v; done and live must be gone, each listed once", out)
	}
	if _, err := ops.Delete(ctx, runs.DeleteInput{}); err == nil {
		t.Errorf("Delete(no IDs) succeeded")
	}
}

func TestPruneNeedsARule(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	st := open(t)
	create(t, st, store.Run{ID: "old", Kind: store.RunChat, Status: "open", Created: now.Add(-60 * day)})
	create(t, st, store.Run{ID: "old-running", Kind: store.RunAgent, Status: store.RunRunning, Created: now.Add(-60 * day)})
	create(t, st, store.Run{ID: "new", Kind: store.RunChat, Status: "open", Created: now.Add(-day)})
	clock := func() time.Time { return now }

	ops := runs.New(runs.Options{Store: st, Now: clock})
	if _, err := ops.Prune(ctx, runs.PruneInput{}); err == nil || !strings.Contains(err.Error(), "runs.keep_days") {
		t.Errorf("Prune without a rule = %v, want a refusal that names the setting", err)
	}
	dry, err := ops.Prune(ctx, runs.PruneInput{OlderThan: "30d", DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(dry.Pruned) != 1 || dry.Pruned[0].ID != "old" || !exists(t, st, "old") {
		t.Errorf("dry run = %+v, want old listed and kept", dry)
	}

	configured := runs.New(runs.Options{Store: st, Now: clock, Retention: store.Retention{OlderThan: 30 * day}})
	out, err := configured.Prune(ctx, runs.PruneInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Pruned) != 1 || exists(t, st, "old") || !exists(t, st, "old-running") || !exists(t, st, "new") {
		t.Errorf("Prune(configured 30d) = %+v; want old gone, the running run and new kept", out)
	}
	if !strings.Contains(out.Rule, "30d") {
		t.Errorf("rule = %q, want it to say 30d", out.Rule)
	}
}

func TestParseAge(t *testing.T) {
	for in, want := range map[string]time.Duration{"30d": 30 * 24 * time.Hour, "12h": 12 * time.Hour, "90m": 90 * time.Minute, "0.5d": 12 * time.Hour} {
		if got, err := runs.ParseAge(in); err != nil || got != want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "30", "d", "-1d", "0d", "soon"} {
		if _, err := runs.ParseAge(in); err == nil || !strings.Contains(err.Error(), "age") {
			t.Errorf("ParseAge(%q) = %v, want an error naming the age", in, err)
		}
	}
}

func TestExportJSONHasHeaderSettingsEventsAndNoSecret(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	meta := `{"mcp":["playwright"],"planner":{"driver":"openai","model":"m","url":"https://bob:hunter2@llm.example/v1?api_key=SEKRET"}}`
	create(t, st, store.Run{ID: "r1", Kind: store.RunAgent, Title: "find the release date", Status: "done", Meta: json.RawMessage(meta)},
		store.Event{Type: "event", Data: json.RawMessage(`{"type":"thought","text":"look it up"}`)},
		store.Event{Type: "event", Data: json.RawMessage(`{"type":"observation","observation":"see https://x.example/?token=T0KEN"}`)})
	out, err := runs.New(runs.Options{Store: st}).Export(ctx, runs.ExportInput{ID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"hunter2", "SEKRET", "T0KEN"} {
		if strings.Contains(out.Content, secret) {
			t.Errorf("the export holds the secret %q:\n%s", secret, out.Content)
		}
	}
	var doc runs.Document
	if err := json.Unmarshal([]byte(out.Content), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Run.ID != "r1" || doc.Run.Title != "find the release date" || len(doc.Events) != 2 || doc.Events[1].Seq != 2 {
		t.Errorf("export = %+v, want the header and both events in order", doc)
	}
	if !strings.Contains(string(doc.Settings), "playwright") || !strings.Contains(string(doc.Settings), "llm.example") {
		t.Errorf("settings = %s, want the MCP server and the model's host kept", doc.Settings)
	}
	if out.Filename != "r1.json" {
		t.Errorf("filename = %q", out.Filename)
	}
	if _, err := runs.New(runs.Options{Store: st}).Export(ctx, runs.ExportInput{ID: "r1", Format: "pdf"}); err == nil || !strings.Contains(err.Error(), "pdf") {
		t.Errorf("Export(format pdf) = %v, want an error naming it", err)
	}
}

func TestExportChatMarkdownIsTheTranscript(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	threads := react.NewThreads(st)
	id, err := threads.Start(ctx, "what is BM25?")
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range []*react.Result{
		{Question: "what is BM25?", Answer: "A ranking function [1].", Citations: []react.Citation{{N: 1, Source: react.SourceRef{URI: "docs/search.md"}, Heading: "Ranking", Lines: [2]int{3, 9}}}},
		{Question: "and hybrid?", Answer: "It fuses keyword and vector ranks."},
	} {
		if err := threads.Record(ctx, id, res); err != nil {
			t.Fatal(err)
		}
	}
	out, err := runs.New(runs.Options{Store: st}).Export(ctx, runs.ExportInput{ID: id, Kind: store.RunChat, Format: runs.FormatMarkdown})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"# what is BM25?", "## 1. what is BM25?", "A ranking function [1].", "1. docs/search.md — Ranking (lines 3–9)", "## 2. and hybrid?", "It fuses keyword and vector ranks."}
	assertInOrder(t, out.Content, want)
}

func TestExportAgentMarkdownHasPlanAnswerOutcome(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	ok := true
	act, _ := json.Marshal(graph.Event{Type: graph.TypeAction, Step: 1, Tool: "browser_navigate", Arguments: json.RawMessage(`{"url":"https://example.com"}`), OK: &ok})
	create(t, st, store.Run{ID: "r1", Kind: store.RunAgent, Title: "open example.com", Status: "done"}, store.Event{Type: "event", Data: act})
	report := func(_ context.Context, id string) (planact.Report, error) {
		return planact.Report{ID: id, Goal: "open example.com",
			Settings: &planact.RunSettings{MCP: []string{"playwright"}, Limits: planact.LimitSettings{MaxToolCalls: 30, MaxDuration: "15m", MaxSteps: 20}},
			Plan:     []planact.Step{{Text: "navigate to example.com", Status: "done", Result: "the page says Example Domain"}},
			Answer:   "The page is titled Example Domain.",
			Outcome:  &graph.Outcome{Status: graph.Success, Steps: 2, ToolCalls: 1}}, nil
	}
	out, err := runs.New(runs.Options{Store: st, AgentReport: report}).Export(ctx, runs.ExportInput{ID: "r1", Format: runs.FormatMarkdown})
	if err != nil {
		t.Fatal(err)
	}
	assertInOrder(t, out.Content, []string{"# open example.com", "MCP servers: playwright", "## Plan", "1. [done] navigate to example.com",
		"the page says Example Domain", "## Answer", "The page is titled Example Domain.", "## Outcome", "1 tool calls", "## Tool calls", "step 1: `browser_navigate`"})
}

func assertInOrder(t *testing.T, s string, want []string) {
	t.Helper()
	at := 0
	for _, w := range want {
		i := strings.Index(s[at:], w)
		if i < 0 {
			t.Fatalf("the export lacks %q after offset %d:\n%s", w, at, s)
		}
		at += i + len(w)
	}
}

// TestDeleteRefusesARunAnotherProcessDrives: a run whose lease another
// live driver holds is not deleted even when forced (its driver would
// lose its log mid-run); once that lease has expired, force deletes it.
func TestDeleteRefusesARunAnotherProcessDrives(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	create(t, st, store.Run{ID: "driven", Kind: store.RunAgent, Status: store.RunRunning})
	create(t, st, store.Run{ID: "stale", Kind: store.RunAgent, Status: store.RunRunning})
	host, _ := os.Hostname()
	other := store.Owner{Token: "other-driver", Host: host, PID: os.Getpid(), Face: store.FaceCLI}
	if _, err := st.ClaimRun(ctx, "driven", store.Claim{Owner: other, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ClaimRun(ctx, "stale", store.Claim{Owner: other, TTL: time.Hour, Now: time.Now().Add(-2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	ops := runs.New(runs.Options{Store: st})
	_, err := ops.Delete(ctx, runs.DeleteInput{IDs: []string{"driven"}, Force: true})
	if !errors.Is(err, store.ErrLeased) || !strings.Contains(err.Error(), "pid") || !exists(t, st, "driven") {
		t.Errorf("Delete(a run another process drives, forced) = %v; want refused naming its driver, and kept", err)
	}
	if _, err := ops.Delete(ctx, runs.DeleteInput{IDs: []string{"stale"}, Force: true}); err != nil || exists(t, st, "stale") {
		t.Errorf("Delete(a run whose lease expired, forced) = %v; want it deleted", err)
	}
}

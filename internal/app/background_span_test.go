package app

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/telemetry"
	"github.com/sagasu-dev/sagasu/internal/telemetry/otlptest"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// TestBackgroundRunsAreTraced: a run the page or the MCP tools start in the
// background gets an invoke_agent span, as `sagasu agent run` does, named
// by the run's ID, with the run's model calls and tool calls under it; a
// resumed run gets its own.
func TestBackgroundRunsAreTraced(t *testing.T) {
	url, _ := planActServer(t)
	rcv := otlptest.Start(t)
	tr, err := telemetry.New(context.Background(), telemetry.Options{Environ: []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.URL}})
	if err != nil || tr == nil {
		t.Fatalf("tracer %v, %v", tr, err)
	}
	dir := t.TempDir()
	cfg := Defaults()
	cfg.DB = filepath.Join(dir, "index.db")
	cfg.CacheDir = filepath.Join(dir, "cache")
	cfg.LLM = LLMConfig{Driver: "openai", URL: url, Model: "m"}
	a := New(cfg, io.Discard, []string{"OPENAI_API_KEY=sk-test"})
	a.Tracer = tr
	ctx := context.Background()
	rt, err := a.Open(ctx, OpenOptions{Create: true, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	if _, err := rt.Tools.Index(ctx, tools.IndexInput{Text: "# Deploy\n\nBuild the site and upload the dist folder.\n", Title: "Deploy"}, nil); err != nil {
		t.Fatal(err)
	}
	runs := rt.BackgroundRuns(ctx, 2, nil)
	id, err := runs.Start(ctx, PlanActOptions{Goal: "how do I deploy?"})
	if err != nil {
		t.Fatal(err)
	}
	runs.Wait(ctx)
	if err := runs.Resume(ctx, id, PlanActOptions{}); err != nil {
		t.Fatal(err)
	}
	runs.Wait(ctx)
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	agents := rcv.Named("invoke_agent sagasu plan-and-act")
	if len(agents) != 2 {
		var names []string
		for _, s := range rcv.Spans() {
			names = append(names, s.Name)
		}
		t.Fatalf("%d agent spans for a run and its resume; received %v", len(agents), names)
	}
	for _, ag := range agents {
		if ag.Attrs[telemetry.AttrConversation] != id {
			t.Errorf("agent span names run %v, want %s", ag.Attrs[telemetry.AttrConversation], id)
		}
	}
	first := agents[0]
	if agents[1].Start.Before(first.Start) {
		first = agents[1]
	}
	chats, tools := 0, 0
	for _, s := range rcv.Spans() {
		if s.ParentID != first.SpanID || s.TraceID != first.TraceID {
			continue
		}
		switch s.Attrs[telemetry.AttrOperation] {
		case telemetry.OpChat:
			chats++
		case telemetry.OpExecuteTool:
			tools++
		}
	}
	if chats == 0 || tools == 0 {
		t.Errorf("under the first run's span: %d model calls, %d tool calls; want both", chats, tools)
	}
}

package mcpserver

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// TestAgentResumeRefusedWhileAnotherDrives: sagasu_agent_resume of a run
// that another driver (here the page of a `sagasu serve` on this host,
// alive) holds is a tool error that names the run, that driver and what to
// do; the run's log is untouched. Once the page lets go, the resume runs.
func TestAgentResumeRefusedWhileAnotherDrives(t *testing.T) {
	dir := t.TempDir()
	cfg := app.Defaults()
	cfg.DB = filepath.Join(dir, "index.db")
	cfg.CacheDir = filepath.Join(dir, "cache")
	cfg.LLM.Driver = ""
	ctx := context.Background()
	rt, err := app.New(cfg, io.Discard, nil).Open(ctx, app.OpenOptions{Create: true, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	if _, err := rt.Tools.Index(ctx, tools.IndexInput{Text: "# Deploy\n\nBuild the site and upload the dist folder.\n", Title: "Deploy"}, nil); err != nil {
		t.Fatal(err)
	}
	runs := rt.BackgroundRuns(ctx, 2, nil)
	t.Cleanup(func() { runs.Wait(ctx) })
	f := newFixture(t, Options{Tools: rt.Tools, Agents: testRuns{runs}})
	sc, _ := f.ok(ToolAgentStart, map[string]any{"goal": "how do I deploy?", "settings": map[string]any{"maxToolCalls": 1}})
	id, _ := sc["id"].(string)
	runs.Wait(ctx)

	host, _ := os.Hostname()
	page := store.Owner{Token: "page-driver", Host: host, PID: os.Getpid(), Face: store.FacePage}
	if _, err := rt.Store.ClaimRun(ctx, id, store.Claim{Owner: page, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	before, err := rt.Store.Events(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.fails(ToolAgentResume, map[string]any{"id": id}, "run "+id+" is being driven from the web page")
	f.fails(ToolAgentResume, map[string]any{"id": id}, "the run's Stop button on the page")
	runs.Wait(ctx)
	if after, err := rt.Store.Events(ctx, id, 0); err != nil || len(after) != len(before) {
		t.Errorf("the refused resume changed the log: %d events, then %d (%v)", len(before), len(after), err)
	}

	if err := rt.Store.ReleaseRun(ctx, id, page.Token); err != nil {
		t.Fatal(err)
	}
	f.ok(ToolAgentResume, map[string]any{"id": id, "settings": map[string]any{"maxToolCalls": 5}})
	runs.Wait(ctx)
	if l, err := rt.Store.RunLease(ctx, id); err != nil || l.Held() {
		t.Errorf("after the resume the lease is %+v, %v; want it released", l, err)
	}
}

package web

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// TestResumeRefusedWhileAnotherDrives: the page's resume of a run that
// `sagasu agent resume` (alive, on this host) drives answers 409 with a
// message that names the run, that driver and what to do, and leaves the
// run's log as it was; once the command line lets go, the page resumes it.
func TestResumeRefusedWhileAnotherDrives(t *testing.T) {
	f := newFixture(t, "", docs)
	var started struct{ ID string }
	body := map[string]any{"goal": "understand how to rotate the API keys", "settings": map[string]any{"maxToolCalls": 1}}
	if code := f.call(t, "POST", "/api/runs", body, &started); code != http.StatusAccepted {
		t.Fatalf("start: %d", code)
	}
	f.srv.Wait(context.Background())
	ctx := context.Background()
	st := f.srv.rt.Store
	host, _ := os.Hostname()
	cli := store.Owner{Token: "cli-driver", Host: host, PID: os.Getpid(), Face: store.FaceCLI}
	if _, err := st.ClaimRun(ctx, started.ID, store.Claim{Owner: cli, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	before, err := st.Events(ctx, started.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var e struct{ Error string }
	code := f.call(t, "POST", "/api/runs/"+started.ID+"/resume", map[string]any{}, &e)
	if code != http.StatusConflict {
		t.Fatalf("resume of a run another process drives: %d %q, want 409", code, e.Error)
	}
	for _, want := range []string{"run " + started.ID + " is being driven from the command line", "pid", "kill", "resume it once that process has exited"} {
		if !strings.Contains(e.Error, want) {
			t.Errorf("the 409's message %q does not say %q", e.Error, want)
		}
	}
	f.srv.Wait(ctx)
	if after, err := st.Events(ctx, started.ID, 0); err != nil || len(after) != len(before) {
		t.Errorf("the refused resume changed the log: %d events, then %d (%v)", len(before), len(after), err)
	}

	if err := st.ReleaseRun(ctx, started.ID, cli.Token); err != nil {
		t.Fatal(err)
	}
	if code := f.call(t, "POST", "/api/runs/"+started.ID+"/resume", map[string]any{"settings": map[string]any{"maxToolCalls": 5}}, &e); code != http.StatusAccepted {
		t.Fatalf("resume once the command line let go: %d %q", code, e.Error)
	}
	f.srv.Wait(ctx)
	if l, err := st.RunLease(ctx, started.ID); err != nil || l.Held() {
		t.Errorf("after the page's resume the lease is %+v, %v; want it released", l, err)
	}
}

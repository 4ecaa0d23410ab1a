package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/runs"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// TestRunAndThreadLifecycleAPI: the page exports a thread as Markdown and
// a run as JSON, deletes each through its own route only (kinds do not
// mix), refuses a running run without force with 409, refuses a DELETE
// the page's guards do not allow, and prunes only by a rule it is given.
func TestRunAndThreadLifecycleAPI(t *testing.T) {
	f := newFixture(t, "", docs)
	ctx := context.Background()
	st := f.srv.rt.Store
	for _, r := range []store.Run{
		{ID: "planact-1", Kind: store.RunAgent, Title: "rotate the keys", Status: "done"},
		{ID: "planact-2", Kind: store.RunAgent, Title: "deploy", Status: store.RunRunning},
		{ID: "chat-1", Kind: store.RunChat, Title: "how to deploy?", Status: "open"},
	} {
		if err := st.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.AppendEvents(ctx, "chat-1", []store.Event{{Type: "answer", Data: json.RawMessage(`{"question":"how to deploy?","answer":"Run acme deploy."}`)}}); err != nil {
		t.Fatal(err)
	}

	var out runs.ExportOutput
	if code := f.call(t, "GET", "/api/threads/chat-1/export?format=md", nil, &out); code != 200 || !strings.Contains(out.Content, "## 1. how to deploy?") || out.Filename != "chat-1.md" {
		t.Errorf("export thread md: %d %+v", code, out)
	}
	if code := f.call(t, "GET", "/api/runs/planact-1/export", nil, &out); code != 200 || !json.Valid([]byte(out.Content)) || !strings.Contains(out.Content, `"rotate the keys"`) {
		t.Errorf("export run json: %d %+v", code, out)
	}
	if code := f.call(t, "GET", "/api/runs/chat-1/export", nil, nil); code != 404 {
		t.Errorf("a thread exported as a run: %d, want 404", code)
	}
	if code := f.call(t, "GET", "/api/runs/planact-1/export?format=pdf", nil, nil); code != 400 {
		t.Errorf("export format pdf: %d, want 400", code)
	}

	// The guards: a DELETE without X-Sagasu, or without the token, changes nothing.
	for _, h := range []map[string]string{{"Authorization": "Bearer " + f.token}, {"X-Sagasu": "1"}} {
		req, _ := http.NewRequest("DELETE", f.ts.URL+"/api/runs/planact-1", nil)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 403 && res.StatusCode != 401 {
			t.Errorf("DELETE with only %v: %d, want refused", h, res.StatusCode)
		}
	}
	if _, err := st.Run(ctx, "planact-1"); err != nil {
		t.Fatalf("a refused DELETE removed the run: %v", err)
	}

	if code := f.call(t, "DELETE", "/api/threads/planact-1", nil, nil); code != 404 {
		t.Errorf("a run deleted as a thread: %d, want 404", code)
	}
	var errOut struct{ Error string }
	if code := f.call(t, "DELETE", "/api/runs/planact-2", nil, &errOut); code != 409 || !strings.Contains(errOut.Error, "force") {
		t.Errorf("delete a running run: %d %q, want 409 saying force", code, errOut.Error)
	}
	if code := f.call(t, "DELETE", "/api/runs/planact-2?force=yes", nil, nil); code != 400 {
		t.Errorf("force=yes: %d, want 400", code)
	}
	var del runs.DeleteOutput
	if code := f.call(t, "DELETE", "/api/runs/planact-2?force=true", nil, &del); code != 200 || len(del.Deleted) != 1 {
		t.Errorf("forced delete: %d %+v", code, del)
	}
	if code := f.call(t, "DELETE", "/api/threads/chat-1", nil, nil); code != 200 {
		t.Errorf("delete thread: %d", code)
	}
	var threads []runView
	f.call(t, "GET", "/api/threads", nil, &threads)
	if len(threads) != 0 {
		t.Errorf("threads after the delete: %+v", threads)
	}

	if code := f.call(t, "POST", "/api/runs/prune", map[string]any{}, &errOut); code != 400 || !strings.Contains(errOut.Error, "runs.keep") {
		t.Errorf("prune without a rule: %d %q", code, errOut.Error)
	}
	var pr runs.PruneOutput
	if code := f.call(t, "POST", "/api/runs/prune", map[string]any{"keep": 1, "dryRun": true}, &pr); code != 200 || len(pr.Pruned) != 0 {
		t.Errorf("prune keep 1 of one run: %d %+v", code, pr)
	}
}

// TestRunBeingDrivenIsNotDeleted: a thread with a turn in progress on this
// server is refused even when forced.
func TestRunBeingDrivenIsNotDeleted(t *testing.T) {
	f := newFixture(t, "", docs)
	ctx := context.Background()
	if err := f.srv.rt.Store.CreateRun(ctx, store.Run{ID: "chat-busy", Kind: store.RunChat, Status: "open"}); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	if err := f.srv.startTask(threadKey("chat-busy"), func(ctx context.Context) { <-release }); err != nil {
		t.Fatal(err)
	}
	defer close(release)
	var errOut struct{ Error string }
	if code := f.call(t, "DELETE", "/api/threads/chat-busy?force=true", nil, &errOut); code != 409 || !strings.Contains(errOut.Error, "stop it first") {
		t.Errorf("delete a thread with a turn in progress: %d %q, want 409", code, errOut.Error)
	}
}

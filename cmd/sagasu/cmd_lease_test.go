//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// gatedModel is an OpenAI-compatible chat endpoint that holds every call
// while it is closed (announcing each on arrived) and answers text once
// it is open.
type gatedModel struct {
	URL     string
	arrived chan struct{}
	mu      sync.Mutex
	open    chan struct{}
}

func newGatedModel(t *testing.T) *gatedModel {
	g := &gatedModel{arrived: make(chan struct{}, 16), open: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		open := g.open
		g.mu.Unlock()
		select {
		case g.arrived <- struct{}{}:
		default:
		}
		select {
		case <-open:
		case <-r.Context().Done(): // the caller was killed
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "created": 1, "model": "gate",
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": "I could not find it."}, "finish_reason": "stop"}},
			"usage":   map[string]int{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
	}))
	t.Cleanup(func() { g.Open(); srv.Close() })
	g.URL = srv.URL + "/v1"
	return g
}

// Open lets every call, held or coming, be answered.
func (g *gatedModel) Open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}

// TestSecondAgentDriverRefused runs real `sagasu agent` processes of a
// built binary on one SQLite index. While one drives a run (held in a
// model call), `agent resume` of that run is refused with a message that
// names the run and its driver, exit code 1, and the run's log is
// untouched. Then the driver is killed with kill -9, and `agent resume`
// takes the run over at once, long before the dead driver's lease would
// have expired.
func TestSecondAgentDriverRefused(t *testing.T) {
	testenv.Short(t, "builds the binary and runs three agent processes")
	bin := buildBinary(t)
	dir := docsFixture(t)
	db := filepath.Join(dir, "idx.db")
	mustRun(t, dir, "--db", db, "index", "docs")
	model := newGatedModel(t)
	agent := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, append([]string{"--db", db, "agent"}, args...)...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "HOME="+dir)
		return cmd
	}
	llm := []string{"--llm", "openai", "--llm-url", model.URL, "--llm-model", "gate", "--max-tool-calls", "3"}

	// The first driver: its run is recorded, then it waits on the model.
	first := agent(append([]string{"run", "--goal", "find how to configure the search index"}, llm...)...)
	var firstErr bytes.Buffer
	first.Stderr = &firstErr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- first.Wait() }()
	select {
	case <-model.arrived:
	case err := <-exited:
		t.Fatalf("the first driver ended before it called the model: %v\n%s", err, firstErr.String())
	}
	st, err := sqlite.Open(context.Background(), db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	runs, err := st.ListRuns(ctx, store.RunFilter{Kind: store.RunAgent})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs while the first driver runs: %v, %v", runs, err)
	}
	id := runs[0].ID
	held, err := st.RunLease(ctx, id)
	if err != nil || held.Owner.PID != first.Process.Pid || held.Owner.Face != store.FaceCLI {
		t.Fatalf("lease of the running run = %+v, %v; want the first process's (pid %d)", held, err, first.Process.Pid)
	}
	before, err := st.Events(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}

	show := agent("show", id)
	if out, err := show.CombinedOutput(); err != nil || !strings.Contains(string(out), fmt.Sprintf("driven by   cli, pid %d on %s since", first.Process.Pid, held.Owner.Host)) {
		t.Errorf("agent show of the running run (%v) does not name its driver:\n%s", err, out)
	}

	// The second driver is refused.
	second := agent(append([]string{"resume", id}, llm...)...)
	out, err := second.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitError {
		t.Fatalf("second driver: %v, want exit %d\n%s", err, exitError, out)
	}
	for _, want := range []string{
		"run " + id + " is being driven from the command line",
		fmt.Sprintf("pid %d on %s", first.Process.Pid, held.Owner.Host),
		"since " + held.Owner.Since.Format(time.RFC3339),
		fmt.Sprintf("kill %d", first.Process.Pid),
		"resume it once that process has exited",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the refusal does not say %q:\n%s", want, out)
		}
	}
	t.Logf("second driver refused: %s", bytes.TrimSpace(out))
	after, err := st.Events(ctx, id, 0)
	if err != nil || len(after) != len(before) {
		t.Errorf("the refused driver changed the log: %d events, then %d (%v)", len(before), len(after), err)
	}
	if s, err := st.Run(ctx, id); err != nil || s.Status != "running" {
		t.Errorf("run after the refusal: %+v, %v", s, err)
	}

	// kill -9 the first driver: the run stays running, its lease held by a
	// process that is gone; a resume takes it over at once.
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited // reaped: the pid no longer exists
	if l, err := st.RunLease(ctx, id); err != nil || l.Owner.Token != held.Owner.Token || !l.Until.After(time.Now()) {
		t.Fatalf("after kill -9 the lease is %+v, %v; want the dead driver's, not expired", l, err)
	}
	model.Open()
	third := agent(append([]string{"resume", id}, llm...)...)
	out, err = third.CombinedOutput()
	if strings.Contains(string(out), "being driven") {
		t.Fatalf("resume after kill -9 was refused: %v\n%s", err, out)
	}
	t.Logf("resume after kill -9: %s", bytes.TrimSpace(out))
	resumed, err := st.Events(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(resumed) <= len(before) {
		t.Errorf("the resume after kill -9 appended nothing (%d events): %s", len(resumed), out)
	}
	for i, e := range resumed {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d: gaps or collisions in the run's log", i, e.Seq)
		}
	}
	if l, err := st.RunLease(ctx, id); err != nil || l.Held() {
		t.Errorf("after the resume ended its lease is %+v, %v; want it released", l, err)
	}
}

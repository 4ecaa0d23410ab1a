package graph

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
)

// TestStoreLogResumes runs a graph against the SQLite store's run log,
// stops it midway, and resumes it from what the store kept.
func TestStoreLogResumes(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "idx.db"), sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	log := NewStoreLog(st, store.RunAgent, func(string) string { return "count to five" })

	type counter struct{ N int }
	effects := 0
	stopAt := 3
	g := New[counter]()
	g.AddNode("inc", func(_ context.Context, rc *RunContext, s counter) (counter, error) {
		if s.N == stopAt {
			stopAt = -1
			return s, &StopError{Guard: "test", Reason: "pause"}
		}
		if _, err := rc.Once("inc-"+string(rune('0'+s.N)), func() (json.RawMessage, error) { effects++; return json.RawMessage("true"), nil }); err != nil {
			return s, err
		}
		s.N++
		return s, rc.Progress("counted")
	})
	g.RegisterBranch("more", func(s counter) string {
		if s.N < 5 {
			return "inc"
		}
		return END
	})
	g.AddEdge(START, "inc").AddConditionalEdges("inc", "more", nil)
	c, err := g.Compile(log)
	if err != nil {
		t.Fatal(err)
	}
	if _, out := c.Invoke(ctx, "r1", counter{}); out.Status == Success {
		t.Fatalf("the first invocation should have stopped: %+v", out)
	}
	final, out := c.Resume(ctx, "r1")
	if out.Status != Success || final.N != 5 || effects != 5 {
		t.Fatalf("after resume: %+v, N=%d, effects=%d", out, final.N, effects)
	}
	run, err := st.Run(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if run.Kind != store.RunAgent || run.Title != "count to five" || run.Status != string(Success) {
		t.Errorf("run header %+v", run)
	}
}

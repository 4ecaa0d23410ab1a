package react

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
)

func TestThreadsKeepTurnsAcrossOpens(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "idx.db")
	st, err := sqlite.Open(ctx, path, sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	th := NewThreads(st)
	id, err := th.Start(ctx, "How do I deploy?")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"How do I deploy?", "And to GitHub Pages?"} {
		if err := th.Record(ctx, id, &Result{Question: q, Answer: "answer to " + q, Citations: []Citation{{N: 1, ChunkID: 7}}}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	st, err = sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	th = NewThreads(st)
	hist, err := th.History(ctx, id, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 2 || hist[1].Question != "And to GitHub Pages?" || !strings.HasPrefix(hist[0].Answer, "answer to") {
		t.Errorf("history %+v", hist)
	}
	if list, err := th.List(ctx, 0); err != nil || len(list) != 1 || list[0].Title != "How do I deploy?" {
		t.Errorf("list %+v, %v", list, err)
	}
	if _, err := th.Get(ctx, "chat-nope"); err == nil || !strings.Contains(err.Error(), "--list") {
		t.Errorf("unknown thread: %v", err)
	}
}

// TestTurnRecordsEachStep: a turn of a thread records its start, every
// step of the agent, the question and answer and the answer's spans, in
// that order; the next turn is asked after the first; a turn that fails
// records why.
func TestTurnRecordsEachStep(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "idx.db"), sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	th := NewThreads(st)
	id, err := th.Start(ctx, "local search")
	if err != nil {
		t.Fatal(err)
	}
	var stored []string
	a := New(vitepress(t), Options{})
	res, err := th.Turn(ctx, id, a, "How do I enable the local search provider?", TurnOptions{OnStored: func(e store.Event) {
		stored = append(stored, e.Type)
	}})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := st.Events(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, e.Type)
	}
	want := []string{ThreadTurn}
	for range res.Trace {
		want = append(want, ThreadStep)
	}
	want = append(want, ThreadQuestion, ThreadAnswer, ThreadSpans)
	if strings.Join(kinds, ",") != strings.Join(want, ",") || strings.Join(stored, ",") != strings.Join(want, ",") {
		t.Errorf("recorded %v, told %v; want %v", kinds, stored, want)
	}
	if !strings.Contains(string(evs[0].Data), `"mode":"offline"`) {
		t.Errorf("turn event %s: want the agent's mode, offline", evs[0].Data)
	}
	if hist, _ := th.History(ctx, id, HistoryTurns); len(hist) != 1 || hist[0].Answer != res.Answer {
		t.Errorf("history after one turn: %+v", hist)
	}
	if _, err := th.Turn(ctx, id, a, "   ", TurnOptions{}); err == nil {
		t.Fatal("an empty question was answered")
	}
	evs, _ = st.Events(ctx, id, 0)
	if last := evs[len(evs)-1]; last.Type != ThreadError || !strings.Contains(string(last.Data), "empty") {
		t.Errorf("a failed turn ends with %s %s, want %s naming why", last.Type, last.Data, ThreadError)
	}
}

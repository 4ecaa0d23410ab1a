package react

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

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

package index_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/embed"
	"github.com/sagasu-dev/sagasu/internal/embed/embedtest"
	"github.com/sagasu-dev/sagasu/internal/index"
)

// An embedding run reports the chunks embedded of the chunks to embed as
// the embedder answers, request by request, not only when a batch of
// thousands is written.
func TestProgressCountsEmbeddedChunks(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for i := range 40 {
		write(t, filepath.Join(dir, fmt.Sprintf("p%02d.md", i)), fmt.Sprintf("# Page %d\n\nText of page %d about topic %d.\n\n## More\n\nAnd more on %d.\n", i, i, i, i))
	}
	s := open(t)
	if err := s.InitVectors(ctx, 16); err != nil {
		t.Fatal(err)
	}
	// Requests of 8 texts, all in one batch.
	emb := embed.New(embedtest.Hashing{Dim: 16}, embed.Options{BatchSize: 8, MaxInFlight: 1})
	var reports []index.Progress
	ix := index.New(s, index.Options{Embedder: emb, Progress: func(p index.Progress) { reports = append(reports, p) }})
	rep, err := ix.Run(ctx, []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	last := reports[len(reports)-1]
	if last.Reading || !last.Embedding || last.Embedded != rep.Chunks || last.Made != rep.Chunks || last.Chunks != rep.Chunks {
		t.Fatalf("last report %+v, want all %d chunks made, embedded and written", last, rep.Chunks)
	}
	partial, prev := 0, 0
	for _, p := range reports {
		if p.Embedded < prev {
			t.Fatalf("embedded went back from %d to %d", prev, p.Embedded)
		}
		prev = p.Embedded
		if p.Embedded > 0 && p.Embedded < p.Made && p.Chunks == 0 {
			partial++
		}
	}
	if want := (rep.Chunks+7)/8 - 1; rep.Chunks < 32 || partial < want {
		t.Errorf("%d reports while the batch of %d chunks was being embedded, want one per request but the last (%d)", partial, rep.Chunks, want)
	}
	if s := last.String(); !strings.Contains(s, fmt.Sprintf("embedded %d/%d chunks", rep.Chunks, rep.Chunks)) {
		t.Errorf("last report reads %q", s)
	}
}

// Without an embedder the work is the chunks written.
func TestProgressKeywordOnly(t *testing.T) {
	s := open(t)
	var last index.Progress
	ix := index.New(s, index.Options{Progress: func(p index.Progress) { last = p }})
	rep, err := ix.Run(context.Background(), []string{fixture(t)})
	if err != nil {
		t.Fatal(err)
	}
	if done, total := last.Work(); done != rep.Chunks || total != rep.Chunks || last.Embedding {
		t.Errorf("work %d/%d (%+v), want %d/%d chunks written", done, total, last, rep.Chunks, rep.Chunks)
	}
}

func TestProgressString(t *testing.T) {
	for _, c := range []struct {
		p    index.Progress
		want string
	}{
		{index.Progress{Read: 3, Reading: true}, "read 3 source(s)"},
		{index.Progress{Read: 5, Unchanged: 5}, "read 5 source(s), all unchanged"},
		{index.Progress{Read: 30, Made: 609, Embedding: true, Embedded: 120, Working: 10 * time.Second}, "embedded 120/609 chunks, 12.0 chunks/s, about 41s left"},
		{index.Progress{Read: 30, Made: 609, Embedding: true, Embedded: 120, Working: 10 * time.Second, Reading: true}, "embedded 120/609+ chunks (reading: 30 source(s) so far), 12.0 chunks/s, at least 41s left"},
		{index.Progress{Made: 6000, Embedding: true, Embedded: 10, Working: 100 * time.Second}, "embedded 10/6000 chunks, 6.0 chunks/min, about 16h38m left"},
		{index.Progress{Made: 609, Embedding: true, Embedded: 609, Working: 46 * time.Second}, "embedded 609/609 chunks"},
		{index.Progress{Made: 278, Chunks: 100, Working: time.Second}, "wrote 100/278 chunks, 100 chunks/s, about 2s left"},
	} {
		if got := c.p.String(); got != c.want {
			t.Errorf("%+v:\n got %q\nwant %q", c.p, got, c.want)
		}
	}
}

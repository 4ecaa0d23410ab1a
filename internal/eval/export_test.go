package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/chunk"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
)

// The chunks other engines are fed (scripts/peers.sh) are the chunks the
// bench indexes: same count, same texts, titles and headings.
func TestExportChunksAreTheIndexedChunks(t *testing.T) {
	ctx := context.Background()
	var texts []string
	for i := range 12 {
		texts = append(texts, strings.Repeat("Sentence "+string(rune('a'+i))+" about cells and proteins in tissue. ", 20+40*i))
	}
	opt := chunk.Options{}
	var buf bytes.Buffer
	sum, err := ExportChunks(&buf, texts, 30, 1, opt)
	if err != nil {
		t.Fatal(err)
	}
	type line struct{ ID, Title, Heading, Text string }
	var got []line
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var c line
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		got = append(got, c)
	}
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "i.db"), sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep, err := index.New(s, index.Options{Chunk: opt}).Stream(ctx, func(emit func(doc.Document) error) error {
		return Synthesize(texts, 30, 1, emit)
	})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Sources != 30 || sum.Chunks != rep.Chunks || len(got) != rep.Chunks || sum.Chunks <= sum.Sources {
		t.Fatalf("exported %d chunks of %d sources (%d lines), indexed %d: want the same, more than one a source for long texts", sum.Chunks, sum.Sources, len(got), rep.Chunks)
	}
	if want := float64(rep.Bytes) / 1e6; sum.MB < want-1e-9 || sum.MB > want+1e-9 {
		t.Errorf("exported %.6f MB of text, indexed %.6f", sum.MB, want)
	}
	stored := map[string]line{}
	err = s.EachChunk(ctx, func(c doc.Chunk, title string) error {
		src, err := s.Source(ctx, c.SourceID)
		if err != nil {
			return err
		}
		stored[fmt.Sprintf("%s#%d", src.URI, c.Index)] = line{Title: title, Heading: c.HeadingPath(), Text: c.Text}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range got {
		w, ok := stored[c.ID]
		if !ok || w.Text != c.Text || w.Title != c.Title || w.Heading != c.Heading {
			t.Errorf("exported %s = %q/%q/%.40q, indexed %q/%q/%.40q", c.ID, c.Title, c.Heading, c.Text, w.Title, w.Heading, w.Text)
		}
	}
}

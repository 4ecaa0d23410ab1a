package segment

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/analyze/analyzetest"
	"github.com/sagasu-dev/sagasu/internal/chunk"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/bm25"
)

// realBatch chunks real documents as indexing does: SciFact abstracts as
// text and the VitePress docs as Markdown (with heading paths).
func realBatch(t *testing.T) []store.SourceData {
	t.Helper()
	var docs []doc.Document
	for i, text := range analyzetest.SciFact(t, 2000) {
		title, _, _ := strings.Cut(text, "\n")
		docs = append(docs, doc.Document{URI: fmt.Sprint("scifact:", i), Title: title, Format: doc.FormatText, Content: text})
	}
	for i, text := range analyzetest.VitePress(t) {
		docs = append(docs, doc.Document{URI: fmt.Sprint("vitepress:", i), Title: fmt.Sprint("Page ", i), Format: doc.FormatMarkdown, Content: text})
	}
	var batch []store.SourceData
	for _, d := range docs {
		chunks, err := chunk.Split(d, chunk.Options{})
		if err != nil {
			t.Fatalf("chunk %s: %v", d.URI, err)
		}
		batch = append(batch, store.SourceData{Source: doc.Source{ID: d.URI, URI: d.URI, Title: d.Title}, Content: d.Content, Chunks: chunks})
	}
	return batch
}

// TestPrepareMatchesCountOnRealText checks on real text that Prepare, with
// its tally tables and term buffers reused from chunk to chunk, builds the
// postings, lengths and hashes that counting each chunk's terms afresh with
// bm25.Count builds, byte for byte.
func TestPrepareMatchesCountOnRealText(t *testing.T) {
	batch := realBatch(t)
	an := analyze.New(analyze.Options{})
	fresh := analyze.New(analyze.Options{})
	want := bm25.NewBuilder()
	var id uint64
	for _, sd := range batch {
		for _, c := range sd.Chunks {
			id++
			var fields [bm25.NumFields][]string
			for f, text := range Fields(sd.Source.Title, c) {
				fields[f] = fresh.Terms(text)
			}
			want.AddCounts(id, bm25.Count(fields))
		}
	}
	got := Prepare(an, batch)
	if got.Postings.Docs != want.Docs || got.Postings.Tokens != want.Tokens {
		t.Fatalf("%d docs, %v tokens; want %d, %v", got.Postings.Docs, got.Postings.Tokens, want.Docs, want.Tokens)
	}
	terms := want.Terms()
	if gt := got.Postings.Terms(); strings.Join(gt, " ") != strings.Join(terms, " ") {
		t.Fatalf("terms differ: %d vs %d", len(gt), len(terms))
	}
	for _, term := range terms {
		w, wn := want.Encoded(term, 7)
		g, gn := got.Postings.Encoded(term, 7)
		if gn != wn || !bytes.Equal(g, w) {
			t.Fatalf("postings of %q differ: %d vs %d", term, gn, wn)
		}
	}
	rows := Analyse(fresh, batch)
	for i := range batch {
		for j, r := range rows[i] {
			if g := got.Chunks[i][j]; g.Len != r.Counts.Total() || g.Hash != r.Hash {
				t.Fatalf("chunk %d of %s: %+v, want len %d hash %s", j, batch[i].Source.URI, g, r.Counts.Total(), r.Hash)
			}
		}
	}
	if id < 2*PrepareWindow {
		t.Errorf("only %d chunks: fewer than two Prepare windows", id)
	}
}

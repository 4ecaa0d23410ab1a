package segment

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/bm25"
)

// testBatch makes sources of chunks with English and Japanese words, some
// repeated across chunks, and more chunks than one Prepare window.
func testBatch(sources, chunks int) []store.SourceData {
	words := strings.Fields("index search chunk posting segment 検索 設定ファイル analysis the of merge 日本語 token vector")
	var batch []store.SourceData
	for i := range sources {
		sd := store.SourceData{Source: doc.Source{ID: fmt.Sprint("s", i), URI: fmt.Sprint("file:", i), Title: fmt.Sprint("Title ", i)}}
		for j := range chunks {
			var b strings.Builder
			for k := range 40 + j%17 {
				b.WriteString(words[(i*7+j*3+k*k)%len(words)])
				fmt.Fprintf(&b, " w%d ", (j*k)%97)
			}
			sd.Chunks = append(sd.Chunks, doc.Chunk{Index: j, Text: b.String(), Heading: []string{"H", fmt.Sprint(j % 3)}})
		}
		batch = append(batch, sd)
	}
	return batch
}

// TestPrepareMatchesAnalyse checks that the windowed, pre-encoded write path
// stores exactly what analysing every chunk and building the postings with
// the real IDs stores: the same rows, lengths and hashes.
func TestPrepareMatchesAnalyse(t *testing.T) {
	an := analyze.New(analyze.Options{})
	batch := testBatch(3, PrepareWindow+40)
	rows := Analyse(an, batch)
	for _, base := range []uint64{0, 1000, 1 << 40} {
		want := bm25.NewBuilder()
		id := base
		for i := range batch {
			for j := range batch[i].Chunks {
				id++
				want.AddCounts(id, rows[i][j].Counts)
			}
		}
		got := Prepare(an, batch)
		if got.Postings.Docs != want.Docs || got.Postings.Tokens != want.Tokens {
			t.Fatalf("base %d: %d docs, %d tokens; want %d, %d", base, got.Postings.Docs, got.Postings.Tokens, want.Docs, want.Tokens)
		}
		terms := want.Terms()
		if gt := got.Postings.Terms(); strings.Join(gt, " ") != strings.Join(terms, " ") {
			t.Fatalf("base %d: terms differ: %d vs %d", base, len(gt), len(terms))
		}
		for _, term := range terms {
			wantData := bm25.Encode(nil, want.Postings(term))
			data, n := got.Postings.Encoded(term, base)
			if !bytes.Equal(data, wantData) || n != len(want.Postings(term)) {
				t.Fatalf("base %d: postings of %q differ", base, term)
			}
		}
		for i := range batch {
			for j, r := range rows[i] {
				if g := got.Chunks[i][j]; g.Len != r.Counts.Total() || g.Hash != r.Hash {
					t.Fatalf("chunk %d of source %d: %+v, want len %d hash %s", j, i, g, r.Counts.Total(), r.Hash)
				}
			}
		}
	}
}

// TestPrepareRetainsLittle checks that what Prepare keeps for a batch is
// small next to what Analyse keeps: encoded postings, not every chunk's
// terms. This is what bounds the memory of indexing one large file.
func TestPrepareRetainsLittle(t *testing.T) {
	an := analyze.New(analyze.Options{})
	batch := testBatch(2, 2000)
	retained := func(f func() any) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		v := f()
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(v)
		return after.HeapAlloc - min(before.HeapAlloc, after.HeapAlloc)
	}
	prep := retained(func() any { return Prepare(an, batch) })
	all := retained(func() any { return Analyse(an, batch) })
	t.Logf("retained: Prepare %d KB, Analyse %d KB", prep>>10, all>>10)
	if prep*2 > all {
		t.Errorf("Prepare keeps %d bytes, more than half of Analyse's %d", prep, all)
	}
}

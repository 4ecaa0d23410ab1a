// Package storetest is the conformance suite every store.Store driver must
// pass unchanged. A driver's test calls Run with a function that opens a
// fresh, empty store.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/bm25"
)

// Opener returns a new, empty store; the suite closes it.
type Opener func(t *testing.T) store.Store

// Run runs the whole suite.
func Run(t *testing.T, open Opener) { RunWith(t, open, Options{}) }

// RunWith runs the whole suite with options for a driver that cannot meet
// every check exactly (see Options).
func RunWith(t *testing.T, open Opener, opt Options) {
	tests := []struct {
		name string
		fn   func(*testing.T, store.Store)
	}{
		{"RoundTrip", testRoundTrip},
		{"ReplaceIsIdempotent", testReplaceIdempotent},
		{"ReplaceChangesContent", testReplaceChanges},
		{"ReplaceIsAtomic", testReplaceAtomic},
		{"ReplaceContract", testReplaceContract},
		{"Delete", testDelete},
		{"DeleteChunksWithoutTerms", testDeleteNoTerms},
		{"KeywordMatchesReferenceBM25", testKeywordReference},
		{"KeywordFilters", testKeywordFilters},
		{"KeywordJapanese", testKeywordJapanese},
		{"KeywordAfterManyBatches", testManyBatches},
		{"DocFreq", testDocFreq},
		{"Meta", testMeta},
		{"Lock", testLock},
		{"NotFound", testNotFound},
		{"Apply", testApply},
	}
	for _, tc := range slices.Concat(tests, vectorTests, runTests, runDeleteTests, leaseTests, renameTests) {
		t.Run(tc.name, func(t *testing.T) {
			s := opt.wrap(open(t))
			defer s.Close()
			tc.fn(t, s)
		})
	}
}

// Source builds a SourceData whose chunks are the paragraphs of content.
func Source(uri string, typ doc.SourceType, title, content string) store.SourceData {
	sd := store.SourceData{
		Source: doc.Source{
			ID: doc.SourceID(uri), URI: uri, Type: typ, Format: doc.FormatText,
			Title: title, ContentHash: doc.ContentHash(content),
		},
		Content: content,
	}
	off, line := 0, 1
	for i, p := range strings.Split(content, "\n\n") {
		lines := strings.Count(p, "\n")
		sd.Chunks = append(sd.Chunks, doc.Chunk{
			Index: i, Text: p, Heading: []string{title, fmt.Sprintf("Part %d", i+1)},
			StartLine: line, EndLine: line + lines, StartByte: off, EndByte: off + len(p), Tokens: len(strings.Fields(p)),
		})
		off += len(p) + 2
		line += lines + 2
	}
	return sd
}

// corpus is a small collection with known vocabulary.
func corpus() []store.SourceData {
	return []store.SourceData{
		Source("docs/cats.md", doc.TypeFile, "Cats", "Cats are small domesticated carnivores.\n\nA cat sleeps most of the day and hunts mice at night."),
		Source("docs/dogs.md", doc.TypeFile, "Dogs", "Dogs are loyal companions.\n\nA dog and a cat can live together when introduced early."),
		Source("notes/finance.txt", doc.TypeFile, "Finance", "Quarterly revenue rose by ten percent.\n\nRevenue growth came from new subscriptions, not from cats."),
		Source("text:abc", doc.TypeText, "Snippet", "Routing maps URLs to pages. Dynamic routes use parameters."),
		Source("ja/guide/config.md", doc.TypeFile, "設定", "VitePressの設定ファイルを作成します。\n\nテーマの設定はthemeConfigで行います。"),
	}
}

func mustReplace(t *testing.T, s store.Store, batch ...store.SourceData) {
	t.Helper()
	if err := s.Replace(context.Background(), batch); err != nil {
		t.Fatalf("Replace: %v", err)
	}
}

// Terms analyses a query as search does (the default analyzer), for
// tests that call a store's keyword index directly.
func Terms(q string) []string {
	return analyze.New(analyze.Options{}).QueryTerms(q)
}

func kwSearch(t *testing.T, s store.Store, q string, k int, f store.Filter) []store.Scored {
	t.Helper()
	res, err := s.KeywordSearch(context.Background(), Terms(q), k, f)
	if err != nil {
		t.Fatalf("KeywordSearch(%q): %v", q, err)
	}
	return res
}

// sourceURIs lists the URIs of every stored source, in order.
func sourceURIs(t *testing.T, s store.Store) []string {
	t.Helper()
	list, err := s.Sources(context.Background(), store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, src := range list {
		out = append(out, src.URI)
	}
	return out
}

// uris maps scored chunks to their source URIs, in order.
func uris(t *testing.T, s store.Store, res []store.Scored) []string {
	t.Helper()
	ids := make([]int64, len(res))
	for i, r := range res {
		ids[i] = r.ChunkID
	}
	hits, err := s.Hits(context.Background(), ids)
	if err != nil {
		t.Fatalf("Hits: %v", err)
	}
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Source.URI
	}
	return out
}

func testRoundTrip(t *testing.T, s store.Store) {
	ctx := context.Background()
	c := corpus()
	mustReplace(t, s, c...)
	for _, want := range c {
		got, err := s.SourceByURI(ctx, want.Source.URI)
		if err != nil {
			t.Fatalf("SourceByURI(%q): %v", want.Source.URI, err)
		}
		if got.ID != want.Source.ID || got.Title != want.Source.Title || got.Type != want.Source.Type ||
			got.ContentHash != want.Source.ContentHash || got.Chunks != len(want.Chunks) || got.Size != len(want.Content) {
			t.Errorf("source %q = %+v, want fields of %+v", want.Source.URI, got, want.Source)
		}
		byID, err := s.Source(ctx, want.Source.ID)
		if err != nil || byID != got {
			t.Errorf("Source(%q) = %+v, %v; want %+v", want.Source.ID, byID, err, got)
		}
		content, err := s.Content(ctx, got.ID)
		if err != nil || content != want.Content {
			t.Errorf("Content(%q) = %q, %v; want %q", got.ID, content, err, want.Content)
		}
		chunks, err := s.Chunks(ctx, got.ID)
		if err != nil {
			t.Fatalf("Chunks: %v", err)
		}
		if len(chunks) != len(want.Chunks) {
			t.Fatalf("Chunks(%q) has %d chunks, want %d", got.URI, len(chunks), len(want.Chunks))
		}
		for i, ch := range chunks {
			w := want.Chunks[i]
			if ch.ID == 0 || ch.SourceID != got.ID || ch.Index != i || ch.Text != w.Text ||
				!slices.Equal(ch.Heading, w.Heading) || ch.StartLine != w.StartLine || ch.EndLine != w.EndLine ||
				ch.StartByte != w.StartByte || ch.EndByte != w.EndByte || ch.Tokens != w.Tokens {
				t.Errorf("chunk %d of %q = %+v, want %+v", i, got.URI, ch, w)
			}
		}
		hits, err := s.Hits(ctx, []int64{chunks[len(chunks)-1].ID, chunks[0].ID, 1 << 40})
		if err != nil {
			t.Fatalf("Hits: %v", err)
		}
		if len(hits) != 2 || hits[0].Chunk.ID != chunks[len(chunks)-1].ID || hits[1].Chunk.ID != chunks[0].ID || hits[0].Source.URI != got.URI {
			t.Errorf("Hits kept order and skipped unknown IDs? got %+v", hits)
		}
	}
	got := sourceURIs(t, s)
	want := []string{"docs/cats.md", "docs/dogs.md", "ja/guide/config.md", "notes/finance.txt", "text:abc"}
	if !slices.Equal(got, want) {
		t.Errorf("Sources() URIs = %v, want %v (ordered by URI)", got, want)
	}
	page, _ := s.Sources(ctx, store.ListOptions{Limit: 2, Offset: 1})
	if len(page) != 2 || page[0].URI != "docs/dogs.md" {
		t.Errorf("Sources(limit 2, offset 1) = %v", page)
	}
	onlyText, _ := s.Sources(ctx, store.ListOptions{Type: doc.TypeText})
	if len(onlyText) != 1 || onlyText[0].URI != "text:abc" {
		t.Errorf("Sources(type text) = %v", onlyText)
	}
	docs, _ := s.Sources(ctx, store.ListOptions{PathGlob: "docs/**"})
	if len(docs) != 2 {
		t.Errorf("Sources(glob docs/**) = %v, want 2", docs)
	}
	hashes, err := s.Hashes(ctx)
	if err != nil || len(hashes) != 5 || hashes["docs/cats.md"] != c[0].Source.ContentHash {
		t.Errorf("Hashes() = %v, %v", hashes, err)
	}
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	chunks := 0
	bytes := 0
	for _, sd := range c {
		chunks += len(sd.Chunks)
		bytes += len(sd.Content)
	}
	if st.Sources != 5 || st.Chunks != chunks || st.Bytes != int64(bytes) || st.Terms == 0 {
		t.Errorf("Stats() = %+v, want 5 sources, %d chunks, %d bytes", st, chunks, bytes)
	}
}

func snapshot(t *testing.T, s store.Store) string {
	t.Helper()
	ctx := context.Background()
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st.SizeBytes = 0
	var b strings.Builder
	fmt.Fprintf(&b, "%+v\n", st)
	srcs, _ := s.Sources(ctx, store.ListOptions{})
	for _, src := range srcs {
		chunks, _ := s.Chunks(ctx, src.ID)
		fmt.Fprintf(&b, "%s %s %d:", src.URI, src.ContentHash, src.Chunks)
		for _, c := range chunks {
			fmt.Fprintf(&b, " [%d %q]", c.Index, c.Text)
		}
		b.WriteByte('\n')
	}
	_, rankOnly := s.(rankOnly)
	for _, q := range []string{"cat", "revenue", "設定", "dog cat together"} {
		res := kwSearch(t, s, q, 10, store.Filter{})
		if rankOnly {
			// Scores, and so the order of near ties, are not held to
			// the reference (Options): which sources are hit is.
			fmt.Fprintf(&b, "%s %v|", q, slices.Sorted(slices.Values(uris(t, s, res))))
			continue
		}
		for _, r := range res {
			fmt.Fprintf(&b, "%s %.6f|", q, r.Score)
		}
	}
	return b.String()
}

func testReplaceIdempotent(t *testing.T, s store.Store) {
	mustReplace(t, s, corpus()...)
	first := snapshot(t, s)
	mustReplace(t, s, corpus()...)
	mustReplace(t, s, corpus()[1:3]...)
	if second := snapshot(t, s); second != first {
		t.Errorf("replacing the same sources changed the index:\nfirst:\n%s\nafter:\n%s", first, second)
	}
}

func testReplaceChanges(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustReplace(t, s, corpus()...)
	changed := Source("docs/cats.md", doc.TypeFile, "Cats", "Cats purr.\n\nKittens are young cats.\n\nZebras are not cats.")
	mustReplace(t, s, changed)
	src, err := s.SourceByURI(ctx, "docs/cats.md")
	if err != nil || src.Chunks != 3 || src.ContentHash != changed.Source.ContentHash {
		t.Fatalf("after change: %+v, %v", src, err)
	}
	if res := kwSearch(t, s, "zebras", 10, store.Filter{}); len(res) != 1 {
		t.Errorf("new text not searchable: %v", res)
	}
	if res := kwSearch(t, s, "carnivores", 10, store.Filter{}); len(res) != 0 {
		t.Errorf("old text still searchable after replace: %v", uris(t, s, res))
	}
	fresh := snapshotOf(t, s)
	if !strings.Contains(fresh, "Kittens") || strings.Contains(fresh, "domesticated") {
		t.Errorf("chunks not replaced:\n%s", fresh)
	}
}

func snapshotOf(t *testing.T, s store.Store) string {
	ctx := context.Background()
	srcs, _ := s.Sources(ctx, store.ListOptions{})
	var b strings.Builder
	for _, src := range srcs {
		chunks, _ := s.Chunks(ctx, src.ID)
		for _, c := range chunks {
			b.WriteString(c.Text + "\n")
		}
	}
	return b.String()
}

func testReplaceAtomic(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustReplace(t, s, corpus()[:2]...)
	before := snapshot(t, s)
	bad := Source("docs/bad.md", doc.TypeFile, "Bad", "one\n\ntwo")
	bad.Vectors = [][]float32{{1, 0}} // 1 vector for 2 chunks: invalid
	good := Source("docs/good.md", doc.TypeFile, "Good", "fresh words here")
	if err := s.Replace(ctx, []store.SourceData{good, bad}); err == nil {
		t.Fatal("Replace accepted a source with a vector count that does not match its chunks")
	}
	if after := snapshot(t, s); after != before {
		t.Errorf("a failed Replace changed the index:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if _, err := s.SourceByURI(ctx, "docs/good.md"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("half of a failed batch was written: %v", err)
	}
	// A cancelled context writes nothing either.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Replace(cctx, []store.SourceData{good}); err == nil {
		t.Error("Replace with a cancelled context succeeded")
	}
	if after := snapshot(t, s); after != before {
		t.Errorf("a cancelled Replace changed the index")
	}
}

// testReplaceContract holds every store to the same rules for a batch:
// an empty one writes nothing and succeeds (even with a cancelled
// context: there is nothing to cancel); a source without a URI, or whose
// ID is not its URI's, is refused and nothing of the batch is written; a
// source given twice is stored once, as its last entry; a source without
// an ID gets its URI's.
func testReplaceContract(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustReplace(t, s, corpus()[:2]...)
	before := snapshot(t, s)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for name, c := range map[string]context.Context{"": ctx, " with a cancelled context": cancelled} {
		for _, batch := range [][]store.SourceData{nil, {}} {
			if err := s.Replace(c, batch); err != nil {
				t.Errorf("Replace of an empty batch%s = %v, want nil", name, err)
			}
		}
	}
	if after := snapshot(t, s); after != before {
		t.Errorf("an empty Replace changed the index:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	good := Source("docs/good.md", doc.TypeFile, "Good", "fresh words here")
	noURI := Source("docs/nouri.md", doc.TypeFile, "No URI", "orphan words")
	noURI.Source.URI, noURI.Source.ID = "", "" // no ID to disagree with: the URI check alone refuses it
	wrongID := Source("docs/wrong.md", doc.TypeFile, "Wrong", "misfiled words")
	wrongID.Source.ID = doc.SourceID("docs/other.md")
	for what, bad := range map[string]store.SourceData{"without a URI": noURI, "whose ID is not its URI's": wrongID} {
		err := s.Replace(ctx, []store.SourceData{good, bad})
		if err == nil {
			t.Errorf("Replace accepted a source %s", what)
		}
		if after := snapshot(t, s); after != before {
			t.Errorf("a refused batch (a source %s) changed the index:\nbefore:\n%s\nafter:\n%s", what, before, after)
		}
		if _, err := s.SourceByURI(ctx, "docs/good.md"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the good half of a batch with a source %s was written: %v", what, err)
		}
	}

	first := Source("docs/twice.md", doc.TypeFile, "Twice", "draft wording\n\nsecond paragraph")
	last := Source("docs/twice.md", doc.TypeFile, "Twice", "final wording")
	last.Source.ID = "" // filled in from the URI
	mustReplace(t, s, first, good, last)
	if got, want := sourceURIs(t, s), []string{"docs/cats.md", "docs/dogs.md", "docs/good.md", "docs/twice.md"}; !slices.Equal(got, want) {
		t.Errorf("after a batch naming docs/twice.md twice: sources %v, want %v", got, want)
	}
	twice, err := s.SourceByURI(ctx, "docs/twice.md")
	if err != nil || twice.ID != doc.SourceID("docs/twice.md") || twice.Chunks != 1 || twice.ContentHash != last.Source.ContentHash {
		t.Errorf("a source given twice: %+v, %v; want its last entry (1 chunk, hash %s)", twice, err, last.Source.ContentHash)
	}
	if res := kwSearch(t, s, "draft", 10, store.Filter{}); len(res) != 0 {
		t.Errorf("the first entry of a source given twice is searchable: %v", uris(t, s, res))
	}
	if res := kwSearch(t, s, "final", 10, store.Filter{}); len(res) != 1 {
		t.Errorf("the last entry of a source given twice: %d hits for its word, want 1", len(res))
	}
}

func testDelete(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustReplace(t, s, corpus()...)
	n, err := s.Delete(ctx, []string{doc.SourceID("docs/cats.md"), "no-such-id"})
	if err != nil || n != 1 {
		t.Fatalf("Delete = %d, %v; want 1, nil", n, err)
	}
	if _, err := s.SourceByURI(ctx, "docs/cats.md"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleted source still there: %v", err)
	}
	if _, err := s.Content(ctx, doc.SourceID("docs/cats.md")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleted content still there: %v", err)
	}
	for _, u := range uris(t, s, kwSearch(t, s, "cat", 10, store.Filter{})) {
		if u == "docs/cats.md" {
			t.Errorf("deleted source still found by keyword search")
		}
	}
	// The index after delete equals an index that never had the source.
	matchReference(t, s, corpus()[1:], "cat mice", "after delete")
}

// matchReference checks that keyword search for q scores as the reference
// BM25 over exactly the sources c.
func matchReference(t *testing.T, s store.Store, c []store.SourceData, q, when string) {
	t.Helper()
	want := referenceScores(c, q)
	got := kwSearch(t, s, q, 10, store.Filter{})
	if len(got) != len(want) {
		t.Fatalf("%s %d hits, reference %d", when, len(got), len(want))
	}
	for i := range got {
		if !scoreOK(s, got[i].Score, want[i]) {
			t.Errorf("%s hit %d score %.6f, reference %.6f (collection statistics not updated?)", when, i, got[i].Score, want[i])
		}
	}
}

// testDeleteNoTerms deletes chunks that have no keyword terms at all: they
// count in the collection statistics while indexed (BM25's N), so they must
// be counted out when deleted, alone or with chunks that have terms.
func testDeleteNoTerms(t *testing.T, s store.Store) {
	ctx := context.Background()
	blank := func(uri string) store.SourceData {
		sd := Source(uri, doc.TypeText, "", "... --- !!!")
		sd.Chunks[0].Heading = nil
		return sd
	}
	if terms := Terms(doc.ContextText("", blank("x").Chunks[0])); len(terms) != 0 {
		t.Fatalf("test chunk has terms %v", terms)
	}
	mixed := corpus()[0]
	mixed.Chunks = append(mixed.Chunks, blank("x").Chunks[0])
	mixed.Chunks[len(mixed.Chunks)-1].Index = len(mixed.Chunks) - 1
	rest := corpus()[1:]
	mustReplace(t, s, append([]store.SourceData{mixed, blank("blank/1"), blank("blank/2")}, rest...)...)
	before, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, []string{doc.SourceID("blank/1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, []string{mixed.Source.ID, doc.SourceID("blank/2")}); err != nil {
		t.Fatal(err)
	}
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := before.Chunks - len(mixed.Chunks) - 2; st.Chunks != want {
		t.Errorf("after deleting %d chunks of %d, Stats.Chunks = %d, want %d", len(mixed.Chunks)+2, before.Chunks, st.Chunks, want)
	}
	matchReference(t, s, rest, "cat mice", "after deleting chunks without terms")
}

// referenceScores computes BM25F scores of the chunks in c for q, best
// first, with a direct, unoptimised implementation of the formula and the
// default parameters that a new index pins: each chunk has three fields —
// the source title, the heading path (less a first heading equal to the
// title) and the text — each length-normalised by its own average and
// weighted, and their sum saturates once.
func referenceScores(c []store.SourceData, q string) []float64 {
	an := analyze.New(analyze.Options{})
	p := bm25.DefaultParams()
	type chunk struct {
		fields [bm25.NumFields][]string
		all    []string
	}
	var docs []chunk
	var total [bm25.NumFields]int
	for _, sd := range c {
		for _, ch := range sd.Chunks {
			h := ch.Heading
			if len(h) > 0 && h[0] == sd.Source.Title {
				h = h[1:]
			}
			var d chunk
			d.fields[bm25.Title] = an.Terms(sd.Source.Title)
			d.fields[bm25.Heading] = an.Terms(strings.Join(h, "\n"))
			d.fields[bm25.Body] = an.Terms(ch.Text)
			for f, terms := range d.fields {
				total[f] += len(terms)
				d.all = append(d.all, terms...)
			}
			docs = append(docs, d)
		}
	}
	var scores []float64
	for _, d := range docs {
		s := 0.0
		for _, term := range an.QueryTerms(q) {
			df := 0
			for _, other := range docs {
				if slices.Contains(other.all, term) {
					df++
				}
			}
			tf := 0.0
			for f, terms := range d.fields {
				n := 0
				for _, w := range terms {
					if w == term {
						n++
					}
				}
				if n == 0 {
					continue
				}
				avg := float64(total[f]) / float64(len(docs))
				tf += p.Weight[f] * float64(n) / (1 - p.B[f] + p.B[f]*float64(len(terms))/avg)
			}
			if tf == 0 {
				continue
			}
			idf := math.Log(1 + (float64(len(docs))-float64(df)+0.5)/(float64(df)+0.5))
			s += idf * tf * (p.K1 + 1) / (p.K1 + tf)
		}
		if s > 0 {
			scores = append(scores, s)
		}
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(scores)))
	return scores
}

func testKeywordReference(t *testing.T, s store.Store) {
	c := corpus()
	mustReplace(t, s, c...)
	for _, q := range []string{"cat", "cats dogs", "revenue growth subscriptions", "routing dynamic", "a cat and a dog", "設定"} {
		want := referenceScores(c, q)
		got := kwSearch(t, s, q, 100, store.Filter{})
		if len(got) != len(want) {
			t.Errorf("%q: %d hits, reference BM25 has %d", q, len(got), len(want))
			continue
		}
		for i := range got {
			if !scoreOK(s, got[i].Score, want[i]) {
				t.Errorf("%q hit %d: score %.6f, reference %.6f", q, i, got[i].Score, want[i])
			}
			if i > 0 && got[i].Score > got[i-1].Score {
				t.Errorf("%q: hits not sorted by score", q)
			}
		}
	}
	top := uris(t, s, kwSearch(t, s, "revenue", 1, store.Filter{}))
	if len(top) != 1 || top[0] != "notes/finance.txt" {
		t.Errorf(`top hit for "revenue" = %v, want notes/finance.txt`, top)
	}
	if res := kwSearch(t, s, "cat", 2, store.Filter{}); len(res) != 2 {
		t.Errorf("k=2 returned %d hits", len(res))
	}
	if res := kwSearch(t, s, "the of and", 10, store.Filter{}); len(res) != 0 {
		t.Errorf("a stopword-only query matched %d chunks", len(res))
	}
	if res := kwSearch(t, s, "", 10, store.Filter{}); len(res) != 0 {
		t.Errorf("an empty query matched %d chunks", len(res))
	}
	if res := kwSearch(t, s, "xylophone", 10, store.Filter{}); len(res) != 0 {
		t.Errorf("an unknown word matched %d chunks", len(res))
	}
}

func testKeywordFilters(t *testing.T, s store.Store) {
	mustReplace(t, s, corpus()...)
	all := kwSearch(t, s, "cat cats", 10, store.Filter{})
	if len(all) < 3 {
		t.Fatalf("want cat hits in several sources, got %v", uris(t, s, all))
	}
	for _, tc := range []struct {
		name string
		f    store.Filter
		ok   func(string) bool
	}{
		{"glob", store.Filter{PathGlob: "docs/**"}, func(u string) bool { return strings.HasPrefix(u, "docs/") }},
		{"type", store.Filter{Types: []doc.SourceType{doc.TypeText}}, func(u string) bool { return u == "text:abc" }},
		{"source", store.Filter{SourceIDs: []string{doc.SourceID("notes/finance.txt")}}, func(u string) bool { return u == "notes/finance.txt" }},
	} {
		got := uris(t, s, kwSearch(t, s, "cat cats routing", 10, tc.f))
		if tc.name != "type" && len(got) == 0 {
			t.Errorf("%s filter: no hits", tc.name)
		}
		for _, u := range got {
			if !tc.ok(u) {
				t.Errorf("%s filter let %q through", tc.name, u)
			}
		}
	}
	ex := kwSearch(t, s, "cat cats", 10, store.Filter{ExcludeChunks: []int64{all[0].ChunkID}})
	if len(ex) != len(all)-1 || ex[0].ChunkID == all[0].ChunkID {
		t.Errorf("ExcludeChunks did not drop the excluded chunk: %v vs %v", ex, all)
	}
}

func testKeywordJapanese(t *testing.T, s store.Store) {
	mustReplace(t, s, corpus()...)
	for _, q := range []string{"設定ファイル", "テーマの設定", "VitePressの設定方法"} {
		got := uris(t, s, kwSearch(t, s, q, 3, store.Filter{}))
		if len(got) == 0 || got[0] != "ja/guide/config.md" {
			t.Errorf("Japanese query %q found %v, want ja/guide/config.md first", q, got)
		}
	}
}

func testManyBatches(t *testing.T, s store.Store) {
	// Many small writes (as a file-by-file index run makes) must rank exactly
	// like one big write: segment merges may not lose or duplicate postings.
	var all []store.SourceData
	words := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}
	for i := 0; i < 150; i++ {
		text := fmt.Sprintf("%s %s document %d about %s", words[i%8], words[(i*3)%8], i, words[(i*5)%8])
		all = append(all, Source(fmt.Sprintf("gen/%03d.txt", i), doc.TypeFile, "", text))
	}
	for _, sd := range all {
		mustReplace(t, s, sd)
	}
	// Replace a third of them again and delete a few.
	for i := 0; i < 150; i += 3 {
		mustReplace(t, s, all[i])
	}
	var del []string
	for i := 1; i < 150; i += 10 {
		del = append(del, all[i].Source.ID)
	}
	if _, err := s.Delete(context.Background(), del); err != nil {
		t.Fatal(err)
	}
	var kept []store.SourceData
	for i, sd := range all {
		if i%10 != 1 {
			kept = append(kept, sd)
		}
	}
	for _, q := range []string{"alpha", "beta gamma", "document", "theta zeta eta"} {
		want := referenceScores(kept, q)
		got := kwSearch(t, s, q, 500, store.Filter{})
		if len(got) != len(want) {
			t.Errorf("%q: %d hits after many batches, reference %d", q, len(got), len(want))
			continue
		}
		for i := range got {
			if !scoreOK(s, got[i].Score, want[i]) {
				t.Errorf("%q hit %d: %.6f, reference %.6f", q, i, got[i].Score, want[i])
				break
			}
		}
	}
	st, _ := s.Stats(context.Background())
	if st.Sources != len(kept) || st.Chunks != len(kept) {
		t.Errorf("Stats after many batches = %+v, want %d sources and chunks", st, len(kept))
	}
}

func testDocFreq(t *testing.T, s store.Store) {
	mustReplace(t, s, corpus()...)
	df, n, err := s.DocFreq(context.Background(), Terms("cat revenue xylophone"))
	if err != nil {
		t.Fatal(err)
	}
	an := analyze.New(analyze.Options{})
	cat, rev, xy := an.QueryTerms("cat")[0], an.QueryTerms("revenue")[0], an.QueryTerms("xylophone")[0]
	if n != 9 || df[cat] != 4 || df[rev] != 2 || df[xy] != 0 {
		t.Errorf("DocFreq = %v, %d; want cat 4, revenue 2, xylophone 0 of 9 chunks", df, n)
	}
}

func testMeta(t *testing.T, s store.Store) {
	ctx := context.Background()
	if v, err := s.Meta(ctx, "test.key"); err != nil || v != "" {
		t.Errorf("unset Meta = %q, %v", v, err)
	}
	for _, v := range []string{"one", "two"} {
		if err := s.SetMeta(ctx, "test.key", v); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Meta(ctx, "test.key"); err != nil || got != v {
			t.Errorf("Meta = %q, %v; want %q", got, err, v)
		}
	}
}

func testLock(t *testing.T, s store.Store) {
	ctx := context.Background()
	unlock, err := s.Lock(ctx)
	if err != nil {
		t.Fatalf("first Lock: %v", err)
	}
	if _, err := s.Lock(ctx); !errors.Is(err, store.ErrLocked) {
		t.Errorf("second Lock while held = %v, want ErrLocked", err)
	}
	unlock()
	unlock2, err := s.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock after unlock: %v", err)
	}
	unlock2()
}

func testNotFound(t *testing.T, s store.Store) {
	ctx := context.Background()
	if _, err := s.Source(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Source(unknown) = %v, want ErrNotFound", err)
	}
	if _, err := s.SourceByURI(ctx, "nope.md"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SourceByURI(unknown) = %v, want ErrNotFound", err)
	}
	if _, err := s.Content(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Content(unknown) = %v, want ErrNotFound", err)
	}
	if res := kwSearch(t, s, "anything", 10, store.Filter{}); len(res) != 0 {
		t.Errorf("search on empty store = %v", res)
	}
	if chunks, err := s.Chunks(ctx, "nope"); err != nil || len(chunks) != 0 {
		t.Errorf("Chunks(unknown) = %v, %v", chunks, err)
	}
}

// testApply: one Apply writes some sources and removes others; a failed
// one changes nothing.
func testApply(t *testing.T, s store.Store) {
	ctx := context.Background()
	c := corpus()
	mustReplace(t, s, c[:3]...)
	changed := Source("docs/cats.md", doc.TypeFile, "Cats", "Cats purr.\n\nA cat naps in the sun.")
	added := Source("docs/birds.md", doc.TypeFile, "Birds", "Birds sing at dawn.")
	n, err := s.Apply(ctx, []store.SourceData{changed, added}, []string{c[1].Source.ID, doc.SourceID("docs/unknown.md"), changed.Source.ID})
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if n != 1 {
		t.Errorf("Apply removed %d sources, want 1 (dogs; cats is written, unknown is not there)", n)
	}
	if got, want := sourceURIs(t, s), []string{"docs/birds.md", "docs/cats.md", "notes/finance.txt"}; !slices.Equal(got, want) {
		t.Errorf("after Apply the index holds %v, want %v", got, want)
	}
	if got := uris(t, s, kwSearch(t, s, "purr", 10, store.Filter{})); !slices.Equal(got, []string{"docs/cats.md"}) {
		t.Errorf("search for the new text found %v", got)
	}
	if got := kwSearch(t, s, "loyal", 10, store.Filter{}); len(got) != 0 {
		t.Errorf("search for the removed source's text found %v", uris(t, s, got))
	}
	before := snapshot(t, s)
	bad := Source("docs/bad.md", doc.TypeFile, "Bad", "one\n\ntwo")
	bad.Vectors = [][]float32{{1, 0}}
	if _, err := s.Apply(ctx, []store.SourceData{bad}, []string{added.Source.ID}); err == nil {
		t.Fatal("Apply accepted a source with a vector count that does not match its chunks")
	}
	if after := snapshot(t, s); after != before {
		t.Errorf("a failed Apply changed the index:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if n, err := s.Apply(ctx, nil, nil); n != 0 || err != nil {
		t.Errorf("an empty Apply = %d, %v", n, err)
	}
}

package storetest

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/embed/embedtest"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// vectorTests are the conformance cases for embeddings.
var vectorTests = []struct {
	name string
	fn   func(*testing.T, store.Store)
}{
	{"VectorCosineScores", testVectorCosine},
	{"VectorFilters", testVectorFilters},
	{"VectorReplaceDeleteAndReuse", testVectorLifecycle},
	{"VectorDimensionGuard", testVectorDimension},
	{"VectorSetAndEach", testVectorSetAndEach},
}

// VectorDim is the dimension of the suite's test embeddings.
const VectorDim = 64

const dim = VectorDim

// EmbeddedCorpus is the suite's small corpus with every chunk embedded by
// embedtest.New(VectorDim), for tests of what is built on a store.
func EmbeddedCorpus(t *testing.T) []store.SourceData {
	t.Helper()
	return withVectors(t, corpus())
}

// withVectors embeds every chunk of c with the deterministic test embedder.
func withVectors(t *testing.T, c []store.SourceData) []store.SourceData {
	t.Helper()
	e := embedtest.New(dim)
	out := make([]store.SourceData, len(c))
	for i, sd := range c {
		var texts []string
		for _, ch := range sd.Chunks {
			texts = append(texts, doc.ContextText(sd.Source.Title, ch))
		}
		vecs, err := e.EmbedDocuments(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		sd.Vectors = vecs
		out[i] = sd
	}
	return out
}

func initVectors(t *testing.T, s store.Store) {
	t.Helper()
	if err := s.InitVectors(context.Background(), dim); err != nil {
		t.Fatalf("InitVectors: %v", err)
	}
}

func queryVector(t *testing.T, q string) []float32 {
	t.Helper()
	v, err := embedtest.New(dim).EmbedQuery(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func dot(a, b []float32) float64 {
	s := 0.0
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func testVectorCosine(t *testing.T, s store.Store) {
	ctx := context.Background()
	initVectors(t, s)
	c := withVectors(t, corpus())
	mustReplace(t, s, c...)
	q := queryVector(t, "a cat sleeps during the day")
	got, err := s.VectorSearch(ctx, q, 100, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	// The reference: cosine of the query with every stored (unit) vector.
	var want []float64
	for _, sd := range c {
		for _, v := range sd.Vectors {
			want = append(want, dot(q, v))
		}
	}
	if len(got) != len(want) {
		t.Fatalf("VectorSearch returned %d hits, index has %d vectors", len(got), len(want))
	}
	for i := 1; i < len(got); i++ {
		if got[i].Score > got[i-1].Score+1e-6 {
			t.Errorf("hits not sorted by similarity: %v", got)
		}
	}
	hits, _ := s.Hits(ctx, []int64{got[0].ChunkID})
	if len(hits) != 1 || !strings.Contains(hits[0].Chunk.Text, "sleeps most of the day") {
		t.Errorf("nearest chunk = %+v, want the cat chunk", hits)
	}
	best := -2.0
	for _, w := range want {
		best = math.Max(best, w)
	}
	if math.Abs(got[0].Score-best) > 1e-4 {
		t.Errorf("top score %.6f is not the cosine similarity %.6f", got[0].Score, best)
	}
	if top, _ := s.VectorSearch(ctx, q, 2, store.Filter{}); len(top) != 2 || top[0] != got[0] {
		t.Errorf("k=2 gave %v", top)
	}
	st, _ := s.Stats(ctx)
	if st.Vectors != len(want) {
		t.Errorf("Stats.Vectors = %d, want %d", st.Vectors, len(want))
	}
}

func testVectorFilters(t *testing.T, s store.Store) {
	ctx := context.Background()
	initVectors(t, s)
	mustReplace(t, s, withVectors(t, corpus())...)
	q := queryVector(t, "cat")
	res, err := s.VectorSearch(ctx, q, 3, store.Filter{PathGlob: "notes/**"})
	if err != nil {
		t.Fatal(err)
	}
	if got := uris(t, s, res); len(got) != 2 || got[0] != "notes/finance.txt" || got[1] != "notes/finance.txt" {
		t.Errorf("glob filter: %v, want both finance chunks only", got)
	}
	all, _ := s.VectorSearch(ctx, q, 3, store.Filter{})
	ex, _ := s.VectorSearch(ctx, q, 3, store.Filter{ExcludeChunks: []int64{all[0].ChunkID}})
	if len(ex) != 3 || ex[0].ChunkID == all[0].ChunkID {
		t.Errorf("ExcludeChunks ignored: %v vs %v", ex, all)
	}
}

func testVectorLifecycle(t *testing.T, s store.Store) {
	ctx := context.Background()
	initVectors(t, s)
	c := withVectors(t, corpus())
	mustReplace(t, s, c...)
	// Reuse: every chunk's context text hash finds its stored vector.
	var hashes []string
	for _, sd := range c {
		for _, ch := range sd.Chunks {
			hashes = append(hashes, doc.ContentHash(doc.ContextText(sd.Source.Title, ch)))
		}
	}
	got, err := s.VectorsByHash(ctx, append(hashes, "no-such-hash"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(hashes) {
		t.Errorf("VectorsByHash found %d of %d stored vectors", len(got), len(hashes))
	}
	if v := got[hashes[0]]; len(v) != dim || math.Abs(dot(v, c[0].Vectors[0])-1) > 1e-5 {
		t.Errorf("reused vector differs from the stored one")
	}
	// Replacing a source replaces its vectors; deleting removes them.
	changed := withVectors(t, []store.SourceData{Source("docs/cats.md", doc.TypeFile, "Cats", "Zebras graze on savanna grass.")})
	mustReplace(t, s, changed...)
	res, _ := s.VectorSearch(ctx, queryVector(t, "zebras savanna"), 1, store.Filter{})
	if u := uris(t, s, res); len(u) != 1 || u[0] != "docs/cats.md" {
		t.Errorf("replaced vectors not searchable: %v", u)
	}
	if _, err := s.Delete(ctx, []string{doc.SourceID("docs/cats.md")}); err != nil {
		t.Fatal(err)
	}
	all, _ := s.VectorSearch(ctx, queryVector(t, "zebras"), 100, store.Filter{})
	for _, u := range uris(t, s, all) {
		if u == "docs/cats.md" {
			t.Errorf("deleted source's vectors still searched")
		}
	}
	st, _ := s.Stats(ctx)
	if st.Vectors != st.Chunks {
		t.Errorf("after delete %d vectors for %d chunks", st.Vectors, st.Chunks)
	}
	// A zero vector (a text with no known word) is not stored and never matches.
	zero := Source("docs/zero.md", doc.TypeFile, "", "qqq")
	zero.Vectors = [][]float32{make([]float32, dim)}
	mustReplace(t, s, zero)
	res, err = s.VectorSearch(ctx, queryVector(t, "qqq"), 100, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range uris(t, s, res) {
		if u == "docs/zero.md" {
			t.Errorf("a zero vector was stored and matched")
		}
	}
}

func testVectorDimension(t *testing.T, s store.Store) {
	ctx := context.Background()
	if res, err := s.VectorSearch(ctx, make([]float32, dim), 5, store.Filter{}); err != nil || len(res) != 0 {
		t.Errorf("VectorSearch without vectors = %v, %v; want nothing", res, err)
	}
	sd := withVectors(t, corpus()[:1])
	if err := s.Replace(ctx, sd); err == nil {
		t.Errorf("Replace with vectors before InitVectors succeeded")
	}
	initVectors(t, s)
	if err := s.InitVectors(ctx, dim); err != nil {
		t.Errorf("InitVectors with the same dimension again: %v", err)
	}
	if err := s.InitVectors(ctx, dim+1); err == nil {
		t.Errorf("InitVectors with another dimension succeeded")
	}
	bad := Source("docs/bad.md", doc.TypeFile, "Bad", "short")
	bad.Vectors = [][]float32{{1, 0, 0}}
	if err := s.Replace(ctx, []store.SourceData{bad}); err == nil {
		t.Errorf("Replace with a 3-dimensional vector into a %d-dimensional index succeeded", dim)
	}
	if _, err := s.SourceByURI(ctx, "docs/bad.md"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a rejected batch was partly written: %v", err)
	}
	if _, err := s.VectorSearch(ctx, []float32{1, 0}, 5, store.Filter{}); err == nil {
		t.Errorf("VectorSearch with a wrong-sized query succeeded")
	}
	if err := s.ClearVectors(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.InitVectors(ctx, dim+1); err != nil {
		t.Errorf("InitVectors after ClearVectors: %v", err)
	}
}

func testVectorSetAndEach(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustReplace(t, s, corpus()...) // no vectors yet
	initVectors(t, s)
	e := embedtest.New(dim)
	vecs := map[int64][]float32{}
	var order []int64
	err := s.EachChunk(ctx, func(c doc.Chunk, title string) error {
		order = append(order, c.ID)
		v, err := e.EmbedDocuments(ctx, []string{doc.ContextText(title, c)})
		vecs[c.ID] = v[0]
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(order) != 9 {
		t.Errorf("EachChunk visited %d chunks, want 9", len(order))
	}
	for i := 1; i < len(order); i++ {
		if order[i] <= order[i-1] {
			t.Errorf("EachChunk not in ID order: %v", order)
		}
	}
	if err := s.SetVectors(ctx, vecs); err != nil {
		t.Fatal(err)
	}
	got, _ := s.VectorsByID(ctx, order)
	if len(got) != len(order) {
		t.Errorf("VectorsByID found %d of %d", len(got), len(order))
	}
	res, _ := s.VectorSearch(ctx, queryVector(t, "quarterly revenue"), 1, store.Filter{})
	if u := uris(t, s, res); len(u) != 1 || u[0] != "notes/finance.txt" {
		t.Errorf("after SetVectors, nearest = %v", u)
	}
}

package vecindex

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// reference is the brute-force answer in float64: cosine similarity, top
// k, best first, ties by lower ID; zero rows are never hits.
func reference(rows [][]float32, q []float32, k int, allow func(int64) bool) []store.Scored {
	norm := func(v []float32) []float64 {
		n := 0.0
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if n == 0 {
			return nil
		}
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x) / math.Sqrt(n)
		}
		return out
	}
	uq := norm(q)
	if uq == nil {
		return nil
	}
	var all []store.Scored
	for i, r := range rows {
		ur := norm(r)
		id := int64(i + 1)
		if ur == nil || (allow != nil && !allow(id)) {
			continue
		}
		s := 0.0
		for j := range ur {
			s += ur[j] * uq[j]
		}
		all = append(all, store.Scored{ChunkID: id, Score: s})
	}
	store.SortScored(all)
	return all[:min(k, len(all))]
}

// paths returns every search path over rows (IDs 1..n) that must match
// the reference exactly: the SIMD and portable scans, on one goroutine
// and on several, and int8 with re-ranking of every row.
func paths(t *testing.T, rows [][]float32) map[string]Searcher {
	t.Helper()
	out := map[string]Searcher{}
	for name, opt := range map[string]FlatOptions{
		"simd":              {},
		"simd-3-workers":    {Workers: 3},
		"portable":          {Portable: true},
		"portable-1-worker": {Portable: true, Workers: 1},
	} {
		f := NewFlat(len(rows[0]), opt)
		for i, r := range rows {
			f.Add(int64(i+1), r)
		}
		out[name] = f
	}
	x := NewCompact(out["simd"].(*Flat))
	x.Rerank = len(rows) // re-ranks everything: must be exact
	out["int8-rerank-all"] = x
	return out
}

// grid returns n rows whose entries are 0 or ±0.5 with four non-zero
// values, so every row has length 1 and every dot product is exact in
// float32: results must equal the reference exactly, ties included.
func grid(n, dim int, seed uint64) [][]float32 {
	rng := rand.New(rand.NewPCG(seed, 3))
	rows := make([][]float32, n)
	for i := range rows {
		v := make([]float32, dim)
		for _, j := range rng.Perm(dim)[:4] {
			v[j] = 0.5
			if rng.IntN(2) == 0 {
				v[j] = -0.5
			}
		}
		rows[i] = v
	}
	return rows
}

func TestExactPathsMatchReferenceWithTies(t *testing.T) {
	const dim = 64
	rows := grid(6000, dim, 1) // 6000 x 64 is above parallelMin: the scan splits
	rows[10] = make([]float32, dim)
	rows[20] = slices.Clone(rows[30]) // a duplicate: an exact tie
	queries := grid(30, dim, 2)
	queries = append(queries, rows[30])
	for name, s := range paths(t, rows) {
		for qi, q := range queries {
			for _, k := range []int{1, 10, 57} {
				want := reference(rows, q, k, nil)
				if got := s.Search(q, k, nil); !slices.Equal(got, want) {
					t.Fatalf("%s query %d k=%d:\n got %v\nwant %v", name, qi, k, got, want)
				}
			}
		}
	}
}

func TestExactPathsMatchReferenceOnClusteredData(t *testing.T) {
	rows := Clustered(3000, 96, 5)
	queries := ClusteredQueries(20, 3000, 96, 5)
	for name, s := range paths(t, rows) {
		for qi, q := range queries {
			want := reference(rows, q, 10, nil)
			got := s.Search(q, 10, nil)
			if len(got) != len(want) {
				t.Fatalf("%s query %d: %d hits, want %d", name, qi, len(got), len(want))
			}
			// float32 sums differ from float64 in the last bits: a hit
			// may only trade places with one whose score is that close.
			for i := range want {
				if d := math.Abs(got[i].Score - want[i].Score); d > 1e-5 {
					t.Fatalf("%s query %d rank %d: %v, want %v", name, qi, i, got[i], want[i])
				}
				if got[i].ChunkID != want[i].ChunkID && math.Abs(want[i].Score-reference(rows, q, 10, func(id int64) bool { return id == got[i].ChunkID })[0].Score) > 1e-5 {
					t.Fatalf("%s query %d rank %d: chunk %d, want %d", name, qi, i, got[i].ChunkID, want[i].ChunkID)
				}
			}
			if i := slices.IsSortedFunc(got, store.CompareScored); !i {
				t.Fatalf("%s query %d: hits not best first: %v", name, qi, got)
			}
		}
	}
}

func TestZeroAndMisshapenVectors(t *testing.T) {
	f := NewFlat(3, FlatOptions{})
	if f.Add(1, []float32{0, 0, 0}) || f.Add(2, []float32{1, 2}) {
		t.Error("Add stored a zero vector or one of the wrong length")
	}
	if !f.Add(3, []float32{0, 2, 0}) || f.Len() != 1 {
		t.Fatalf("Add refused a good vector: len %d", f.Len())
	}
	if got := f.Search([]float32{0, 0, 0}, 5, nil); got != nil {
		t.Errorf("zero query: %v, want no hits", got)
	}
	if got := f.Search([]float32{0, 1, 0}, 5, nil); len(got) != 1 || got[0].ChunkID != 3 || got[0].Score != 1 {
		t.Errorf("search: %v, want chunk 3 at similarity 1", got)
	}
}

func TestFiltersOnEveryPath(t *testing.T) {
	const n, dim = 3000, 48
	rows := Clustered(n, dim, 9)
	f := NewFlat(dim, FlatOptions{})
	for i, r := range rows {
		f.Add(int64(i+1), r)
	}
	h, err := BuildHNSW(context.Background(), NewCompact(f), HNSWOptions{Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	searchers := map[string]Searcher{"exact": f, "int8": NewCompact(f), "hnsw": h}
	filters := map[string]func(int64) bool{
		"odd":   func(id int64) bool { return id%2 == 1 },
		"three": func(id int64) bool { return id == 5 || id == 1500 || id == 2999 },
		"none":  func(int64) bool { return false },
	}
	q := ClusteredQueries(1, n, dim, 9)[0]
	for sn, s := range searchers {
		for fn, allow := range filters {
			want := reference(rows, q, 10, allow)
			got := s.Search(q, 10, allow)
			if len(got) != len(want) {
				t.Errorf("%s with filter %s: %d hits, want %d", sn, fn, len(got), len(want))
				continue
			}
			for _, g := range got {
				if !allow(g.ChunkID) {
					t.Errorf("%s with filter %s returned disallowed chunk %d", sn, fn, g.ChunkID)
				}
			}
			if fn == "three" && !sameIDs(got, want) {
				t.Errorf("%s with filter three: %v, want %v", sn, got, want)
			}
		}
	}
}

func sameIDs(a, b []store.Scored) bool {
	return slices.EqualFunc(a, b, func(x, y store.Scored) bool { return x.ChunkID == y.ChunkID })
}

// TestApproximateRecall asserts recall@10 against the exact scan on a
// seeded clustered set: a floor far above what a wrong index could reach
// (a random pick of 10 of 20,000 finds 0.05% of the true top 10).
func TestApproximateRecall(t *testing.T) {
	const n, dim = 20_000, 64
	f := NewFlat(dim, FlatOptions{})
	for i, r := range Clustered(n, dim, 11) {
		f.Add(int64(i+1), r)
	}
	qs := ClusteredQueries(100, n, dim, 11)
	h, err := BuildHNSW(context.Background(), NewCompact(f), HNSWOptions{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	x := NewCompact(f)
	x.Rerank = 20
	for _, tc := range []struct {
		name  string
		s     Searcher
		floor float64
	}{
		{"hnsw", h, 0.95},
		{"int8 re-ranking 20", x, 0.99},
	} {
		r := recall(f, tc.s, qs, 10)
		t.Logf("%s recall@10 = %.4f", tc.name, r)
		if r < tc.floor {
			t.Errorf("%s recall@10 = %.4f, want >= %.2f", tc.name, r, tc.floor)
		}
	}
	// Whatever the graph finds, it reports with the exact scan's scores.
	exact := map[int64]float64{}
	for _, s := range f.Search(qs[0], 50, nil) {
		exact[s.ChunkID] = s.Score
	}
	for _, s := range h.Search(qs[0], 10, nil) {
		if sc, ok := exact[s.ChunkID]; ok && sc != s.Score {
			t.Errorf("chunk %d: graph score %v, exact %v", s.ChunkID, s.Score, sc)
		}
	}
}

func TestBuildHNSWStopsWhenCancelled(t *testing.T) {
	f := NewFlat(16, FlatOptions{})
	for i, r := range Clustered(2000, 16, 1) {
		f.Add(int64(i+1), r)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := BuildHNSW(ctx, NewCompact(f), HNSWOptions{}); err == nil {
		t.Error("BuildHNSW with a cancelled context returned no error")
	}
}

// TestConcurrentSearches runs every path from many goroutines at once
// (run with -race) and checks each answer equals the serial one.
func TestConcurrentSearches(t *testing.T) {
	const n, dim = 5000, 64
	rows := Clustered(n, dim, 13)
	f := NewFlat(dim, FlatOptions{})
	for i, r := range rows {
		f.Add(int64(i+1), r)
	}
	h, err := BuildHNSW(context.Background(), NewCompact(f), HNSWOptions{Seed: 1, Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	qs := ClusteredQueries(16, n, dim, 13)
	allow := func(id int64) bool { return id%3 != 0 }
	for name, s := range map[string]Searcher{"exact": f, "int8": NewCompact(f), "hnsw": h} {
		want := make([][]store.Scored, len(qs))
		for i, q := range qs {
			want[i] = s.Search(q, 10, allow)
		}
		var wg sync.WaitGroup
		errs := make(chan string, 8*len(qs))
		for range 8 {
			wg.Go(func() {
				for i, q := range qs {
					if got := s.Search(q, 10, allow); !slices.Equal(got, want[i]) {
						errs <- name
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Errorf("%s: a concurrent search answered differently from the serial one", e)
		}
	}
}

// TestSearchListGrowsWithTheGraph: unless set, the search list length is
// 128 up to 100,000 nodes and longer past that, never shorter for a larger
// graph, and bounded; a length set is kept whatever the size, and setting
// 0 returns to the default.
func TestSearchListGrowsWithTheGraph(t *testing.T) {
	prev := 0
	for _, n := range []int{0, 1, 50_000, 100_000, 100_001, 400_000, 1_000_000, 10_000_000, 1 << 31} {
		ef := DefaultEfSearch(n)
		switch {
		case n <= 100_000 && ef != 128:
			t.Errorf("DefaultEfSearch(%d) = %d, want 128", n, ef)
		case ef < prev || ef > 1024:
			t.Errorf("DefaultEfSearch(%d) = %d after %d: want it growing and at most 1024", n, ef, prev)
		}
		prev = ef
	}
	if DefaultEfSearch(400_000) != 256 || DefaultEfSearch(1_000_000) <= 256 {
		t.Errorf("DefaultEfSearch: 400,000 -> %d, 1,000,000 -> %d; want 256 and more than 256", DefaultEfSearch(400_000), DefaultEfSearch(1_000_000))
	}
	f := NewFlat(8, FlatOptions{})
	for i, r := range Clustered(500, 8, 1) {
		f.Add(int64(i+1), r)
	}
	h, err := BuildHNSW(context.Background(), NewCompact(f), HNSWOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if h.EfSearch() != 128 {
		t.Errorf("a graph of 500 searches with %d, want 128", h.EfSearch())
	}
	h.SetEfSearch(40)
	if h.EfSearch() != 40 {
		t.Errorf("after SetEfSearch(40) the graph searches with %d", h.EfSearch())
	}
	h.live = 1_000_000 // as if it held a million: only the default follows the size
	if h.EfSearch() != 40 {
		t.Errorf("a set length changed with the size: %d", h.EfSearch())
	}
	h.SetEfSearch(0)
	if h.EfSearch() != DefaultEfSearch(1_000_000) {
		t.Errorf("after SetEfSearch(0) at a million nodes the graph searches with %d, want %d", h.EfSearch(), DefaultEfSearch(1_000_000))
	}
}

// TestBuildLinksTheUpperLayersFirst: a build links the top layer's nodes
// first, then each layer's down to 0, in row order within a layer, and
// the first node it takes (the entry point) is one of the top layer's.
func TestBuildLinksTheUpperLayersFirst(t *testing.T) {
	levels := []uint8{0, 2, 0, 1, 3, 1, 0, 3}
	want := []int32{4, 7, 1, 3, 5, 0, 2, 6}
	if got := insertionOrder(levels); !slices.Equal(got, want) {
		t.Errorf("insertionOrder(%v) = %v, want %v", levels, got, want)
	}
	f := NewFlat(16, FlatOptions{})
	for i, r := range Clustered(3000, 16, 4) {
		f.Add(int64(i+1), r)
	}
	h, err := BuildHNSW(context.Background(), NewCompact(f), HNSWOptions{Seed: 9, M: 4})
	if err != nil {
		t.Fatal(err)
	}
	top := slices.Max(h.levels)
	if h.top != int(top) || h.levels[h.entry] != top {
		t.Errorf("entry point %d on layer %d (top %d), want a node of the highest layer %d", h.entry, h.levels[h.entry], h.top, top)
	}
}

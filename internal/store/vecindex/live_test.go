package vecindex

import (
	"bytes"
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// model is what a Live index should hold: chunk ID -> vector.
type model map[int64][]float32

// rowsOf returns the model's vectors as reference's rows (row i is chunk
// i+1; absent chunks are zero rows, which are never hits).
func (m model) rowsOf(dim int) [][]float32 {
	hi := int64(0)
	for id := range m {
		hi = max(hi, id)
	}
	rows := make([][]float32, hi)
	for i := range rows {
		rows[i] = make([]float32, dim)
	}
	for id, v := range m {
		rows[id-1] = v
	}
	return rows
}

// TestLiveScanMatchesReferenceThroughChanges adds, replaces and deletes
// rows at random and checks after each round that the scans (int8 with
// every row re-ranked, and float) answer exactly as a scan of what the
// index should hold: no deleted row comes back, replaced rows answer with
// their new vector, and reused rows carry their new ID.
func TestLiveScanMatchesReferenceThroughChanges(t *testing.T) {
	const dim = 64
	for _, exact := range []bool{false, true} {
		l := NewLive(dim, 0, LiveOptions{Exact: exact})
		l.cx.Rerank = 1 << 20 // re-rank every row: the int8 path must be exact too
		want := model{}
		rng := rand.New(rand.NewPCG(1, 2))
		pool := grid(4000, dim, 3)
		queries := grid(12, dim, 4)
		for round := range 6 {
			for range 700 {
				id := int64(rng.IntN(1500) + 1)
				if rng.IntN(3) == 0 {
					l.Delete(id)
					delete(want, id)
					continue
				}
				v := pool[rng.IntN(len(pool))]
				if !l.Add(id, v) {
					t.Fatalf("Add(%d) refused a good vector", id)
				}
				want[id] = v
			}
			if l.Len() != len(want) {
				t.Fatalf("round %d: Len %d, want %d", round, l.Len(), len(want))
			}
			rows := want.rowsOf(dim)
			for qi, q := range queries {
				ref := reference(rows, q, 10, nil)
				if got := l.Search(q, 10, nil); !slices.Equal(got, ref) {
					t.Fatalf("exact=%v round %d query %d:\n got %v\nwant %v", exact, round, qi, got, ref)
				}
			}
		}
		if s := l.Stats(); s.Rows > 1500 {
			t.Errorf("exact=%v: %d rows in memory for at most 1500 IDs: deleted rows are not reused", exact, s.Rows)
		}
		l.Close()
	}
}

// recallOf is the share of the exact top k (over the model) that l finds.
func recallOf(t *testing.T, l *Live, m model, dim int, qs [][]float32, k int) float64 {
	t.Helper()
	f := NewFlat(dim, FlatOptions{})
	ids := make([]int64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		f.Add(id, m[id])
	}
	hit, all := 0, 0
	for _, q := range qs {
		in := map[int64]bool{}
		for _, h := range f.Search(q, k, nil) {
			in[h.ChunkID] = true
		}
		for _, h := range l.Search(q, k, nil) {
			if _, ok := m[h.ChunkID]; !ok {
				t.Fatalf("search returned chunk %d, which is not in the index", h.ChunkID)
			}
			if in[h.ChunkID] {
				hit++
			}
		}
		all += len(in)
	}
	return float64(hit) / float64(all)
}

// TestLiveGraphChangesWithoutRebuild builds a graph once the index is
// large enough, then adds, deletes and re-adds rows: each change is
// linked in or made a tombstone, tombstones are repaired and their rows
// reused, and recall stays high throughout (a rebuild would show as a new
// graph: the test checks the graph is the same one).
func TestLiveGraphChangesWithoutRebuild(t *testing.T) {
	const n, dim = 6000, 48
	ctx := context.Background()
	rows := Clustered(2*n, dim, 21)
	qs := ClusteredQueries(60, 2*n, dim, 21)
	l := NewLive(dim, 0, LiveOptions{Approx: n / 2, Graph: HNSWOptions{Seed: 1, Workers: 2}})
	defer l.Close()
	m := model{}
	for i := range n {
		l.Add(int64(i+1), rows[i])
		m[int64(i+1)] = rows[i]
	}
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	s := l.Stats()
	if !s.Graph || s.Queued != 0 {
		t.Fatalf("after %d rows and a flush: %+v, want a graph with nothing queued", n, s)
	}
	g := l.g
	if r := recallOf(t, l, m, dim, qs, 10); r < 0.95 {
		t.Errorf("recall@10 after the build = %.3f, want >= 0.95", r)
	}
	// Rows added now are found before they are linked (scored beside the
	// graph), and after.
	for i := n; i < n+500; i++ {
		l.Add(int64(i+1), rows[i])
		m[int64(i+1)] = rows[i]
	}
	if s := l.Stats(); s.Queued == 0 {
		t.Log("rows were linked before the check (the background goroutine is quick)")
	}
	for _, q := range rows[n : n+20] {
		got := l.Search(q, 1, nil)
		if len(got) != 1 || got[0].Score < 0.999 {
			t.Fatalf("a just-added row is not its own nearest neighbour: %v", got)
		}
	}
	// Delete a fifth, and replace some rows with others' vectors.
	rng := rand.New(rand.NewPCG(5, 6))
	for _, i := range rng.Perm(n)[:n/5] {
		l.Delete(int64(i + 1))
		delete(m, int64(i+1))
	}
	for i := range 300 {
		id := int64(n + 500 + i + 1)
		l.Add(id, rows[n+500+i])
		m[id] = rows[n+500+i]
	}
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	s = l.Stats()
	if l.g != g {
		t.Fatal("the graph was rebuilt; it should have changed in place")
	}
	if s.Dead != 0 || s.Queued != 0 {
		t.Errorf("after the flush: %+v, want no tombstones (repaired) and nothing queued", s)
	}
	if s.Rows > n+500+300 {
		t.Errorf("%d rows in memory: freed rows were not reused", s.Rows)
	}
	if r := recallOf(t, l, m, dim, qs, 10); r < 0.95 {
		t.Errorf("recall@10 after changes and repair = %.3f, want >= 0.95", r)
	}
	// A repaired graph is still connected: every live node is reachable
	// from the entry point on layer 0.
	seen := map[int32]bool{g.entry: true}
	stack := []int32{g.entry}
	for len(stack) > 0 {
		nd := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, nb := range g.neighbours(nd, 0) {
			if g.state[nb] == unlinked {
				t.Fatalf("node %d links to freed node %d", nd, nb)
			}
			if !seen[nb] {
				seen[nb] = true
				stack = append(stack, nb)
			}
		}
	}
	reach := 0
	for nd := range g.state {
		if g.state[nd] == live && seen[int32(nd)] {
			reach++
		}
	}
	if reach < g.live*99/100 {
		t.Errorf("%d of %d live nodes reachable from the entry point", reach, g.live)
	}
}

// TestLiveSearchesDuringChanges searches from several goroutines while
// rows are added and deleted and the graph is built and kept current (run
// with -race): every answer holds only chunks present at some point, best
// first.
func TestLiveSearchesDuringChanges(t *testing.T) {
	const n, dim = 3000, 32
	rows := Clustered(n, dim, 31)
	l := NewLive(dim, 0, LiveOptions{Approx: 500, Graph: HNSWOptions{Seed: 3, Workers: 2}, RepairAt: 0.02})
	defer l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				got := l.Search(rows[(i*7+w)%n], 10, func(id int64) bool { return id%5 != 0 })
				if !slices.IsSortedFunc(got, store.CompareScored) {
					errs <- "hits not best first"
					return
				}
				for _, h := range got {
					if h.ChunkID%5 == 0 || h.ChunkID < 1 || h.ChunkID > n {
						errs <- "a hit the filter or the index does not allow"
						return
					}
				}
			}
		})
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range n {
		l.Add(int64(i+1), rows[i])
		if i > 1000 && rng.IntN(4) == 0 {
			l.Delete(int64(rng.IntN(i) + 1))
		}
	}
	if err := l.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	cancel()
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if s := l.Stats(); !s.Graph {
		t.Errorf("no graph after %d rows (approx 500): %+v", n, s)
	}
}

// TestLiveSaveRestore saves a graph, restores it with the vectors of the
// live rows less some deleted since and plus some new, and checks the
// restored index answers as a Live index of those vectors should, with
// the saved links (no rebuild) and the caller's bytes intact.
func TestLiveSaveRestore(t *testing.T) {
	const n, dim = 4000, 32
	ctx := context.Background()
	rows := Clustered(n+200, dim, 41)
	qs := ClusteredQueries(40, n+200, dim, 41)
	opt := LiveOptions{Approx: 1000, Graph: HNSWOptions{Seed: 9}}
	l := NewLive(dim, 0, opt)
	m := model{}
	for i := range n {
		l.Add(int64(i+1), rows[i])
		m[int64(i+1)] = rows[i]
	}
	for i := 0; i < n; i += 50 {
		l.Delete(int64(i + 1)) // a few tombstones, saved as such
		delete(m, int64(i+1))
	}
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := l.Save(&buf, []byte("state 42")); err != nil {
		t.Fatal(err)
	}
	saved0 := l.g
	l.Close()
	saved := buf.Bytes()

	rs, extra, err := Restore(bytes.NewReader(saved), dim, opt)
	if err != nil {
		t.Fatal(err)
	}
	if string(extra) != "state 42" {
		t.Errorf("extra = %q, want %q", extra, "state 42")
	}
	// Since the save: chunks 2, 3 deleted; 200 new chunks.
	delete(m, 2)
	delete(m, 3)
	var later []int64
	for id := range m {
		if !rs.Fill(id, m[id]) {
			later = append(later, id)
		}
	}
	if len(later) != 0 {
		t.Fatalf("Fill refused %d vectors the saved graph holds", len(later))
	}
	if rs.Fill(1, rows[0]) {
		t.Error("Fill accepted chunk 1, deleted before the save")
	}
	rg := rs.l.g
	for nd := range saved0.levels {
		if saved0.state[nd] != rg.state[nd] || saved0.levels[nd] != rg.levels[nd] {
			t.Fatalf("node %d: restored state %d level %d, saved %d %d", nd, rg.state[nd], rg.levels[nd], saved0.state[nd], saved0.levels[nd])
		}
		if saved0.state[nd] == unlinked {
			continue
		}
		for ly := 0; ly <= int(saved0.levels[nd]); ly++ {
			if !slices.Equal(saved0.neighbours(int32(nd), ly), rg.neighbours(int32(nd), ly)) {
				t.Fatalf("node %d layer %d: restored links differ from the saved ones", nd, ly)
			}
		}
	}
	r := rs.Live()
	defer r.Close()
	for i := n; i < n+200; i++ {
		r.Add(int64(i+1), rows[i])
		m[int64(i+1)] = rows[i]
	}
	for _, q := range qs {
		for _, h := range r.Search(q, 10, nil) {
			if h.ChunkID == 2 || h.ChunkID == 3 {
				t.Fatalf("restored index returned chunk %d, deleted since the save", h.ChunkID)
			}
		}
	}
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if rec := recallOf(t, r, m, dim, qs, 10); rec < 0.95 {
		t.Errorf("recall@10 of the restored index = %.3f, want >= 0.95", rec)
	}

	// Damaged or foreign files are refused, never half-read.
	for name, b := range map[string][]byte{
		"cut short":      saved[:len(saved)/2],
		"one byte off":   flip(saved, len(saved)/3),
		"empty":          nil,
		"another format": []byte("SQLite format 3\x00 and more bytes"),
	} {
		if _, _, err := Restore(bytes.NewReader(b), dim, opt); err == nil {
			t.Errorf("Restore of a %s graph: no error", name)
		}
	}
	if _, _, err := Restore(bytes.NewReader(saved), dim+1, opt); err == nil {
		t.Error("Restore with another dimension: no error")
	}
}

func flip(b []byte, i int) []byte {
	c := slices.Clone(b)
	c[i] ^= 0x40
	return c
}

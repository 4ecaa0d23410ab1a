package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/storetest"
	"github.com/sagasu-dev/sagasu/internal/store/vecindex"
)

func TestConformanceWithVectorGraph(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := openDriver(context.Background(), filepath.Join(t.TempDir(), "sagasu.db"), Options{Create: true, CacheVectors: true, ApproxVectors: 1})
		if err != nil {
			t.Fatal(err)
		}
		return store.New(s)
	})
}

// TestVectorGraphAnswersLikeExact indexes clustered vectors, lets the
// background graph build finish, and checks that the graph's answers find
// the exact top 10 (recall well above chance) and honour a selective
// filter.
func TestVectorGraphAnswersLikeExact(t *testing.T) {
	ctx := context.Background()
	const n, dim = 1500, 32
	path := filepath.Join(t.TempDir(), "v.db")
	s, err := openDriver(ctx, path, Options{Create: true, CacheVectors: true, ApproxVectors: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.InitVectors(ctx, dim); err != nil {
		t.Fatal(err)
	}
	vs := vecindex.Clustered(n, dim, 3)
	var batch []store.SourceData
	for i, v := range vs {
		sd := storetest.Source(fmt.Sprintf("d%04d.md", i), "file", "", fmt.Sprintf("text %d", i))
		sd.Vectors = [][]float32{v}
		batch = append(batch, sd)
	}
	if err := s.Replace(ctx, batch); err != nil {
		t.Fatal(err)
	}
	exact, err := openDriver(ctx, path, Options{CacheVectors: true}) // same index, exact scan
	if err != nil {
		t.Fatal(err)
	}
	defer exact.Close()
	qs := vecindex.ClusteredQueries(50, n, dim, 3)
	if _, err := s.VectorSearch(ctx, qs[0], 10, store.Filter{}); err != nil {
		t.Fatal(err)
	}
	if err := s.vcache.live.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if !s.vcache.live.Stats().Graph {
		t.Fatal("no graph was built for 1500 vectors with ApproxVectors 1000")
	}
	hit, all := 0, 0
	for _, q := range qs {
		want, err := exact.VectorSearch(ctx, q, 10, store.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.VectorSearch(ctx, q, 10, store.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		in := map[int64]float64{}
		for _, h := range want {
			in[h.ChunkID] = h.Score
		}
		for _, h := range got {
			if sc, ok := in[h.ChunkID]; ok {
				hit++
				if sc != h.Score {
					t.Errorf("chunk %d: graph score %v, exact %v", h.ChunkID, h.Score, sc)
				}
			}
		}
		all += len(want)
	}
	if r := float64(hit) / float64(all); r < 0.9 {
		t.Errorf("graph recall@10 = %.3f, want >= 0.9", r)
	}
	// Two sources out of 1500: the graph's candidates hold too few, so the
	// search falls back to the exact scan and still returns both.
	f := store.Filter{SourceIDs: []string{doc.SourceID("d0007.md"), doc.SourceID("d1234.md")}}
	got, err := s.VectorSearch(ctx, qs[1], 10, f)
	if err != nil || len(got) != 2 {
		t.Errorf("selective filter: %v, %v; want the 2 allowed chunks", got, err)
	}
}

// vecSources makes one single-chunk source per vector, named by prefix
// and position.
func vecSources(prefix string, vs [][]float32) []store.SourceData {
	var batch []store.SourceData
	for i, v := range vs {
		sd := storetest.Source(fmt.Sprintf("%s%05d.md", prefix, i), "file", "", fmt.Sprintf("text %s %d", prefix, i))
		sd.Vectors = [][]float32{v}
		batch = append(batch, sd)
	}
	return batch
}

// TestVectorCacheFollowsOtherWriters keeps one long-lived store open while
// another handle on the same file adds, replaces and deletes sources: the
// long-lived store answers every query as a store that loads the vectors
// afresh does, and it does so by applying the changes to the index it has
// (the same index before and after) until vectors are replaced in place
// (SetVectors), when it loads them again.
func TestVectorCacheFollowsOtherWriters(t *testing.T) {
	ctx := context.Background()
	const dim = 32
	path := filepath.Join(t.TempDir(), "v.db")
	w, err := Open(ctx, path, Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.InitVectors(ctx, dim); err != nil {
		t.Fatal(err)
	}
	vs := vecindex.Clustered(900, dim, 4)
	if err := w.Replace(ctx, vecSources("a", vs[:600])); err != nil {
		t.Fatal(err)
	}
	long, err := openDriver(ctx, path, Options{CacheVectors: true})
	if err != nil {
		t.Fatal(err)
	}
	defer long.Close()
	qs := vecindex.ClusteredQueries(8, 900, dim, 4)
	check := func(step string) {
		t.Helper()
		fresh, err := Open(ctx, path, Options{CacheVectors: true})
		if err != nil {
			t.Fatal(err)
		}
		defer fresh.Close()
		for _, q := range qs {
			want, err := fresh.VectorSearch(ctx, q, 10, store.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := long.VectorSearch(ctx, q, 10, store.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%s: the long-lived store answered\n%v\na fresh one\n%v", step, got, want)
			}
		}
	}
	check("first load")
	first := long.vcache.live
	// Added: a new batch; replaced: some sources rewritten with others'
	// vectors (new chunk IDs); deleted: some sources.
	if err := w.Replace(ctx, vecSources("b", vs[600:900])); err != nil {
		t.Fatal(err)
	}
	check("after an added batch")
	again := vecSources("a", vs[300:400])
	for i := range again {
		again[i].Source.ContentHash += "x"
	}
	if err := w.Replace(ctx, again); err != nil {
		t.Fatal(err)
	}
	var gone []string
	for i := 0; i < 300; i += 3 {
		gone = append(gone, doc.SourceID(fmt.Sprintf("b%05d.md", i)))
	}
	if n, err := w.Delete(ctx, gone); err != nil || n != len(gone) {
		t.Fatalf("delete: %d, %v", n, err)
	}
	check("after replacements and deletions")
	if long.vcache.live != first {
		t.Fatal("the long-lived store loaded the vectors again instead of applying the changes")
	}
	// Vectors replaced in place: the epoch changes and the cache reloads.
	ids, err := chunkIDs(ctx, w, doc.SourceID("a00010.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SetVectors(ctx, map[int64][]float32{ids[0]: qs[0]}); err != nil {
		t.Fatal(err)
	}
	check("after SetVectors")
	if long.vcache.live == first {
		t.Fatal("vectors replaced in place were not loaded again")
	}
	if got, _ := long.VectorSearch(ctx, qs[0], 1, store.Filter{}); len(got) != 1 || got[0].ChunkID != ids[0] {
		t.Errorf("the replaced vector is not found as its own nearest neighbour: %v", got)
	}
}

func chunkIDs(ctx context.Context, s store.Store, sourceID string) ([]int64, error) {
	cs, err := s.Chunks(ctx, sourceID)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, c := range cs {
		ids = append(ids, c.ID)
	}
	return ids, nil
}

// TestVectorCacheReloadsWhenTheLogIsTrimmed shortens the deletion log so
// that a long-lived store falls behind it: it must load the vectors again
// rather than miss deletions.
func TestVectorCacheReloadsWhenTheLogIsTrimmed(t *testing.T) {
	ctx := context.Background()
	const dim = 16
	path := filepath.Join(t.TempDir(), "v.db")
	w, err := openDriver(ctx, path, Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.goneKept = 10
	if err := w.InitVectors(ctx, dim); err != nil {
		t.Fatal(err)
	}
	vs := vecindex.Clustered(200, dim, 6)
	if err := w.Replace(ctx, vecSources("c", vs)); err != nil {
		t.Fatal(err)
	}
	long, err := openDriver(ctx, path, Options{CacheVectors: true})
	if err != nil {
		t.Fatal(err)
	}
	defer long.Close()
	if _, err := long.VectorSearch(ctx, vs[0], 5, store.Filter{}); err != nil {
		t.Fatal(err)
	}
	first := long.vcache.live
	var gone []string
	for i := range 40 {
		gone = append(gone, doc.SourceID(fmt.Sprintf("c%05d.md", i)))
	}
	for _, id := range gone { // one deletion at a time: the log trims as it goes
		if _, err := w.Delete(ctx, []string{id}); err != nil {
			t.Fatal(err)
		}
	}
	var kept int
	if err := w.db.QueryRow(`SELECT COUNT(*) FROM vector_gone`).Scan(&kept); err != nil || kept > 20 {
		t.Fatalf("the deletion log holds %d entries (%v), want it trimmed to about 10", kept, err)
	}
	got, err := long.VectorSearch(ctx, vs[0], 5, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if long.vcache.live == first {
		t.Fatal("the cache behind a trimmed log was not loaded again")
	}
	for _, h := range got {
		if h.ChunkID <= 40 {
			t.Errorf("deleted chunk %d returned", h.ChunkID)
		}
	}
}

// TestVectorGraphSavedAndRestored closes a store whose graph was built and
// opens the index again: the graph is restored from the file beside the
// index (not built: the build is cancelled if it starts), with the rows
// added and deleted in between applied, and a damaged file is rebuilt
// instead of used.
func TestVectorGraphSavedAndRestored(t *testing.T) {
	ctx := context.Background()
	const dim = 32
	path := filepath.Join(t.TempDir(), "v.db")
	s, err := openDriver(ctx, path, Options{Create: true, CacheVectors: true, ApproxVectors: 500})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.InitVectors(ctx, dim); err != nil {
		t.Fatal(err)
	}
	vs := vecindex.Clustered(1300, dim, 8)
	if err := s.Replace(ctx, vecSources("g", vs[:1200])); err != nil {
		t.Fatal(err)
	}
	qs := vecindex.ClusteredQueries(20, 1300, dim, 8)
	if _, err := s.VectorSearch(ctx, qs[0], 10, store.Filter{}); err != nil {
		t.Fatal(err)
	}
	if err := s.vcache.live.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".hnsw"); err != nil {
		t.Fatalf("no graph saved beside the index: %v", err)
	}
	// Another process writes meanwhile.
	w, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Replace(ctx, vecSources("h", vs[1200:])); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Delete(ctx, []string{doc.SourceID("g00000.md"), doc.SourceID("g00001.md")}); err != nil {
		t.Fatal(err)
	}
	w.Close()

	r, err := openDriver(ctx, path, Options{CacheVectors: true, ApproxVectors: 500})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.VectorSearch(ctx, vs[0], 3, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	st := r.vcache.live.Stats()
	if !st.Graph || !r.vcache.gen.restored {
		t.Fatalf("after reopening: %+v, restored %v; want the saved graph", st, r.vcache.gen.restored)
	}
	if st.Live != 1298 {
		t.Errorf("restored index holds %d vectors, want 1298", st.Live)
	}
	for _, h := range got {
		if h.ChunkID == 1 || h.ChunkID == 2 {
			t.Errorf("deleted chunk %d returned after the restore", h.ChunkID)
		}
	}
	if got, _ := r.VectorSearch(ctx, vs[1250], 1, store.Filter{}); len(got) != 1 || got[0].Score < 0.999 {
		t.Errorf("a vector added while the store was closed is not found: %v", got)
	}
	r.Close()

	// A damaged file: loaded without it, and no error.
	raw, err := os.ReadFile(path + ".hnsw")
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 0xff
	if err := os.WriteFile(path+".hnsw", raw, 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := openDriver(ctx, path, Options{CacheVectors: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if got, err := d.VectorSearch(ctx, vs[5], 1, store.Filter{}); err != nil || len(got) != 1 || got[0].Score < 0.999 {
		t.Errorf("with a damaged graph file: %v, %v; want the exact answer", got, err)
	}
	if d.vcache.gen.restored {
		t.Error("a damaged graph file was restored")
	}
}

// TestDirectVectorReadMatchesVirtualTable reads the vectors from
// sqlite-vec's storage tables and through its virtual table, after
// deletions (cleared validity bits) and from a rowid on: both must give
// the same vectors. If a new sqlite-vec stores them otherwise, the direct
// read must say so (errLayout) rather than read wrong values.
func TestDirectVectorReadMatchesVirtualTable(t *testing.T) {
	ctx := context.Background()
	const dim = 24
	s, err := openDriver(ctx, filepath.Join(t.TempDir(), "v.db"), Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.InitVectors(ctx, dim); err != nil {
		t.Fatal(err)
	}
	vs := vecindex.Clustered(2500, dim, 10) // more than one vec0 chunk of 1024
	if err := s.Replace(ctx, vecSources("d", vs)); err != nil {
		t.Fatal(err)
	}
	var gone []string
	for i := 0; i < 2500; i += 7 {
		gone = append(gone, doc.SourceID(fmt.Sprintf("d%05d.md", i)))
	}
	if _, err := s.Delete(ctx, gone); err != nil {
		t.Fatal(err)
	}
	for _, after := range []int64{0, 1000, 2400, 5000} {
		read := func(each func(context.Context, querier, int64, func(int64, []float32) error) error) map[int64]string {
			out := map[int64]string{}
			if err := each(ctx, s.db, after, func(id int64, v []float32) error {
				out[id] = fmt.Sprint(v)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			return out
		}
		direct, virtual := read(eachVectorDirect), read(eachVectorVirtual)
		if len(direct) != len(virtual) {
			t.Fatalf("after %d: %d vectors read directly, %d through the virtual table", after, len(direct), len(virtual))
		}
		for id, v := range virtual {
			if direct[id] != v {
				t.Fatalf("after %d: vector %d differs", after, id)
			}
		}
		if after == 0 && len(direct) != 2500-len(gone) {
			t.Errorf("%d vectors, want %d", len(direct), 2500-len(gone))
		}
	}
}

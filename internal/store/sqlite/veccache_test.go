package sqlite

import (
	"context"
	"fmt"
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
	s.vcache.builds.Wait()
	if s.vcache.ann == nil {
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

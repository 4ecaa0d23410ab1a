package search_test

import (
	"context"
	"math"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/storetest"
)

// TestHybridFusesStoreRankings checks that hybrid search returns exactly the
// reciprocal rank fusion of the store's keyword and vector rankings.
func TestHybridFusesStoreRankings(t *testing.T) {
	ctx := context.Background()
	s, e := embedded(t)
	emb := e.Embedder()
	if e.DefaultMode() != search.ModeHybrid {
		t.Errorf("default mode with an embedder = %q, want hybrid", e.DefaultMode())
	}
	q := "cat mice night"
	kw, _ := s.KeywordSearch(ctx, storetest.Terms(q), 100, store.Filter{})
	qv, err := emb.EmbedQuery(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	sem, _ := s.VectorSearch(ctx, qv, 100, store.Filter{})
	want := search.DefaultFusion().Fuse(kw, sem)
	// Unvaried (PerSource -1): the fusion itself.
	resp, err := e.Search(ctx, search.Request{Query: q, K: 5, PerSource: -1})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Mode != search.ModeHybrid || len(resp.Hits) != 5 {
		t.Fatalf("hybrid search: mode %q, %d hits", resp.Mode, len(resp.Hits))
	}
	for i, h := range resp.Hits {
		if h.Chunk.ID != want[i].ChunkID || math.Abs(h.Score-want[i].Score) > 1e-12 {
			t.Errorf("hit %d = chunk %d score %.6f, want reciprocal rank fusion's chunk %d score %.6f",
				i, h.Chunk.ID, h.Score, want[i].ChunkID, want[i].Score)
		}
	}
	// RRF: a chunk first in both lists scores 2/(k+1).
	if k := search.DefaultFusion().K; kw[0].ChunkID == sem[0].ChunkID && math.Abs(resp.Hits[0].Score-2.0/(k+1)) > 1e-12 {
		t.Errorf("top fused score %.6f, want 2/%v", resp.Hits[0].Score, k+1)
	}
	sres, err := e.Search(ctx, search.Request{Query: q, K: 3, Mode: search.ModeSemantic})
	if err != nil || len(sres.Hits) != 3 || sres.Hits[0].Chunk.ID != sem[0].ChunkID {
		t.Errorf("semantic mode: %+v, %v", sres.Hits, err)
	}
	div, err := e.Search(ctx, search.Request{Query: q, K: 3, MMR: 0.5})
	if err != nil || len(div.Hits) != 3 {
		t.Errorf("MMR search: %v, %v", div.Hits, err)
	}
	seen := map[int64]bool{}
	for _, h := range div.Hits {
		if seen[h.Chunk.ID] {
			t.Errorf("MMR returned chunk %d twice", h.Chunk.ID)
		}
		seen[h.Chunk.ID] = true
	}
}

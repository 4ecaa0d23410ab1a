package qdrant

import (
	"context"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/eval"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// TestSciFactKeyword indexes BEIR SciFact (testenv.SciFact: SAGASU_SCIFACT
// names its folder) into Qdrant and into SQLite the same way, and compares
// keyword retrieval: exact ranking must score as SQLite does; Qdrant's own
// scores (keyword=qdrant) are measured beside them. batchBytes small makes
// many writes, so the average length moves after early chunks were
// weighted. On the in-process model, whose searches scan every point, it
// takes a slice of the dataset (modelSlice): the whole of it ran for 26
// minutes there without finishing (exact mode answered in 1.9 s a query);
// the driver's logic is the same at either size.
func TestSciFactKeyword(t *testing.T) {
	dir := testenv.SciFact(t)
	testServer(t)
	ctx := context.Background()
	ds, err := eval.LoadBEIR(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	if onModel() {
		ds = modelSlice(ds, 40, 800)
		t.Logf("on the model: %d documents, %d queries", len(ds.Docs), len(ds.Queries))
	}
	run := func(s store.Store) eval.Result {
		t.Helper()
		res, err := eval.Run(ctx, search.New(s), ds, search.ModeKeyword)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	lite, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "scifact.db"), sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	if _, err := eval.IndexDataset(ctx, index.New(lite, index.Options{}), ds); err != nil {
		t.Fatal(err)
	}
	base := run(lite)
	t.Logf("SQLite              nDCG@10 %.4f recall@100 %.4f p50 %.2f ms p99 %.2f ms", base.NDCGAt10, base.RecallAt100, base.Latency.P50, base.Latency.P99)
	for _, batch := range []int{0, 64 << 10} {
		dsn := freshDSN(t, "")
		q := openStore(t, dsn)
		if _, err := eval.IndexDataset(ctx, index.New(store.New(q), index.Options{BatchBytes: batch}), ds); err != nil {
			t.Fatal(err)
		}
		exact := run(store.New(q))
		raw := openStore(t, dsn+"?keyword=qdrant")
		qd := run(store.New(raw))
		t.Logf("Qdrant batch %6d exact  nDCG@10 %.4f recall@100 %.4f p50 %.2f ms p99 %.2f ms", batch, exact.NDCGAt10, exact.RecallAt100, exact.Latency.P50, exact.Latency.P99)
		t.Logf("Qdrant batch %6d qdrant nDCG@10 %.4f recall@100 %.4f p50 %.2f ms p99 %.2f ms", batch, qd.NDCGAt10, qd.RecallAt100, qd.Latency.P50, qd.Latency.P99)
		if math.Abs(exact.NDCGAt10-base.NDCGAt10) > 1e-9 || math.Abs(exact.RecallAt100-base.RecallAt100) > 1e-9 {
			t.Errorf("exact keyword ranking on Qdrant: nDCG@10 %.6f recall@100 %.6f; SQLite %.6f %.6f", exact.NDCGAt10, exact.RecallAt100, base.NDCGAt10, base.RecallAt100)
		}
		raw.Close()
		q.Close()
	}
}

// modelSlice keeps the first queries (by ID) with their judged documents
// and the first docs other documents, as distractors.
func modelSlice(ds *eval.Dataset, queries, docs int) *eval.Dataset {
	ids := slices.Sorted(maps.Keys(ds.Qrels))
	out := &eval.Dataset{Dir: ds.Dir, Queries: map[string]string{}, Qrels: map[string]map[string]int{}}
	keep := map[string]bool{}
	for _, id := range ids {
		if _, ok := ds.Queries[id]; !ok || len(out.Queries) == queries {
			continue
		}
		out.Queries[id], out.Qrels[id] = ds.Queries[id], ds.Qrels[id]
		for d := range ds.Qrels[id] {
			keep[d] = true
		}
	}
	for i, d := range ds.Docs {
		if keep[d.URI] || i < docs {
			out.Docs = append(out.Docs, d)
		}
	}
	return out
}

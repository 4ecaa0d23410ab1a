package eval

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/store/vecindex"
)

func TestMixRealHoldsOutQueries(t *testing.T) {
	real := vecindex.Clustered(500, 8, 1)
	rows, queries := mixReal(real, 2000, 100, 1)
	if len(rows) != 2000 || len(queries) != 50 {
		t.Fatalf("mixReal gave %d rows and %d queries, want 2000 and 50 (a tenth held out)", len(rows), len(queries))
	}
	for _, q := range queries {
		for _, r := range rows {
			if slices.Equal(q, r) {
				t.Fatalf("query %v is also a row: not held out", q)
			}
		}
	}
}

func TestVectorBenchRecall(t *testing.T) {
	res, err := VectorBench(context.Background(), VectorBenchOptions{Vectors: 4000, Dim: 32, Queries: 30, K: 10, Seed: 2, Changes: 300})
	if err != nil {
		t.Fatal(err)
	}
	if res.Exact.Recall != 1 || res.Portable.Recall != 1 {
		t.Errorf("exact paths recall %v and %v, want 1", res.Exact.Recall, res.Portable.Recall)
	}
	if res.Int8.Recall < 0.99 || res.Approx.Recall < 0.9 {
		t.Errorf("int8 recall %v (want >= 0.99), HNSW recall %v (want >= 0.9)", res.Int8.Recall, res.Approx.Recall)
	}
	if res.Exact.MB <= 0 || res.Approx.MB <= 0 || res.BuildSeconds <= 0 {
		t.Errorf("memory or build time missing: %+v", res)
	}
	c := res.Changes
	if c == nil || c.Added != 300 || c.Deleted != 300 || c.LinkMs <= 0 {
		t.Fatalf("changes section = %+v, want 300 added (with a link time) and 300 deleted", c)
	}
	if c.After.Recall < 0.9 {
		t.Errorf("HNSW recall after changes in place = %v, want >= 0.9", c.After.Recall)
	}
}

// TestVectorBenchBuildLimit: a graph build past its limit leaves the
// scans' numbers and marks the graph as not built, instead of failing the
// run (a limit of 1 ns has passed before the build starts).
func TestVectorBenchBuildLimit(t *testing.T) {
	res, err := VectorBench(context.Background(), VectorBenchOptions{Vectors: 2000, Dim: 16, Queries: 10, K: 10, Seed: 3, Changes: 100, BuildLimit: time.Nanosecond})
	if err != nil {
		t.Fatalf("a build past its limit failed the run: %v", err)
	}
	if !res.GraphStopped || res.Approx.MB != 0 || res.Changes != nil {
		t.Errorf("graph section = stopped %v, %+v, changes %+v: want stopped and empty", res.GraphStopped, res.Approx, res.Changes)
	}
	if res.Exact.Recall != 1 || res.Int8.Recall < 0.99 || res.Int8.MB <= 0 || res.PeakRSSMB <= 0 {
		t.Errorf("scans not reported: exact %+v int8 %+v peak %v", res.Exact, res.Int8, res.PeakRSSMB)
	}
}

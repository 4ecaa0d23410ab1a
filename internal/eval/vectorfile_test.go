package eval

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/store/vecindex"
)

// TestVectorFileRoundTripAndBench writes rows and held-out queries, reads
// them back as written, refuses a file cut short or of another kind, and
// benches the file's rows (extended past their number) against its own
// queries, none of which is a row.
func TestVectorFileRoundTripAndBench(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "v.vec")
	rows := vecindex.Clustered(600, 16, 4)
	queries := vecindex.ClusteredQueries(12, 600, 16, 4)
	if err := WriteVectorFile(path, rows, queries); err != nil {
		t.Fatal(err)
	}
	if !IsVectorFile(path) {
		t.Fatal("IsVectorFile = false for a file WriteVectorFile wrote")
	}
	gotRows, gotQueries, err := ReadVectorFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(gotRows, rows, slices.Equal) || !slices.EqualFunc(gotQueries, queries, slices.Equal) {
		t.Fatal("vectors read back differ from those written")
	}

	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(dir, "short.vec")
	if err := os.WriteFile(short, raw[:len(raw)-5], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadVectorFile(short); err == nil || !strings.Contains(err.Error(), short) {
		t.Errorf("a file cut short: err %v, want an error naming it", err)
	}
	other := filepath.Join(dir, "index.db")
	if err := os.WriteFile(other, []byte("SQLite format 3\x00 and the rest of a database"), 0o600); err != nil {
		t.Fatal(err)
	}
	if IsVectorFile(other) {
		t.Error("IsVectorFile = true for an SQLite file")
	}
	if err := WriteVectorFile(filepath.Join(dir, "bad.vec"), [][]float32{{1, 2}, {3}}, nil); err == nil {
		t.Error("WriteVectorFile took rows of two lengths")
	}

	res, err := VectorBench(context.Background(), VectorBenchOptions{Vectors: 1500, Queries: 10, K: 10, Seed: 1, Real: gotRows, RealQueries: gotQueries})
	if err != nil {
		t.Fatal(err)
	}
	if res.Vectors != 1500 || res.Queries != 10 || res.Dim != 16 || !strings.Contains(res.Source, "10 held-out queries") {
		t.Errorf("bench of a vector file: %d vectors, %d queries, dim %d, source %q; want 1500, 10, 16 and the held-out queries named", res.Vectors, res.Queries, res.Dim, res.Source)
	}
	if res.Int8.Recall < 0.99 || res.Approx.Recall < 0.9 {
		t.Errorf("int8 recall %v (want >= 0.99), HNSW recall %v (want >= 0.9)", res.Int8.Recall, res.Approx.Recall)
	}
}

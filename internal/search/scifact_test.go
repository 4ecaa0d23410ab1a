package search_test

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/eval"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden SciFact rankings in testdata/search")

// SciFact's keyword rankings stay what they are: nDCG@10 over the 300 test
// queries, and the top 100 hits of each (source, chunk and the score's
// bits) summed up in one digest, equal to the golden ones. Any change to
// analysis, indexing or scoring that moves a single hit or a score's last
// bit fails here; a deliberate change rewrites the golden file with
// -update and says why in its commit.
func TestSciFactKeywordRankingsUnchanged(t *testing.T) {
	ds, err := eval.LoadBEIR(testenv.SciFact(t), "test")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "scifact.db"), sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := eval.IndexDataset(ctx, index.New(st, index.Options{}), ds); err != nil {
		t.Fatal(err)
	}
	e := search.New(st)
	res, err := eval.Run(ctx, e, ds, search.ModeKeyword)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 0, len(ds.Queries))
	for id := range ds.Queries {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	h := sha256.New()
	for _, id := range ids {
		// The raw ranking (PerSource -1): the golden pins the scorer, not
		// how results are varied across sources.
		resp, err := e.Search(ctx, search.Request{Query: ds.Queries[id], K: 100, Mode: search.ModeKeyword, PerSource: -1})
		if err != nil {
			t.Fatalf("query %s: %v", id, err)
		}
		fmt.Fprintf(h, "%s:", id)
		for _, hit := range resp.Hits {
			fmt.Fprintf(h, " %s#%d=%x", hit.Source.URI, hit.Chunk.Index, math.Float64bits(hit.Score))
		}
		fmt.Fprintln(h)
	}
	got := fmt.Sprintf("nDCG@10 %.16f\nrankings sha256 %x\n", res.NDCGAt10, h.Sum(nil))
	golden := filepath.Join("..", "..", "testdata", "search", "scifact-keyword.txt")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./internal/search -run SciFactKeyword -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("SciFact keyword rankings changed:\n%s\nwant (testdata/search/scifact-keyword.txt):\n%s", got, want)
	}
	if !strings.HasPrefix(got, "nDCG@10 0.6895") {
		t.Errorf("SciFact keyword nDCG@10 = %.4f, want 0.6896", res.NDCGAt10)
	}
}

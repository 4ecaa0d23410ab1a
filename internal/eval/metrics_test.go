package eval

import (
	"math"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/doc"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestMetrics(t *testing.T) {
	rels := map[string]int{"a": 1, "b": 1, "x": 0}
	tests := []struct {
		name           string
		ranked         []string
		ndcg, r10, mrr float64
	}{
		{"perfect", []string{"a", "b", "c"}, 1, 1, 1},
		{"none", []string{"c", "d"}, 0, 0, 0},
		{"second and fourth", []string{"c", "a", "d", "b"},
			(1/math.Log2(3) + 1/math.Log2(5)) / (1 + 1/math.Log2(3)), 1, 0.5},
		{"judged non-relevant does not count", []string{"x", "a"}, (1 / math.Log2(3)) / (1 + 1/math.Log2(3)), 0.5, 0.5},
		{"empty ranking", nil, 0, 0, 0},
	}
	for _, tc := range tests {
		if got := NDCG(tc.ranked, rels, 10); !near(got, tc.ndcg) {
			t.Errorf("%s: nDCG@10 = %v, want %v", tc.name, got, tc.ndcg)
		}
		if got := Recall(tc.ranked, rels, 10); !near(got, tc.r10) {
			t.Errorf("%s: recall@10 = %v, want %v", tc.name, got, tc.r10)
		}
		if got := MRR(tc.ranked, rels, 10); !near(got, tc.mrr) {
			t.Errorf("%s: MRR@10 = %v, want %v", tc.name, got, tc.mrr)
		}
	}
	// Cut-offs apply: a relevant doc at rank 11 is outside @10.
	long := []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "a"}
	if NDCG(long, rels, 10) != 0 || Recall(long, rels, 10) != 0 || Recall(long, rels, 100) != 0.5 || MRR(long, rels, 10) != 0 {
		t.Errorf("cut-off at 10 not applied")
	}
}

func TestRankDocsKeepsBestChunkPerSource(t *testing.T) {
	hit := func(uri string) doc.Hit { return doc.Hit{Source: doc.Source{URI: uri}} }
	got := RankDocs([]doc.Hit{hit("a"), hit("b"), hit("a"), hit("c"), hit("b"), hit("d")}, 3)
	want := []string{"a", "b", "c"}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("RankDocs = %v, want %v", got, want)
	}
}

func TestPercentiles(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	l := Percentiles(d)
	if l.P50 != 50 || l.P99 != 99 {
		t.Errorf("Percentiles(1..100 ms) = %+v, want p50 50, p99 99", l)
	}
	if (Percentiles(nil) != Latency{}) {
		t.Errorf("Percentiles(nil) not zero")
	}
}

func TestSynthesizeMakesDistinctDocuments(t *testing.T) {
	texts := []string{"One. Two. Three. Four.", "Alpha. Beta. Gamma.", "Red. Green. Blue. Black."}
	synth := func() []doc.Document {
		var out []doc.Document
		Synthesize(texts, 20, 7, func(d doc.Document) error { out = append(out, d); return nil })
		return out
	}
	docs := synth()
	if len(docs) != 20 {
		t.Fatalf("got %d docs", len(docs))
	}
	seen := map[string]bool{}
	for _, d := range docs {
		if d.Content == "" || seen[d.URI] {
			t.Errorf("empty or repeated doc %q", d.URI)
		}
		seen[d.URI] = true
	}
	again := synth()
	for i := range docs {
		if docs[i].Content != again[i].Content {
			t.Fatalf("Synthesize is not deterministic for a seed")
		}
	}
}

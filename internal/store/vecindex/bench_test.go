package vecindex

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// benchSet is 100,000 x 384 clustered vectors and held-out queries, made
// once for all benchmarks.
var benchSet = sync.OnceValues(func() (*Flat, [][]float32) {
	const n, dim = 100_000, 384
	f := NewFlat(dim, FlatOptions{Capacity: n})
	for i, v := range Clustered(n, dim, 7) {
		f.Add(int64(i+1), v)
	}
	return f, ClusteredQueries(200, n, dim, 7)
})

func benchSearch(b *testing.B, s Searcher, qs [][]float32) {
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		s.Search(qs[i%len(qs)], 10, nil)
	}
}

// BenchmarkExact100k times the exact scan (SIMD where vek runs, and the
// portable Go path) at 100,000 x 384.
func BenchmarkExact100k(b *testing.B) {
	f, qs := benchSet()
	b.Run("simd", func(b *testing.B) { benchSearch(b, f, qs) })
	p := *f
	p.k = newKernel(true)
	b.Run("portable", func(b *testing.B) { benchSearch(b, &p, qs) })
	one := *f
	one.workers = 1
	b.Run("one-core", func(b *testing.B) { benchSearch(b, &one, qs) })
}

// BenchmarkInt8100k times the int8 scan with exact re-ranking.
func BenchmarkInt8100k(b *testing.B) {
	f, qs := benchSet()
	x := NewCompact(f)
	benchSearch(b, x, qs)
	b.ReportMetric(recall(f, x, qs, 10), "recall@10")
}

// BenchmarkHNSW100k times HNSW searches and reports the build time and
// recall@10 against the exact scan.
func BenchmarkHNSW100k(b *testing.B) {
	f, qs := benchSet()
	start := time.Now()
	h, err := BuildHNSW(context.Background(), NewCompact(f), HNSWOptions{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	built := time.Since(start)
	for _, ef := range []int{48, 64, 96, 128} {
		b.Run(fmt.Sprintf("ef%d", ef), func(b *testing.B) {
			h.efSearch = ef
			benchSearch(b, h, qs)
			b.ReportMetric(recall(f, h, qs, 10), "recall@10")
			b.ReportMetric(built.Seconds(), "build-s")
		})
	}
}

// recall is the mean share of the exact top k that s finds.
func recall(f *Flat, s Searcher, qs [][]float32, k int) float64 {
	hit, all := 0, 0
	for _, q := range qs {
		want := map[int64]bool{}
		for _, h := range f.Search(q, k, nil) {
			want[h.ChunkID] = true
		}
		for _, h := range s.Search(q, k, nil) {
			if want[h.ChunkID] {
				hit++
			}
		}
		all += len(want)
	}
	return float64(hit) / float64(all)
}

package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/analyze/analyzetest"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// BenchmarkHits reads the 20 best chunks of SciFact-like queries, as a
// keyword search's proximity re-rank does: chunk rows, their sources and
// the text of each from its compressed block.
func BenchmarkHits(b *testing.B) {
	ctx := context.Background()
	texts := analyzetest.SciFact(b, 3000)
	s, err := Open(ctx, filepath.Join(b.TempDir(), "h.db"), Options{Create: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var batch []store.SourceData
	for i, t := range texts {
		uri := fmt.Sprintf("doc/%d.txt", i)
		c := doc.Chunk{SourceID: doc.SourceID(uri), Text: t, EndByte: len(t), StartLine: 1, EndLine: 1}
		batch = append(batch, store.SourceData{Source: doc.Source{URI: uri, Title: fmt.Sprint("Document ", i), ContentHash: doc.ContentHash(t)}, Content: t, Chunks: []doc.Chunk{c}})
	}
	if err := s.Replace(ctx, batch); err != nil {
		b.Fatal(err)
	}
	an := analyze.New(analyze.Options{})
	var queries [][]int64
	for i := 0; i < len(texts); i += 30 {
		scored, err := s.KeywordSearch(ctx, an.QueryTerms(texts[i][:min(len(texts[i]), 120)]), 20, store.Filter{})
		if err != nil || len(scored) < 20 {
			b.Fatalf("query %d: %v (%d hits)", i, err, len(scored))
		}
		ids := make([]int64, len(scored))
		for j, sc := range scored {
			ids[j] = sc.ChunkID
		}
		queries = append(queries, ids)
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		hits, err := s.Hits(ctx, queries[i%len(queries)])
		if err != nil || len(hits) != 20 {
			b.Fatalf("Hits: %v (%d)", err, len(hits))
		}
	}
}

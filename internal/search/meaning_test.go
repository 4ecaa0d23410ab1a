package search_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/embed/embedtest"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
	"github.com/sagasu-dev/sagasu/internal/store/storetest"
)

func embedded(t *testing.T) (store.Store, *search.Engine) {
	t.Helper()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "s.db"), sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.InitVectors(ctx, storetest.VectorDim); err != nil {
		t.Fatal(err)
	}
	if err := s.Replace(ctx, storetest.EmbeddedCorpus(t)); err != nil {
		t.Fatal(err)
	}
	return s, search.New(s, search.WithEmbedder(embedtest.New(storetest.VectorDim)))
}

// TestRelatedness: the chunks closest to a text by their stored vectors
// stand out from the index's mean, in standard deviations.
func TestRelatedness(t *testing.T) {
	ctx := context.Background()
	s, e := embedded(t)
	if !e.ComparesMeaning() {
		t.Fatal("an engine with an embedder in hybrid mode compares meaning")
	}
	q := "cat mice night"
	qv, _ := embedtest.New(storetest.VectorDim).EmbedQuery(ctx, q)
	nearest, err := s.VectorSearch(ctx, qv, 100, store.Filter{})
	if err != nil || len(nearest) < 3 {
		t.Fatalf("vector search: %v, %v", nearest, err)
	}
	ids := []int64{nearest[0].ChunkID, nearest[len(nearest)-1].ChunkID}
	rel, err := e.Relatedness(ctx, q, ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(rel) != 2 || !(rel[ids[0]] > 1 && rel[ids[0]] > rel[ids[1]]) {
		t.Errorf("relatedness = %v: the nearest chunk must stand well above the mean and the farthest", rel)
	}
	// Without an embedder, or with one kept for recall only, it does not.
	if search.New(s).ComparesMeaning() || search.New(s, search.WithEmbedder(embedtest.New(storetest.VectorDim)), search.WithDefaultMode(search.ModeKeyword)).ComparesMeaning() {
		t.Error("an engine whose default is keyword does not compare meaning")
	}
	if _, err := search.New(s).Relatedness(ctx, q, ids); err == nil {
		t.Error("relatedness without an embedder must fail")
	}
	df, n, err := e.DocFreq(ctx, storetest.Terms("cat"))
	if err != nil || n == 0 || df["cat"] == 0 {
		t.Errorf("DocFreq = %v, %d, %v", df, n, err)
	}
}

// TestJapaneseQuestionEndings: the Japanese endings of a question (する方法,
// を教えて, とは) do not reach the keyword index, so the page about the
// topic wins over pages that share only the ending.
func TestJapaneseQuestionEndings(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "s.db"), sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.Replace(ctx, []store.SourceData{
		storetest.Source("sitemap.md", "file", "サイトマップ", "サイトマップを生成できます。"),
		storetest.Source("howto.md", "file", "使い方", "この方法を教えてください。方法はいくつかあります。その方法を知りたい方は、方法の一覧を見てください。"),
	})
	if err != nil {
		t.Fatal(err)
	}
	e := search.New(s)
	resp, err := e.Search(ctx, search.Request{Query: "サイトマップを生成する方法を教えて", Mode: search.ModeKeyword})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Hits) != 1 || resp.Hits[0].Source.URI != "sitemap.md" {
		var got []string
		for _, h := range resp.Hits {
			got = append(got, h.Source.URI)
		}
		t.Errorf("hits %v: want only the sitemap page", got)
	}
	// A question of nothing but its ending still searches.
	if resp, err := e.Search(ctx, search.Request{Query: "方法を教えて", Mode: search.ModeKeyword}); err != nil || len(resp.Hits) == 0 {
		t.Errorf("a question of endings only: %v, %v", resp.Hits, err)
	}
}

// readWith is a store that says which analyzer its index is read with.
type readWith struct {
	store.Store
	an *analyze.Analyzer
}

func (r readWith) Analyzer() *analyze.Analyzer { return r.an }

// TestQueriesUseTheIndexAnalyzer: an index read with the older analyzer
// (one that could not be upgraded) gets queries analysed the same way.
func TestQueriesUseTheIndexAnalyzer(t *testing.T) {
	ctx := context.Background()
	v1 := analyze.New(analyze.Options{Version: 1})
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "s.db"), sqlite.Options{Create: true, Analyzer: v1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Replace(ctx, []store.SourceData{storetest.Source("a.md", "file", "設定", "設定ファイルを作成します")}); err != nil {
		t.Fatal(err)
	}
	e := search.New(readWith{Store: s, an: v1})
	if e.Analyzer() != v1 {
		t.Fatal("the engine does not use the store's analyzer")
	}
	resp, err := e.Search(ctx, search.Request{Query: "ファイル", Mode: search.ModeKeyword})
	if err != nil || len(resp.Hits) != 1 {
		t.Errorf("version 1 index searched with its own analyzer: %v, %v", resp.Hits, err)
	}
	if got := search.New(s).Analyzer().Signature(); got != "analyze/1" {
		t.Errorf("an engine over the SQLite store reads it with %q", got)
	}
}

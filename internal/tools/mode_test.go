package tools

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/embed/embedtest"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
)

// TestEveryFaceSearchesInTheIndexDefault: with an embedder pinned, the
// typed operations every face calls (query, sagasu_search) search hybrid
// unless told otherwise; the search engine alone decides (the loop passes
// its mode on to every search: loop.TestEverySearchUsesTheRunsMode).
func TestEveryFaceSearchesInTheIndexDefault(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "s.db"), sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	emb := embedtest.New(16)
	if err := st.InitVectors(ctx, 16); err != nil {
		t.Fatal(err)
	}
	var ds []doc.Document
	for uri, content := range docs {
		ds = append(ds, doc.Document{URI: uri, Type: doc.TypeFile, Format: doc.FormatMarkdown, Content: content})
	}
	if _, err := index.New(st, index.Options{Embedder: emb}).Documents(ctx, ds); err != nil {
		t.Fatal(err)
	}
	ts, err := New(Options{Engine: search.New(st, search.WithEmbedder(emb))})
	if err != nil {
		t.Fatal(err)
	}
	q, err := ts.Query(ctx, QueryInput{Query: "sitemap"})
	if err != nil || q.Mode != search.ModeHybrid {
		t.Errorf("query: mode %q, %v; want hybrid", q.Mode, err)
	}
	s, err := ts.Search(ctx, SearchInput{Goal: "generate a sitemap", Query: "sitemap"})
	if err != nil || s.Mode != search.ModeHybrid {
		t.Errorf("sagasu_search: mode %q, %v; want hybrid", s.Mode, err)
	}
	no := false
	s, err = ts.Search(ctx, SearchInput{Goal: "generate a sitemap", Query: "sitemap", Options: &SearchOptions{Hybrid: &no}})
	if err != nil || s.Mode != search.ModeKeyword {
		t.Errorf("sagasu_search hybrid=false: mode %q, %v; want keyword", s.Mode, err)
	}
}

package search_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/eval"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// A long-lived process answers keyword queries from its cache of decoded
// lists with MaxScore; a one-shot command scores the stored postings. On
// real text both must rank the same chunks in the same order with the same
// scores, before and after the index changes under the cache.
func TestKeywordCacheRanksLikeStoredPostingsOnSciFact(t *testing.T) {
	ds, err := eval.LoadBEIR(testenv.SciFact(t), "test")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "scifact.db")
	plain, err := sqlite.Open(ctx, path, sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := eval.IndexDataset(ctx, index.New(plain, index.Options{}), ds); err != nil {
		t.Fatal(err)
	}
	cached, err := sqlite.Open(ctx, path, sqlite.Options{CacheKeyword: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cached.Close()
	want, got := search.New(plain), search.New(cached)
	queries := make([]string, 0, len(ds.Queries))
	for _, q := range ds.Queries {
		queries = append(queries, q)
	}
	slices.Sort(queries)
	compare := func(when string, f store.Filter) {
		t.Helper()
		hits := 0
		for _, q := range queries {
			w, err := want.Keyword(ctx, q, 10, f)
			if err != nil {
				t.Fatal(err)
			}
			g, err := got.Keyword(ctx, q, 10, f)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(g, w) {
				t.Fatalf("%s, query %q:\ncached %v\nstored %v", when, q, g, w)
			}
			hits += len(g)
		}
		if hits < len(queries)*9 {
			t.Errorf("%s: %d hits for %d queries; the comparison needs full rankings", when, hits, len(queries))
		}
	}
	compare("cold and warm", store.Filter{})
	compare("warm", store.Filter{})
	// Change the index through the other handle, as another process would:
	// drop a tenth of the abstracts and rewrite a few others.
	var drop []string
	for i := 0; i < len(ds.Docs); i += 10 {
		drop = append(drop, doc.SourceID(ds.Docs[i].URI))
	}
	if _, err := plain.Delete(ctx, drop); err != nil {
		t.Fatal(err)
	}
	changed := make([]doc.Document, 0, 50)
	for i := 1; i < 500; i += 10 {
		d := ds.Docs[i]
		d.Content = d.Content + " " + ds.Docs[i+1].Content
		changed = append(changed, d)
	}
	if _, err := index.New(plain, index.Options{}).Documents(ctx, changed); err != nil {
		t.Fatal(err)
	}
	compare("after another handle deleted and rewrote sources", store.Filter{})
	compare("with a filter", store.Filter{PathGlob: "1*"})
}

package sqlite

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/storetest"
)

func TestConformanceWithKeywordCache(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := openDriver(context.Background(), filepath.Join(t.TempDir(), "sagasu.db"), Options{Create: true, CacheKeyword: true})
		if err != nil {
			t.Fatal(err)
		}
		return store.New(s)
	})
}

// The keyword cache of one process must see what another process writes:
// every answer equals that of a store without the cache.
func TestKeywordCacheSeesOtherWriters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "k.db")
	cached, err := openDriver(ctx, path, Options{Create: true, CacheKeyword: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cached.Close()
	writer, err := openDriver(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	put := func(uri, text string) {
		t.Helper()
		if err := writer.Replace(ctx, []store.SourceData{storetest.Source(uri, "file", uri, text)}); err != nil {
			t.Fatal(err)
		}
	}
	same := func(when, q string, wantTop string) {
		t.Helper()
		got, err := cached.KeywordSearch(ctx, storetest.Terms(q), 5, store.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		want, err := writer.KeywordSearch(ctx, storetest.Terms(q), 5, store.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: cached %v, uncached %v", when, got, want)
		}
		if wantTop == "" {
			if len(got) != 0 {
				t.Fatalf("%s: %v, want no hits", when, got)
			}
			return
		}
		hits, err := cached.Hits(ctx, []int64{got[0].ChunkID})
		if err != nil || len(hits) != 1 || hits[0].Source.URI != wantTop {
			t.Fatalf("%s: top hit %v (%v), want %s", when, hits, err, wantTop)
		}
	}
	put("a.md", "the orchid blooms in spring")
	put("b.md", "a cactus needs little water")
	same("first query", "orchid water", "a.md")
	put("c.md", "orchid orchid orchid care and water")
	same("after a new source", "orchid water", "c.md")
	put("c.md", "nothing about flowers here")
	same("after a rewrite", "orchid water", "a.md")
	if _, err := writer.Delete(ctx, []string{doc.SourceID("a.md")}); err != nil {
		t.Fatal(err)
	}
	same("after a delete", "orchid water", "b.md")
	if _, err := writer.Delete(ctx, []string{doc.SourceID("b.md"), doc.SourceID("c.md")}); err != nil {
		t.Fatal(err)
	}
	same("after deleting everything", "orchid water", "")
	// The same text again: the segment numbers and counts repeat, the
	// write count does not.
	put("a.md", "the orchid blooms in spring")
	same("after writing it all again", "orchid", "a.md")
}

func TestWarmLoadsTheKeywordIndex(t *testing.T) {
	ctx := context.Background()
	s, err := openDriver(ctx, filepath.Join(t.TempDir(), "w.db"), Options{Create: true, CacheKeyword: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Replace(ctx, []store.SourceData{storetest.Source("a.md", "file", "A", "alpha beta gamma"), storetest.Source("b.md", "file", "B", "beta delta")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	if b := s.kcache.Bytes(); b == 0 {
		t.Error("Warm left the keyword cache empty")
	}
	res, err := s.KeywordSearch(ctx, storetest.Terms("beta"), 5, store.Filter{})
	if err != nil || len(res) != 2 {
		t.Errorf("search after Warm: %v, %v; want both sources", res, err)
	}
	plain, err := openDriver(ctx, s.Path(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if err := plain.Warm(ctx); err != nil {
		t.Errorf("Warm without caches: %v", err)
	}
}

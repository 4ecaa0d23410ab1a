package postgres

import (
	"context"
	"slices"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/storetest"
)

func TestConformanceWithKeywordCache(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := openDriver(context.Background(), freshDSN(t), Options{Create: true, CacheKeyword: true})
		if err != nil {
			t.Fatal(err)
		}
		return store.New(s)
	})
}

// A cached store must see what another process writes, and answer exactly
// as a store without the cache.
func TestKeywordCacheSeesOtherWriters(t *testing.T) {
	ctx := context.Background()
	dsn := freshDSN(t)
	writer := open(t, dsn)
	defer writer.Close()
	cached, err := openDriver(ctx, dsn, Options{CacheKeyword: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cached.Close()
	put := func(uri, text string) {
		t.Helper()
		if err := writer.Replace(ctx, []store.SourceData{storetest.Source(uri, doc.TypeFile, uri, text)}); err != nil {
			t.Fatal(err)
		}
	}
	same := func(when, q string, hits int) {
		t.Helper()
		got := kw(t, store.New(cached), q, 5)
		want := kw(t, store.New(writer), q, 5)
		if !slices.Equal(got, want) || len(got) != hits {
			t.Fatalf("%s: cached %v, uncached %v; want %d hits", when, got, want, hits)
		}
	}
	put("a.md", "the orchid blooms in spring")
	put("b.md", "a cactus needs little water")
	same("first query", "orchid water", 2)
	put("c.md", "orchid orchid orchid care and water")
	same("after a new source", "orchid water", 3)
	if err := cached.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	if cached.kcache.Bytes() == 0 {
		t.Error("Warm left the keyword cache empty")
	}
	put("c.md", "nothing about flowers here")
	same("after a rewrite", "orchid water", 2)
	if _, err := writer.Delete(ctx, []string{doc.SourceID("a.md"), doc.SourceID("b.md"), doc.SourceID("c.md")}); err != nil {
		t.Fatal(err)
	}
	same("after deleting everything", "orchid water", 0)
	put("a.md", "the orchid blooms in spring")
	same("after writing it again", "orchid", 1)
}

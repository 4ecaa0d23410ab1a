package sqlite

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/storetest"
)

// TestCachedBlocksNeverStale reads a chunk (caching its block) in one
// handle, rewrites the source with other text of the same length in
// another handle (another process), and reads it again.
func TestCachedBlocksNeverStale(t *testing.T) {
	ctx := context.Background()
	reader := openTemp(t)
	writer, err := openDriver(ctx, reader.Path(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	for i, text := range []string{"alpha words here", "omega terms there", "alpha words here"} {
		if err := writer.Replace(ctx, []store.SourceData{storetest.Source("a.md", "file", "A", text)}); err != nil {
			t.Fatal(err)
		}
		for range 2 { // the second read comes from the cache
			res, err := reader.KeywordSearch(ctx, storetest.Terms(strings.Fields(text)[1]), 5, store.Filter{})
			if err != nil || len(res) != 1 {
				t.Fatalf("write %d: search = %v, %v", i, res, err)
			}
			hits, err := reader.Hits(ctx, []int64{res[0].ChunkID})
			if err != nil || len(hits) != 1 || hits[0].Chunk.Text != text {
				t.Fatalf("write %d: hit %+v, %v; want text %q", i, hits, err, text)
			}
			if got, err := reader.Content(ctx, hits[0].Source.ID); err != nil || got != text {
				t.Errorf("write %d: Content = %q, %v; want %q", i, got, err, text)
			}
		}
	}
}

// TestBlockCacheBound fills the cache past its bound: it keeps at most its
// bound, the most recent blocks, and gives each its own text.
func TestBlockCacheBound(t *testing.T) {
	cd, err := newCodec()
	if err != nil {
		t.Fatal(err)
	}
	defer cd.close()
	cd.cache = newBlockCache(64 << 10)
	var comps [][]byte
	var texts []string
	for i := range 200 {
		text := strings.Repeat(fmt.Sprintf("block %d; ", i), 100)
		comps = append(comps, cd.blocks(nil, text)[0])
		texts = append(texts, text)
		if got, err := cd.decode(comps[i]); err != nil || got != text {
			t.Fatalf("decode block %d = %.20q, %v", i, got, err)
		}
	}
	if cd.cache.size > 64<<10 || cd.cache.lru.Len() == 0 {
		t.Errorf("cache holds %d bytes in %d blocks; want at most %d and some", cd.cache.size, cd.cache.lru.Len(), 64<<10)
	}
	if _, _, ok := cd.cache.get(comps[199]); !ok {
		t.Errorf("the most recent block is not cached")
	}
	if _, _, ok := cd.cache.get(comps[0]); ok {
		t.Errorf("the oldest block is still cached past the bound")
	}
	for i := range comps {
		if got, err := cd.decode(comps[i]); err != nil || got != texts[i] {
			t.Fatalf("decode block %d again = %.20q, %v", i, got, err)
		}
	}
}

package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/storetest"
)

// A large enough batch gives the index a content dictionary, stored in the
// batch's transaction: later batches and other handles reuse it, another
// handle opened before it existed reads the blocks made with it, and the
// content takes fewer bytes than without one. A small index makes none.
func TestContentDictionary(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var batch, more []store.SourceData
	for i := range 60 {
		text := fmt.Sprintf("Title %d\n\nThe membrane protein of cell line %d binds the ligand in tissue samples; "+
			"expression of the receptor was measured by western blot in %d patients with chronic disease.", i, i*7, 10+i)
		sd := storetest.Source(fmt.Sprintf("d%02d.md", i), "file", fmt.Sprintf("Doc %d", i), text)
		if i < 50 {
			batch = append(batch, sd)
		} else {
			more = append(more, sd)
		}
	}
	open := func(name string, minBatch int) *Store {
		t.Helper()
		s, err := openDriver(ctx, filepath.Join(dir, name), Options{Create: true, dictMinBatch: minBatch})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	dictIDs := func(s *Store) []int64 {
		t.Helper()
		var ids []int64
		rows, err := s.db.QueryContext(ctx, `SELECT id FROM content_dicts ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			rows.Scan(&id)
			ids = append(ids, id)
		}
		return ids
	}
	blockDicts := func(s *Store) (map[uint32]int, int) {
		t.Helper()
		out, size := map[uint32]int{}, 0
		rows, err := s.db.QueryContext(ctx, `SELECT data FROM content_blocks`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var data []byte
			rows.Scan(&data)
			var h zstd.Header
			if err := h.Decode(data); err != nil {
				t.Fatal(err)
			}
			out[h.DictionaryID]++
			size += len(data)
		}
		return out, size
	}
	checkContent := func(s *Store, sds []store.SourceData, who string) {
		t.Helper()
		for _, sd := range sds {
			got, err := s.Content(ctx, sd.Source.ID)
			if err != nil || got != sd.Content {
				t.Fatalf("%s: content of %s = %q, %v; want %q", who, sd.Source.URI, got, err, sd.Content)
			}
		}
	}

	a := open("a.db", 1<<10)
	early, err := openDriver(ctx, filepath.Join(dir, "a.db"), Options{}) // before any dictionary
	if err != nil {
		t.Fatal(err)
	}
	defer early.Close()
	if err := a.Replace(ctx, batch); err != nil {
		t.Fatal(err)
	}
	ids := dictIDs(a)
	byDict, withDict := blockDicts(a)
	if len(ids) != 1 || byDict[uint32(ids[0])] != len(batch) {
		t.Fatalf("dictionaries %v, blocks by dictionary %v; want one dictionary naming all %d blocks", ids, byDict, len(batch))
	}
	checkContent(a, batch, "the writer")
	// The early handle meets the dictionary from several goroutines at
	// once: each load replaces its decoder while others decode.
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			for _, sd := range batch[g:] {
				if got, err := early.Content(ctx, sd.Source.ID); err != nil || got != sd.Content {
					errs <- fmt.Errorf("content of %s = %q, %v", sd.Source.URI, got, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Errorf("a handle opened before the dictionary: %v", err)
		}
	}
	hits, err := early.Hits(ctx, []int64{1, 2})
	if err != nil || len(hits) != 2 || !strings.Contains(batch[0].Content, hits[0].Chunk.Text) || hits[0].Chunk.Text == "" {
		t.Errorf("hits read by the early handle = %+v, %v", hits, err)
	}

	// Another handle writing later reuses the stored dictionary.
	later := open("a.db", 1<<10)
	if err := later.Replace(ctx, more); err != nil {
		t.Fatal(err)
	}
	if got := dictIDs(later); len(got) != 1 || got[0] != ids[0] {
		t.Errorf("dictionaries after a second writer: %v, want %v", got, ids)
	}
	checkContent(a, more, "the first writer, reading the second's blocks")

	// The same batch without a dictionary takes more bytes.
	plain := open("plain.db", 1<<30)
	if err := plain.Replace(ctx, batch); err != nil {
		t.Fatal(err)
	}
	byDict, without := blockDicts(plain)
	if len(dictIDs(plain)) != 0 || byDict[0] != len(batch) {
		t.Errorf("a batch under the threshold: dictionaries %v, blocks by dictionary %v; want none", dictIDs(plain), byDict)
	}
	if withDict >= without {
		t.Errorf("content with the dictionary %d bytes, without %d: want fewer", withDict, without)
	}
	t.Logf("content: %d bytes with the dictionary, %d without", withDict, without)
}

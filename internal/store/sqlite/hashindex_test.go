package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/storetest"
)

// The index of chunks by context hash exists exactly while the index holds
// vectors: a keyword-only index does not pay for it, a vector index finds
// its stored vectors by hash through it, and an index of schema 7 keeps it
// when it has vectors and loses it when it has none.
func TestHashIndexOnlyWithVectors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	hasIndex := func(t *testing.T, s *Store) bool {
		t.Helper()
		var n int
		if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE name = 'chunks_chash'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	open := func(t *testing.T, name string, schema int) *Store {
		t.Helper()
		s, err := openDriver(ctx, filepath.Join(dir, name), Options{Create: true, schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	sd := storetest.Source("a.md", "file", "A", "some text about cells")

	kw := open(t, "kw.db", 0)
	defer kw.Close()
	if err := kw.Replace(ctx, []store.SourceData{sd}); err != nil {
		t.Fatal(err)
	}
	if hasIndex(t, kw) {
		t.Error("a keyword-only index has the hash index")
	}

	vec := open(t, "vec.db", 0)
	defer vec.Close()
	if err := vec.InitVectors(ctx, 3); err != nil {
		t.Fatal(err)
	}
	withVec := sd
	withVec.Vectors = [][]float32{{1, 0, 0}}
	if err := vec.Replace(ctx, []store.SourceData{withVec}); err != nil {
		t.Fatal(err)
	}
	if !hasIndex(t, vec) {
		t.Error("an index with vectors has no hash index")
	}
	h := doc.ContentHash(doc.ContextText("A", sd.Chunks[0]))
	got, err := vec.VectorsByHash(ctx, []string{h})
	if err != nil || len(got[h]) != 3 {
		t.Errorf("VectorsByHash = %v, %v; want the stored vector", got, err)
	}
	var plan string
	rows, err := vec.db.QueryContext(ctx, `EXPLAIN QUERY PLAN SELECT c.chash FROM chunks c JOIN chunk_vectors v ON v.rowid = c.id WHERE c.chash IN (?)`, h)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var a, b, c int
		var d string
		rows.Scan(&a, &b, &c, &d)
		plan += d + "\n"
	}
	rows.Close()
	if !strings.Contains(plan, "chunks_chash") {
		t.Errorf("VectorsByHash's look-up does not use the hash index:\n%s", plan)
	}

	for _, vectors := range []bool{false, true} {
		name := "old-kw.db"
		if vectors {
			name = "old-vec.db"
		}
		old := open(t, name, 7)
		if vectors {
			if err := old.InitVectors(ctx, 3); err != nil {
				t.Fatal(err)
			}
		}
		if !hasIndex(t, old) {
			t.Fatalf("schema 7 (%s) has no hash index", name)
		}
		old.Close()
		s, err := openDriver(ctx, filepath.Join(dir, name), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if hasIndex(t, s) != vectors {
			t.Errorf("%s after the upgrade: hash index %v, want %v", name, hasIndex(t, s), vectors)
		}
		s.Close()
	}
}

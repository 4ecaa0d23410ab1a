package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/storetest"
)

// Writes share one connection; a write that fails (here: cancelled while
// it waits for the index's write lock, held by another process) leaves
// the next write working, and another process sees what it wrote.
func TestWriteAfterFailedWrite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.db")
	s, err := openDriver(ctx, path, Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	other, err := openDriver(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := s.Replace(ctx, []store.SourceData{storetest.Source("a.md", "file", "A", "first write")}); err != nil {
		t.Fatal(err)
	}
	// The other process holds the write lock until the cancelled write
	// has given up.
	hold, err := other.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hold.ExecContext(ctx, `UPDATE meta SET value = value WHERE key = 'x'`); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Replace(cctx, []store.SourceData{storetest.Source("b.md", "file", "B", "cancelled write")}); err == nil {
		t.Fatal("a cancelled write succeeded")
	}
	hold.Rollback()
	if err := s.Replace(ctx, []store.SourceData{storetest.Source("c.md", "file", "C", "third write")}); err != nil {
		t.Fatalf("write after a failed write: %v", err)
	}
	for _, q := range []struct {
		term string
		want int
	}{{"first", 1}, {"cancel", 0}, {"third", 1}} {
		got, err := other.KeywordSearch(ctx, []string{q.term}, 10, store.Filter{})
		if err != nil || len(got) != q.want {
			t.Errorf("search %q from another handle: %d hits (%v), want %d", q.term, len(got), err, q.want)
		}
	}
}

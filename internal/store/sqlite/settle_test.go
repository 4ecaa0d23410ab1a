package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/storetest"
)

// A bulk run lets the WAL grow up to walLimit; Settle, at the end of the
// run, checkpoints it into the index and truncates it.
func TestSettleTruncatesTheWAL(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := openDriver(ctx, path, Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var batch []store.SourceData
	x := uint64(88172645463325252)
	for i := range 200 {
		var b strings.Builder
		for b.Len() < 16<<10 { // text that compresses little
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			fmt.Fprintf(&b, "word%d w%x ", i, x)
		}
		text := b.String()
		batch = append(batch, storetest.Source(fmt.Sprintf("f%03d.md", i), "file", "F", text))
	}
	if err := s.Replace(ctx, batch); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(path + "-wal")
	if err != nil || before.Size() <= settledWAL {
		t.Fatalf("WAL after a 2 MB write: %v, %v; the test needs one over %d bytes", before, err, settledWAL)
	}
	s.Settle(ctx)
	after, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if after.Size() > settledWAL {
		t.Errorf("WAL after Settle: %d bytes, want at most %d", after.Size(), settledWAL)
	}
	res, err := s.KeywordSearch(ctx, storetest.Terms("word7"), 3, store.Filter{})
	if err != nil || len(res) == 0 {
		t.Errorf("search after Settle: %v, %v", res, err)
	}
}

package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/storetest"
)

// TestWritersLeaveCheckpointsToTheCheckpointer writes more than
// checkpointAt: the writer's commits checkpoint nothing themselves (the
// WAL's frames all wait), and one pass of the checkpointer copies them
// all into the database.
func TestWritersLeaveCheckpointsToTheCheckpointer(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	s, err := Open(ctx, path, Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.ckpt.close() // no background pass: this test makes them
	pending := func() (log, done int) {
		t.Helper()
		var busy int
		if err := s.db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(NOOP)`).Scan(&busy, &log, &done); err != nil {
			t.Fatal(err)
		}
		return log, done
	}
	for b := 0; ; b++ {
		if log, _ := pending(); log*4096 > checkpointAt {
			break
		}
		var batch []store.SourceData
		for i := range 400 {
			var words []string
			for w := range 120 {
				words = append(words, fmt.Sprintf("w%dx%d", (b*400+i)*7+w, w%13))
			}
			batch = append(batch, storetest.Source(fmt.Sprintf("d%d-%d.md", b, i), "file", "", strings.Join(words, " ")))
		}
		if err := s.Replace(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	log, done := pending()
	if log*4096 < checkpointAt || done != 0 {
		t.Fatalf("after the writes the WAL holds %d frames, %d checkpointed: want over %d bytes, none checkpointed by the writer", log, done, checkpointAt)
	}
	c := &checkpointer{db: s.db, path: path}
	c.checkpointIfDue(ctx)
	if log, done := pending(); done != log {
		t.Errorf("after a checkpointer pass %d of %d frames are checkpointed, want all", done, log)
	}
}

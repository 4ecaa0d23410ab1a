package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

// TestConcurrentFirstOpen: several processes (here, handles) creating the
// same new index at once all succeed, and the schema is made once.
func TestConcurrentFirstOpen(t *testing.T) {
	ctx := context.Background()
	const trials, openers = 25, 4
	failures := 0
	for trial := range trials {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("new-%d.db", trial))
		var wg sync.WaitGroup
		errs := make(chan error, openers)
		for range openers {
			wg.Go(func() {
				s, err := openDriver(ctx, path, Options{Create: true})
				if err != nil {
					errs <- err
					return
				}
				errs <- s.Close()
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				failures++
				t.Errorf("trial %d: %v", trial, err)
			}
		}
		s, err := openDriver(ctx, path, Options{})
		if err != nil {
			t.Fatalf("trial %d: reopen: %v", trial, err)
		}
		var version int
		if err := s.db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil || version != SchemaVersion {
			t.Errorf("trial %d: schema version %d (%v), want %d", trial, version, err, SchemaVersion)
		}
		s.Close()
	}
	t.Logf("%d trials of %d concurrent first opens: %d failures", trials, openers, failures)
}

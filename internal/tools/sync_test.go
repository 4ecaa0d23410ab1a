package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
)

// syncToolset is a toolset whose only root is a fresh folder.
func syncToolset(t *testing.T) (*Toolset, string, store.Store) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(filepath.Dir(root), "sagasu.db"), sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ts, err := New(Options{Engine: search.New(st), Roots: []string{root}, Index: index.Options{}})
	if err != nil {
		t.Fatal(err)
	}
	ts.opt.Index.Source.Root = root
	return ts, root, st
}

// TestSyncKeepsToTheRoots: a watch's sync follows the rules of
// sagasu_index: a folder outside the roots is refused, a link inside a root
// that leads out of it is not read, and without dotfiles allowed a file in
// a dot-folder is not read.
func TestSyncKeepsToTheRoots(t *testing.T) {
	ctx := context.Background()
	ts, root, st := syncToolset(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.md"), []byte("# Secret\n\nouter secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "a.md"), []byte("# A\n\nalpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(root, "link.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Sync(ctx, SyncInput{Root: outside}); !errors.Is(err, ErrOutsideRoots) {
		t.Errorf("a sync of a folder outside the roots = %v, want ErrOutsideRoots", err)
	}
	mcp := ts.WithDotfiles(false)
	rep, err := mcp.Sync(ctx, SyncInput{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	srcs, err := st.Sources(ctx, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range srcs {
		if src.Title == "Secret" {
			t.Errorf("the file a link leads to outside the root was indexed by a sync, as %s", src.URI)
		}
	}
	if _, err := st.SourceByURI(ctx, "a.md"); err != nil || rep.Added != 1 {
		t.Errorf("a.md not indexed (%v); report %+v", err, rep)
	}
	// The freshness the list reports: in step, recorded in the index.
	res, err := ts.List(ctx, ListInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Roots) != 1 || res.Roots[0].Root != root || res.Roots[0].SyncedAt == "" || res.Roots[0].Watching {
		t.Errorf("list roots = %+v, want %s recorded in step and not watched by this process", res.Roots, root)
	}
	ts.Freshness().Update(root, func(s *RootState) { s.Watching, s.Syncing = true, true })
	res, err = ts.List(ctx, ListInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Roots) != 1 || !res.Roots[0].Watching || !res.Roots[0].Syncing || res.Roots[0].SyncedAt == "" {
		t.Errorf("list roots while syncing = %+v", res.Roots)
	}
}

// TestSyncWaitsForTheWriter: while another run holds the index's writer
// lock, a sync is refused as busy and writes nothing.
func TestSyncWaitsForTheWriter(t *testing.T) {
	ctx := context.Background()
	ts, root, st := syncToolset(t)
	if err := os.WriteFile(filepath.Join(root, "a.md"), []byte("# A\n\nalpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = st
	other, err := sqlite.Open(ctx, filepath.Join(filepath.Dir(root), "sagasu.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	unlock, err := other.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Sync(ctx, SyncInput{Root: root}); !errors.Is(err, ErrIndexBusy) {
		t.Errorf("a sync while another writer holds the lock = %v, want ErrIndexBusy", err)
	}
	unlock()
	if _, err := ts.Sync(ctx, SyncInput{Root: root}); err != nil {
		t.Errorf("a sync once the lock is free: %v", err)
	}
}

package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/source"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// SyncInput asks to bring the index in step with changes in a folder.
type SyncInput struct {
	// Root is the folder (an absolute path): inside the roots, unless
	// AnyPath (the command line, whose user names folders themselves).
	Root string
	// Paths are the changed files and folders under Root (absolute); nil
	// syncs the whole folder.
	Paths   []string
	AnyPath bool
}

// Sync brings the index in step with what changed in a folder, as one
// transaction (index.Indexer.Sync), holding the index's writer lock for
// the write: ErrIndexBusy while another run writes (try again later).
// The roots, dotfile and link rules of Index hold. The folder is recorded
// in the index as in step when a sync of the whole folder, or one that
// wrote something, succeeds.
func (t *Toolset) Sync(ctx context.Context, in SyncInput) (index.Report, error) {
	if !filepath.IsAbs(in.Root) {
		return index.Report{}, fmt.Errorf("sync: folder %q is not absolute", in.Root)
	}
	root := in.Root
	if !in.AnyPath {
		if _, err := t.roots.input(root); err != nil {
			return index.Report{}, err
		}
	}
	canon, err := source.Canonical(root)
	if err != nil {
		return index.Report{}, err
	}
	unlock, err := t.store.Lock(ctx)
	if errors.Is(err, store.ErrLocked) {
		return index.Report{}, fmt.Errorf("%w (%v)", ErrIndexBusy, err)
	}
	if err != nil {
		return index.Report{}, err
	}
	defer unlock()

	opt := t.opt.Index
	opt.Progress = nil
	opt.Source.Accept = func(d doc.Document) error {
		if in.AnyPath || d.Type != doc.TypeFile {
			return nil
		}
		return t.roots.allows(d.URI, opt.Source.Root)
	}
	if !in.AnyPath {
		files, err := t.roots.openRoots()
		if err != nil {
			return index.Report{}, err
		}
		defer files.Close()
		files.hook = t.openHook
		opt.Source.Open = files.open
	}
	rep, err := index.New(t.store, opt).Sync(ctx, root, in.Paths)
	if err != nil {
		return rep, err
	}
	if in.Paths != nil && rep.Added+rep.Updated+rep.Removed == 0 {
		return rep, nil // nothing written: no need to write the record either
	}
	if err := t.recordSync(ctx, canon, time.Now()); err != nil {
		return rep, fmt.Errorf("record the sync of %s: %w", root, err)
	}
	return rep, nil
}

// CheckFolder says why Sync would refuse the folder p (outside the roots,
// a dotfile, not a folder), or returns its absolute path.
func (t *Toolset) CheckFolder(p string, anyPath bool) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if !anyPath {
		if _, err := t.roots.input(abs); err != nil {
			return "", err
		}
	}
	fi, err := os.Stat(abs)
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("watch %q: not a folder; give a folder to watch", p)
	}
	return abs, nil
}

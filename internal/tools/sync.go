package tools

import (
	"context"
	"errors"
	"fmt"
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
	release, err := t.confine(&opt.Source, in.AnyPath)
	if err != nil {
		return index.Report{}, err
	}
	defer release()
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

// confine makes the files a run reads stay inside the roots, unless
// anyPath: a walked file a symbolic link leads outside them is refused
// (Accept), and every file is opened inside its root, so that a link
// swapped in after the check cannot lead outside them either. Call
// release when the run is done.
func (t *Toolset) confine(src *source.Options, anyPath bool) (release func(), err error) {
	root := src.Root
	src.Accept = func(d doc.Document) error {
		if anyPath || d.Type != doc.TypeFile {
			return nil
		}
		return t.roots.allows(d.URI, root)
	}
	if anyPath {
		return func() {}, nil
	}
	files, err := t.roots.openRoots()
	if err != nil {
		return nil, err
	}
	files.hook = t.openHook
	src.Open = files.open
	return files.Close, nil
}

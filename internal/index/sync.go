package index

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sagasu-dev/sagasu/internal/chunk"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/source"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// syncLimit is how much changed content one Sync holds before it writes
// what it has: a change bigger than this (a first index of a large tree)
// is applied in several transactions, each whole, the removals with the
// last.
const syncLimit = 64 << 20

// Sync brings the index in step with what changed in the folder root (an
// input as Run takes it, a local folder): paths are the files and folders
// under it that were written, created, removed or renamed (OS paths; a
// renamed file is its old and its new path), nil for the whole folder (a
// rescan, such as a watch's catch-up after a restart or a lost event).
//
// The changed paths are read under the same rules as a walk of root
// (ignore files, hidden and skipped folders, excludes, links, Accept):
// a file that the walk would read and whose content hash differs from the
// stored one is chunked and written, its unchanged chunks keeping their
// stored vectors. A stored file in the changed paths that is gone from
// the disk (removed, renamed away, its folder removed) or that Accept now
// refuses is removed; one the walk leaves out but that is still there
// stays, since the user may have named it (an ignored file named as an
// input is indexed). Everything is applied in one transaction (see store.Applier),
// so a query sees the index before the change or after it, never half of
// it; only a change of more than 64 MB of text is split.
func (ix *Indexer) Sync(ctx context.Context, root string, paths []string) (Report, error) {
	start := time.Now()
	var rep Report
	fi, err := os.Stat(root)
	if err != nil || !fi.IsDir() {
		return rep, fmt.Errorf("sync %q: %w; give the folder that was indexed", root, ErrNotFolder)
	}
	canonRoot, err := source.Canonical(root)
	if err != nil {
		return rep, err
	}
	if err := ix.migrateIdentity(ctx, &rep); err != nil {
		return rep, err
	}
	indexRoot, err := source.CanonicalRoot(ix.opt.Source.Root)
	if err != nil {
		return rep, err
	}
	scope := []string{canonRoot}
	if paths != nil {
		scope = scope[:0]
		for _, p := range paths {
			c, err := source.Canonical(p)
			if err != nil {
				return rep, err
			}
			if under(canonRoot, c) {
				scope = append(scope, c)
			}
		}
		if len(scope) == 0 {
			return rep, nil
		}
	}
	inScope := func(c string) bool {
		for _, s := range scope {
			if under(s, c) {
				return true
			}
		}
		return false
	}

	stored, err := ix.inScope(ctx, indexRoot, scope, paths == nil)
	if err != nil {
		return rep, fmt.Errorf("read index: %w", err)
	}
	hashes := make(map[string]string, len(stored))
	for _, s := range stored {
		hashes[s.URI] = s.ContentHash
	}

	opt := ix.opt.Source
	opt.Only = func(c string, isDir bool) bool {
		if inScope(c) {
			return true
		}
		if !isDir {
			return false
		}
		for _, s := range scope { // a folder on the way to a changed path
			if under(c, s) {
				return true
			}
		}
		return false
	}
	present := map[string]bool{}
	refused := map[string]bool{}
	var batch []store.SourceData
	var mu sync.Mutex
	// A sync reports no progress of its own (a watch runs many small
	// ones), but measures the embedder's fit like any index run.
	m := newMeter(nil, ix.opt.Embedder != nil)
	fit := newFitter(ix.opt.Embedder)
	size := 0
	write := func(remove []string) error {
		if err := ix.embed(ctx, batch, &rep, &mu, m, fit); err != nil {
			return err
		}
		n, err := ix.store.Apply(ctx, batch, remove)
		if err != nil {
			return fmt.Errorf("write index: %w", err)
		}
		for _, sd := range batch {
			rep.Chunks += len(sd.Chunks)
			if _, ok := hashes[sd.Source.URI]; ok {
				rep.Updated++
			} else {
				rep.Added++
			}
		}
		rep.Removed += n
		batch, size = nil, 0
		return nil
	}
	emit := func(d doc.Document) error {
		if accept := opt.Accept; accept != nil {
			if err := accept(d); err != nil {
				rep.Skipped = append(rep.Skipped, source.Skip{Path: d.URI, Reason: source.SkipRefused, Err: err})
				refused[d.URI] = true
				return nil
			}
		}
		present[d.URI] = true
		rep.Bytes += int64(len(d.Content))
		hash := doc.ContentHash(d.Content)
		if old, ok := hashes[d.URI]; ok && old == hash && !ix.opt.Force {
			rep.Unchanged++
			return nil
		}
		sd, err := ix.sourceData(d, hash)
		if err != nil {
			return err
		}
		batch = append(batch, sd)
		size += len(d.Content)
		if size >= syncLimit {
			return write(nil)
		}
		return nil
	}
	skip := func(s source.Skip) { rep.Skipped = append(rep.Skipped, s) }
	if err := source.Walk(ctx, []string{root}, opt, emit, skip); err != nil {
		return rep, err
	}
	var remove []string
	for _, s := range stored {
		if present[s.URI] {
			continue
		}
		p := source.URIPath(indexRoot, s.URI)
		if !filepath.IsAbs(p) || !inScope(p) {
			continue
		}
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) || refused[s.URI] {
			ix.log.Info("removing source gone from its folder", "source", s.URI)
			remove = append(remove, s.ID)
		}
	}
	if len(batch) > 0 || len(remove) > 0 {
		if err := write(remove); err != nil {
			return rep, err
		}
		if st, ok := ix.store.(store.Settler); ok {
			st.Settle(context.WithoutCancel(ctx))
		}
		poor, err := fit.save(ctx, ix)
		if err != nil {
			return rep, fmt.Errorf("save how the embedder covers the index's languages: %w", err)
		}
		rep.PoorFit = poor
	}
	rep.Took = time.Since(start)
	return rep, nil
}

// inScope returns the stored file sources that may lie in scope: when
// every changed path is a file (or a stored file that is gone), each is
// looked up alone, so that saving one file in a large tree does not list
// the whole index; a folder, or a whole rescan, lists every file source.
func (ix *Indexer) inScope(ctx context.Context, indexRoot string, scope []string, all bool) ([]doc.Source, error) {
	var out []doc.Source
	for _, p := range scope {
		if all {
			break
		}
		fi, err := os.Lstat(p)
		if err == nil && fi.IsDir() {
			all = true
			break
		}
		src, err := ix.store.SourceByURI(ctx, source.URIOf(indexRoot, p))
		switch {
		case err == nil:
			out = append(out, src)
		case !errors.Is(err, store.ErrNotFound):
			return nil, err
		case os.IsNotExist(lstatErr(p)):
			all = true // gone and not a stored file: maybe a folder
		}
	}
	if !all {
		return out, nil
	}
	return ix.store.Sources(ctx, store.ListOptions{Type: doc.TypeFile})
}

func lstatErr(p string) error {
	_, err := os.Lstat(p)
	return err
}

// sourceData chunks a document read by Sync, ready to write.
func (ix *Indexer) sourceData(d doc.Document, hash string) (store.SourceData, error) {
	chunks, err := chunk.Split(d, ix.opt.Chunk)
	if err != nil {
		return store.SourceData{}, fmt.Errorf("chunk %q: %w", d.URI, err)
	}
	id := doc.SourceID(d.URI)
	for i := range chunks {
		chunks[i].SourceID = id
	}
	return store.SourceData{
		Source:  doc.Source{ID: id, URI: d.URI, Type: d.Type, Format: d.Format, Title: d.Title, ContentHash: hash},
		Content: d.Content,
		Chunks:  chunks,
	}, nil
}

// under reports whether the path p is dir or lies below it (both
// absolute and clean).
func under(dir, p string) bool {
	if p == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(p, dir)
}

// ErrNotFolder is returned by Sync for a root that is not a folder.
var ErrNotFolder = errors.New("not a folder")

package app

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/source"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// MetaSourceRoot is the meta key that pins the root of an index that is
// not in the default layout (an explicit --db file, a server store).
const MetaSourceRoot = "source-root"

// SourceRoot returns the index's root: the folder local file URIs are
// relative to (see source.LocalURI). For an index in the default layout,
// <dir>/.sagasu/sagasu.db (any SQLite file in a folder named .sagasu), it
// is <dir>. Otherwise it is the folder pinned in the index; when none is
// pinned it is the working directory, pinned then when pin is set (the
// first write), so that later runs from any directory name files alike.
func (a *App) SourceRoot(ctx context.Context, st store.Store, pin bool) (string, error) {
	return SourceRootOf(ctx, a.Config.DB, st, pin)
}

// SourceRootOf is SourceRoot for the index st opened at location.
func SourceRootOf(ctx context.Context, location string, st store.Store, pin bool) (string, error) {
	if dir, ok := layoutRoot(location); ok {
		return source.CanonicalRoot(dir)
	}
	pinned, err := st.Meta(ctx, MetaSourceRoot)
	if err != nil {
		return "", fmt.Errorf("read the index's root folder: %w", err)
	}
	if pinned != "" {
		return pinned, nil
	}
	root, err := source.CanonicalRoot("")
	if err != nil {
		return "", err
	}
	if pin {
		if err := st.SetMeta(ctx, MetaSourceRoot, root); err != nil {
			return "", fmt.Errorf("pin the index's root folder: %w", err)
		}
	}
	return root, nil
}

// layoutRoot returns <dir> for a SQLite index at <dir>/.sagasu/<file>.
func layoutRoot(location string) (string, bool) {
	if IsServerLocation(location) {
		return "", false
	}
	p := strings.TrimPrefix(location, "sqlite://")
	if p == "" || p == ":memory:" {
		return "", false
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", false
	}
	dir := filepath.Dir(abs)
	if filepath.Base(dir) != ".sagasu" {
		return "", false
	}
	return filepath.Dir(dir), true
}

// SourceRef turns what a user typed to name an indexed source into the
// name the index knows: a local path that, from the working directory,
// names an indexed file ("../repo/docs/a.md", "/abs/repo/docs/a.md", a
// path through a symlinked folder) becomes that file's URI. Anything else
// (an ID, a URI, a unique end of a URI, a remote address) is returned
// unchanged for the engine to resolve.
func (r *Runtime) SourceRef(ctx context.Context, ref string) string {
	if ref == "" || ref == "-" || source.IsRemote(ref) {
		return ref
	}
	uri, err := source.LocalURI(r.Root, ref)
	if err != nil || uri == ref {
		return ref
	}
	if _, err := r.Store.SourceByURI(ctx, uri); err != nil {
		return ref
	}
	return uri
}

// CarrySourceNames gives an index copied by `sagasu migrate` the naming of
// the one it was copied from: the destination, unless it is in the default
// layout, is rooted where the source is (its relative URIs mean the same
// files), and a source whose names were already re-keyed (see
// index.MetaSourceIdentity) marks the destination so too when the two
// roots agree.
func CarrySourceNames(ctx context.Context, fromLoc string, from store.Store, toLoc string, to store.Store) error {
	root, err := SourceRootOf(ctx, fromLoc, from, false)
	if err != nil {
		return err
	}
	if _, ok := layoutRoot(toLoc); !ok {
		pinned, err := to.Meta(ctx, MetaSourceRoot)
		if err != nil {
			return fmt.Errorf("read the destination's root folder: %w", err)
		}
		if pinned == "" {
			if err := to.SetMeta(ctx, MetaSourceRoot, root); err != nil {
				return fmt.Errorf("pin the destination's root folder: %w", err)
			}
		}
	}
	toRoot, err := SourceRootOf(ctx, toLoc, to, false)
	if err != nil || toRoot != root {
		return err
	}
	done, err := from.Meta(ctx, index.MetaSourceIdentity)
	if err != nil || done == "" {
		return err
	}
	return to.SetMeta(ctx, index.MetaSourceIdentity, done)
}

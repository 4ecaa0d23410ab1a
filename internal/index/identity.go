package index

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/source"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// MetaSourceIdentity is the meta key that records that the index's local
// file sources are named by their identities (source.LocalURI). Indexes
// written before that named a file by the path as typed, relative to
// whatever directory the user was in, so one file could be stored two or
// three times; the first write run re-keys them once and sets the key to
// "1".
const MetaSourceIdentity = "source-identity"

// migrateIdentity re-keys the stored local file sources of an index
// written before sources had one identity: each URI is resolved against
// the root, and when that names an existing file the source takes the
// file's identity. Sources that turn out to be one file are merged: the
// one indexed most recently stays (its chunks, postings and vectors are
// kept by a rename), the others are deleted. Sources whose file cannot be
// found are left as they are. It runs once per index.
func (ix *Indexer) migrateIdentity(ctx context.Context, rep *Report) error {
	done, err := ix.store.Meta(ctx, MetaSourceIdentity)
	if err != nil {
		return fmt.Errorf("read the index's naming version: %w", err)
	}
	if done == "1" {
		return nil
	}
	root, err := source.CanonicalRoot(ix.opt.Source.Root)
	if err != nil {
		return err
	}
	srcs, err := ix.store.Sources(ctx, store.ListOptions{Type: doc.TypeFile})
	if err != nil {
		return fmt.Errorf("list sources to re-key: %w", err)
	}
	held := make(map[string]bool, len(srcs))
	for _, s := range srcs {
		held[s.URI] = true
	}
	groups := map[string][]doc.Source{}
	for _, s := range srcs {
		p := source.URIPath(root, s.URI)
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			continue // cannot account for it: leave it alone
		}
		uri, err := source.LocalURI(root, p)
		if err != nil {
			ix.log.Warn("cannot work out a stored file's identity; leaving it as it is", "source", s.URI, "err", err)
			continue
		}
		groups[uri] = append(groups[uri], s)
	}
	uris := make([]string, 0, len(groups))
	for uri := range groups {
		uris = append(uris, uri)
	}
	sort.Strings(uris)

	type rename struct{ id, from, to string }
	var renames []rename
	var drop []string
	for _, uri := range uris {
		g := groups[uri]
		if len(g) == 1 && g[0].URI == uri {
			continue
		}
		claimed := false
		for _, s := range g {
			claimed = claimed || s.URI == uri
		}
		if held[uri] && !claimed {
			// Only a source of another kind could hold a file's URI.
			ix.log.Warn("a stored file's identity is taken by another source; leaving it as it is", "source", g[0].URI, "identity", uri)
			continue
		}
		// The most recently indexed copy stays; on a tie, the one already
		// named right, then the first by URI.
		sort.SliceStable(g, func(i, j int) bool {
			if g[i].IndexedAt != g[j].IndexedAt {
				return g[i].IndexedAt > g[j].IndexedAt
			}
			if (g[i].URI == uri) != (g[j].URI == uri) {
				return g[i].URI == uri
			}
			return g[i].URI < g[j].URI
		})
		for _, s := range g[1:] {
			ix.log.Info("merging a duplicate of a source", "duplicate", s.URI, "source", uri)
			drop = append(drop, s.ID)
		}
		if g[0].URI != uri {
			renames = append(renames, rename{g[0].ID, g[0].URI, uri})
		}
	}
	if len(drop) > 0 {
		n, err := ix.store.Delete(ctx, drop)
		if err != nil {
			return fmt.Errorf("merge duplicate sources: %w", err)
		}
		rep.Merged += n
	}
	for _, r := range renames {
		if _, err := ix.store.RenameSource(ctx, r.id, r.to); err != nil {
			if errors.Is(err, store.ErrExists) {
				ix.log.Warn("a stored file's identity is taken; leaving it as it is", "source", r.from, "identity", r.to)
				continue
			}
			return fmt.Errorf("re-key source %q: %w", r.from, err)
		}
		ix.log.Debug("re-keyed source", "from", r.from, "to", r.to)
		rep.Rekeyed++
	}
	if err := ix.store.SetMeta(ctx, MetaSourceIdentity, "1"); err != nil {
		return fmt.Errorf("record the index's naming version: %w", err)
	}
	return nil
}

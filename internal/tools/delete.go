package tools

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/glob"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// NameDelete is the delete tool's name, as agents call it.
const NameDelete = "sagasu_delete"

// DeleteInput names the sources to remove.
type DeleteInput struct {
	Sources []string `json:"sources,omitempty" jsonschema:"sources by ID, URI or a unique end of the URI"`
	Glob    string   `json:"glob,omitempty" jsonschema:"every source whose URI matches this glob"`
	DryRun  bool     `json:"dryRun,omitempty" jsonschema:"list the sources that would be deleted and delete nothing"`
	// InsideRoots refuses local files outside the allowed roots (the MCP
	// face sets it: a client may change only what lies under the roots).
	InsideRoots bool `json:"-"`
}

// DeleteOutput says what was removed, or with DryRun what would be.
type DeleteOutput struct {
	Deleted int         `json:"deleted" jsonschema:"sources removed (0 on a dry run)"`
	DryRun  bool        `json:"dryRun,omitempty" jsonschema:"nothing was removed: sources lists what would be"`
	Sources []SourceRef `json:"sources" jsonschema:"the sources removed, or on a dry run the sources that would be"`
	// OmittedSources were left out of Sources to fit a budget.
	OmittedSources int        `json:"omittedSources,omitempty" jsonschema:"sources left out of the list to fit the budget"`
	Index          IndexStats `json:"index" jsonschema:"the index after the call"`
	Measured
}

// URIs lists the URIs of the sources in the output.
func (o DeleteOutput) URIs() []string {
	uris := make([]string, len(o.Sources))
	for i, s := range o.Sources {
		uris[i] = s.URI
	}
	return uris
}

// Page returns the output with its first items sources.
func (o DeleteOutput) Page(items int) DeleteOutput {
	o.OmittedSources += len(o.Sources) - items
	o.Sources = o.Sources[:items]
	return o
}

// Delete removes sources, with their chunks, named by reference or by glob,
// holding the index's writer lock. With DryRun it says what it would
// remove and removes nothing.
func (t *Toolset) Delete(ctx context.Context, in DeleteInput) (DeleteOutput, error) {
	if len(in.Sources) == 0 && in.Glob == "" {
		return DeleteOutput{}, errors.New(`nothing to delete: name the sources (by ID or URI) in "sources", or give a "glob"`)
	}
	if in.Glob != "" {
		if err := glob.Valid(in.Glob); err != nil {
			return DeleteOutput{}, fmt.Errorf("glob: %w; give a pattern such as docs/**/*.md", err)
		}
	}
	var srcs []doc.Source
	seen := map[string]bool{}
	keep := func(s doc.Source) {
		if !seen[s.ID] {
			seen[s.ID] = true
			srcs = append(srcs, s)
		}
	}
	for i, ref := range in.Sources {
		src, err := t.engine.Resolve(ctx, ref)
		if err != nil {
			return DeleteOutput{}, fmt.Errorf("sources[%d]: %w", i, err)
		}
		if in.InsideRoots && !t.deletable(src) {
			return DeleteOutput{}, fmt.Errorf("sources[%d]: %w (nothing was deleted)", i, t.roots.outside(src.URI))
		}
		keep(src)
	}
	if in.Glob != "" {
		matched, err := t.store.Sources(ctx, store.ListOptions{PathGlob: in.Glob})
		if err != nil {
			return DeleteOutput{}, fmt.Errorf("list the sources matching %q: %w", in.Glob, err)
		}
		if len(matched) == 0 && len(in.Sources) == 0 {
			return DeleteOutput{}, fmt.Errorf("glob: no source matches %q; list the sources with sagasu_list or `sagasu list`", in.Glob)
		}
		for _, s := range matched {
			if in.InsideRoots && !t.deletable(s) {
				return DeleteOutput{}, fmt.Errorf("glob %q matches a source outside the roots: %w; narrow the glob (nothing was deleted)", in.Glob, t.roots.outside(s.URI))
			}
			keep(s)
		}
	}
	out := DeleteOutput{DryRun: in.DryRun, Sources: make([]SourceRef, len(srcs))}
	ids := make([]string, len(srcs))
	for i, s := range srcs {
		ids[i], out.Sources[i] = s.ID, Ref(s)
	}
	if !in.DryRun {
		unlock, err := t.store.Lock(ctx)
		if errors.Is(err, store.ErrLocked) {
			return DeleteOutput{}, errors.New("another run (an index run of this server or of `sagasu index`) is writing to this index: wait for it to finish, then delete again")
		}
		if err != nil {
			return DeleteOutput{}, err
		}
		n, err := t.store.Delete(ctx, ids)
		unlock()
		if err != nil {
			return DeleteOutput{}, fmt.Errorf("delete %d source(s): %w", len(ids), err)
		}
		out.Deleted = n
	}
	stats, err := t.stats(ctx)
	if err != nil {
		return DeleteOutput{}, err
	}
	out.Index = stats
	return out, nil
}

// deletable reports whether a client bound to the roots may delete src:
// any source that is not a local file, and local files inside the roots
// (whether or not they still exist).
func (t *Toolset) deletable(src doc.Source) bool {
	if src.Type != doc.TypeFile {
		return true
	}
	p := filepath.FromSlash(src.URI)
	if !filepath.IsAbs(p) {
		p = filepath.Join(t.roots.cwd, p)
	}
	real, _ := resolve(filepath.Clean(p))
	return t.roots.within(real)
}

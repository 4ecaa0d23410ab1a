package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/sagasu-dev/sagasu/internal/glob"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// DeleteInput names the sources to remove.
type DeleteInput struct {
	Sources []string `json:"sources,omitempty" jsonschema:"sources by ID, URI or a unique end of the URI"`
	Glob    string   `json:"glob,omitempty" jsonschema:"every source whose URI matches this glob"`
}

// DeleteOutput says what was removed.
type DeleteOutput struct {
	Deleted int      `json:"deleted"`
	URIs    []string `json:"uris"`
}

// Delete removes sources, with their chunks, named by reference or by glob.
func (t *Toolset) Delete(ctx context.Context, in DeleteInput) (DeleteOutput, error) {
	if len(in.Sources) == 0 && in.Glob == "" {
		return DeleteOutput{}, errors.New("nothing to delete: name the sources, or give a glob")
	}
	if in.Glob != "" {
		if err := glob.Valid(in.Glob); err != nil {
			return DeleteOutput{}, fmt.Errorf("glob: %w", err)
		}
	}
	var ids, uris []string
	for _, ref := range in.Sources {
		src, err := t.engine.Resolve(ctx, ref)
		if err != nil {
			return DeleteOutput{}, err
		}
		ids, uris = append(ids, src.ID), append(uris, src.URI)
	}
	if in.Glob != "" {
		srcs, err := t.store.Sources(ctx, store.ListOptions{PathGlob: in.Glob})
		if err != nil {
			return DeleteOutput{}, err
		}
		if len(srcs) == 0 && len(in.Sources) == 0 {
			return DeleteOutput{}, fmt.Errorf("no source matches %q (see `sagasu list`)", in.Glob)
		}
		for _, s := range srcs {
			ids, uris = append(ids, s.ID), append(uris, s.URI)
		}
	}
	n, err := t.store.Delete(ctx, ids)
	if err != nil {
		return DeleteOutput{}, fmt.Errorf("delete %d source(s): %w", len(ids), err)
	}
	return DeleteOutput{Deleted: n, URIs: uris}, nil
}

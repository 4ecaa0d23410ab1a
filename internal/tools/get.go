package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/glob"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// GetInput is sagasu_get's input.
type GetInput struct {
	Source    string `json:"source" jsonschema:"source ID, URI, or a unique end of its URI such as routing.md"`
	Section   string `json:"section,omitempty" jsonschema:"only this section (with its subsections): a heading or a heading path such as Routing > Dynamic Routes"`
	MaxTokens int    `json:"maxTokens,omitempty" jsonschema:"smaller pages: at most this many tokens per response (500 to the server's cap)"`
	Cursor    string `json:"cursor,omitempty" jsonschema:"nextCursor of the previous page; pass the same source and section"`

	// Offset is the byte offset the page starts at; a face sets it (the
	// MCP server from a cursor), agents do not.
	Offset int `json:"-"`
}

// GetOutput is one page of a source's original content.
type GetOutput struct {
	Source     SourceRef `json:"source"`
	Section    string    `json:"section,omitempty" jsonschema:"heading path of the section returned"`
	Lines      [2]int    `json:"lines" jsonschema:"first and last line of this page in the source"`
	Content    string    `json:"content"`
	Offset     int       `json:"offset" jsonschema:"byte offset of this page within the source or section"`
	TotalBytes int       `json:"totalBytes" jsonschema:"size of the whole source or section"`
	Complete   bool      `json:"complete" jsonschema:"this page reaches the end; otherwise follow nextCursor"`
	Resource   string    `json:"resource" jsonschema:"the whole source as a resource"`
	NextCursor string    `json:"nextCursor,omitempty"`
	Measured
}

// ListInput is sagasu_list's input.
type ListInput struct {
	Type   string `json:"type,omitempty" jsonschema:"only sources of this type: file, text, url, github or gist"`
	Glob   string `json:"glob,omitempty" jsonschema:"only sources whose URI matches this glob"`
	Limit  int    `json:"limit,omitempty" jsonschema:"sources per page, 1 to 200 (default 50)"`
	Cursor string `json:"cursor,omitempty" jsonschema:"nextCursor of the previous page; pass the same type and glob"`

	// Offset is how many sources come before the page; a face sets it.
	Offset int `json:"-"`
	// Unbounded lifts the bound on Limit, and makes 0 mean every source
	// (the CLI, which prints rather than pages).
	Unbounded bool `json:"-"`
}

// ListOutput is one page of the index's sources, ordered by URI.
type ListOutput struct {
	Sources        []SourceInfo `json:"sources"`
	Offset         int          `json:"offset"`
	OmittedSources int          `json:"omittedSources" jsonschema:"sources of this page left out to fit the budget; nextCursor starts with them"`
	Index          IndexStats   `json:"index"`
	Roots          []RootState  `json:"roots,omitempty" jsonschema:"folders a watch keeps in step with the index: when each was last in step and whether a sync is running"`
	NextCursor     string       `json:"nextCursor,omitempty"`
	Measured
}

// SourceInfo describes one indexed source.
type SourceInfo struct {
	ID     string `json:"id" jsonschema:"source ID; its resource is sagasu://source/ID"`
	URI    string `json:"uri"`
	Title  string `json:"title"`
	Type   string `json:"type"`
	Chunks int    `json:"chunks"`
	Bytes  int    `json:"bytes"`
	// IndexedAt is when the source was last written (RFC 3339, UTC): the
	// page's Index tab shows it, and an agent beside a watch can tell a
	// fresh source from an old one.
	IndexedAt string `json:"indexedAt"`
}

// IndexStats sums up the index.
type IndexStats struct {
	Sources int `json:"sources"`
	Chunks  int `json:"chunks"`
	Vectors int `json:"vectors" jsonschema:"chunks with an embedding"`
}

// MaxListLimit bounds sagasu_list's limit.
const MaxListLimit = 200

// ErrPastEnd says a page was asked for beyond the content: it has changed
// since the offset was handed out.
var ErrPastEnd = errors.New("the offset lies beyond the content")

// GetResult is a source's original content (whole or one section) with the
// offset a page of it starts at.
type GetResult struct {
	search.Original
	Offset int
	// Version identifies the content: a pager refuses to continue over
	// content that changed.
	Version string
}

// Get reads a source's original content, whole or one section.
func (t *Toolset) Get(ctx context.Context, in GetInput) (GetResult, error) {
	o, err := t.engine.Get(ctx, in.Source, in.Section)
	if err != nil {
		return GetResult{}, err
	}
	if err := t.Readable(o.Source); err != nil {
		return GetResult{}, err
	}
	if in.Offset < 0 || in.Offset > len(o.Content) {
		return GetResult{}, fmt.Errorf("offset %d of %d bytes: %w", in.Offset, len(o.Content), ErrPastEnd)
	}
	return GetResult{Original: o, Offset: in.Offset, Version: HashOf(o.Source.ContentHash, o.StartLine)}, nil
}

// Rest is the content from the offset on.
func (g GetResult) Rest() string { return g.Content[g.Offset:] }

// Output renders a page of at most text runes from the offset, ending at a
// line break where it can; cursor continues it (give "" when the page is
// complete, see Page).
func (g GetResult) Output(body, cursor string) GetOutput {
	rest := g.Rest()
	startLine := g.StartLine + strings.Count(g.Content[:g.Offset], "\n")
	out := GetOutput{
		Source: Ref(g.Source), Section: g.Section, Content: body, Offset: g.Offset, TotalBytes: len(g.Content),
		Complete: len(body) == len(rest), Resource: SourceURI(g.Source.ID), NextCursor: cursor,
	}
	out.Lines = [2]int{startLine, startLine + strings.Count(strings.TrimSuffix(body, "\n"), "\n")}
	return out
}

// Page returns the longest prefix of the rest of the content of at most n
// runes that ends at a line break; a first line longer than n is cut at a
// rune boundary.
func (g GetResult) Page(n int) string {
	s := g.Rest()
	if Runes(s) <= n {
		return s
	}
	cut, i := 0, 0
	for cut < len(s) && i < n {
		_, size := utf8.DecodeRuneInString(s[cut:])
		cut += size
		i++
	}
	if nl := strings.LastIndexByte(s[:cut], '\n'); nl >= 0 {
		return s[:nl+1]
	}
	return s[:cut]
}

// ListResult is one page of the index's sources, ordered by URI.
type ListResult struct {
	Sources []doc.Source
	Offset  int
	// More says sources follow the page.
	More  bool
	Index IndexStats
	// Roots are the watched folders' states (see RootState).
	Roots []RootState
}

// List lists the indexed sources, ordered by URI.
func (t *Toolset) List(ctx context.Context, in ListInput) (ListResult, error) {
	limit := in.Limit
	if limit == 0 && !in.Unbounded {
		limit = 50
	}
	if in.Unbounded && limit < 0 || !in.Unbounded && (limit < 1 || limit > MaxListLimit) {
		return ListResult{}, badArg("limit", limit, fmt.Sprintf("a whole number from 1 to %d", MaxListLimit))
	}
	if in.Offset < 0 {
		return ListResult{}, badArg("offset", in.Offset, "0 or more")
	}
	if in.Glob != "" {
		if err := glob.Valid(in.Glob); err != nil {
			return ListResult{}, fmt.Errorf("glob: %w; give a pattern such as docs/**/*.md", err)
		}
	}
	if _, err := Filter(nonEmptyList(in.Type), "", nil); err != nil {
		return ListResult{}, err
	}
	opt := store.ListOptions{Type: doc.SourceType(in.Type), PathGlob: in.Glob, Offset: in.Offset}
	if limit > 0 {
		opt.Limit = limit + 1
	}
	srcs, err := t.store.Sources(ctx, opt)
	if err != nil {
		return ListResult{}, err
	}
	res := ListResult{Sources: srcs, Offset: in.Offset}
	if limit > 0 {
		res.More = len(srcs) > limit
		res.Sources = srcs[:min(limit, len(srcs))]
	}
	if res.Index, err = t.stats(ctx); err != nil {
		return ListResult{}, err
	}
	if res.Roots, err = t.rootStates(ctx); err != nil {
		return ListResult{}, err
	}
	return res, nil
}

// Output renders the first items sources; cursor continues the listing.
func (l ListResult) Output(items int, cursor string) ListOutput {
	out := ListOutput{Sources: []SourceInfo{}, Offset: l.Offset, OmittedSources: len(l.Sources) - items, Index: l.Index, Roots: l.Roots, NextCursor: cursor}
	for _, src := range l.Sources[:items] {
		out.Sources = append(out.Sources, SourceInfo{ID: src.ID, URI: src.URI, Title: echo(src.Title), Type: string(src.Type), Chunks: src.Chunks,
			Bytes: src.Size, IndexedAt: time.Unix(src.IndexedAt, 0).UTC().Format(time.RFC3339)})
	}
	return out
}

// stats sums up the index.
func (t *Toolset) stats(ctx context.Context) (IndexStats, error) {
	st, err := t.store.Stats(ctx)
	if err != nil {
		return IndexStats{}, fmt.Errorf("read the index's statistics: %w", err)
	}
	return IndexStats{Sources: st.Sources, Chunks: st.Chunks, Vectors: st.Vectors}, nil
}

// MIME is the MIME type of a source's content.
func MIME(f doc.Format) string {
	if f == doc.FormatMarkdown {
		return "text/markdown"
	}
	return "text/plain"
}

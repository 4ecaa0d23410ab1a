package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/glob"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// GetInput is sagasu_get's input.
type GetInput struct {
	Source    string `json:"source" jsonschema:"source ID, URI, or a unique end of its URI such as routing.md"`
	Section   string `json:"section,omitempty" jsonschema:"only this section (with its subsections): a heading or a heading path such as Routing > Dynamic Routes"`
	MaxTokens int    `json:"maxTokens,omitempty" jsonschema:"smaller pages: at most this many tokens per response (500 to the server's cap)"`
	Cursor    string `json:"cursor,omitempty" jsonschema:"nextCursor of the previous page; pass the same source and section"`
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
	Type   string `json:"type,omitempty" jsonschema:"only sources of this type: file, text or url"`
	Glob   string `json:"glob,omitempty" jsonschema:"only sources whose URI matches this glob"`
	Limit  int    `json:"limit,omitempty" jsonschema:"sources per page, 1 to 200 (default 50)"`
	Cursor string `json:"cursor,omitempty" jsonschema:"nextCursor of the previous page; pass the same type and glob"`
}

// ListOutput is one page of the index's sources, ordered by URI.
type ListOutput struct {
	Sources        []SourceInfo `json:"sources"`
	Offset         int          `json:"offset"`
	OmittedSources int          `json:"omittedSources" jsonschema:"sources of this page left out to fit the budget; nextCursor starts with them"`
	Index          IndexStats   `json:"index"`
	NextCursor     string       `json:"nextCursor,omitempty"`
	Measured
}

// SourceInfo describes one indexed source.
type SourceInfo struct {
	ID        string `json:"id"`
	URI       string `json:"uri"`
	Title     string `json:"title"`
	Type      string `json:"type"`
	Format    string `json:"format"`
	Chunks    int    `json:"chunks"`
	Bytes     int    `json:"bytes"`
	IndexedAt string `json:"indexedAt"`
	Resource  string `json:"resource"`
}

// IndexStats sums up the index.
type IndexStats struct {
	Sources int `json:"sources"`
	Chunks  int `json:"chunks"`
	Vectors int `json:"vectors" jsonschema:"chunks with an embedding"`
}

const maxListLimit = 200

func (s *Server) addGetTool() {
	addTool(s, &mcp.Tool{
		Name:        ToolGet,
		Description: "Read a source's original content, whole or one section, as it was indexed. Large content comes in pages: follow nextCursor until complete is true.",
		Annotations: ro("Read a source"),
	}, func(in *jsonschema.Schema) {
		notEmpty(prop(in, "source"))
	}, s.get)
	addTool(s, &mcp.Tool{
		Name:        ToolList,
		Description: "List the indexed sources (ID, URI, title, type, chunks), ordered by URI, with filters by type and glob. Pages with nextCursor.",
		Annotations: ro("List sources"),
	}, func(in *jsonschema.Schema) {
		between(prop(in, "limit"), 1, maxListLimit)
		oneOf(prop(in, "type"), string(doc.TypeFile), string(doc.TypeText), string(doc.TypeURL))
	}, s.list)
}

func (s *Server) get(ctx context.Context, req *mcp.CallToolRequest, in GetInput) (*mcp.CallToolResult, GetOutput, error) {
	limit := s.limits.Cap
	if in.MaxTokens != 0 {
		if in.MaxTokens < 500 || in.MaxTokens > s.limits.Cap {
			return nil, GetOutput{}, fmt.Errorf("maxTokens %d is out of range: use 500 to %d", in.MaxTokens, s.limits.Cap)
		}
		limit = in.MaxTokens
	}
	o, err := s.engine.Get(ctx, in.Source, in.Section)
	if err != nil {
		return nil, GetOutput{}, err
	}
	args := hashOf(ToolGet, in.Source, in.Section)
	version := hashOf(o.Source.ContentHash, o.StartLine)
	offset := 0
	if in.Cursor != "" {
		st, err := s.cursors.open(in.Cursor, ToolGet, args)
		if err != nil {
			return nil, GetOutput{}, err
		}
		if st.Seen != version || st.Offset > len(o.Content) {
			return nil, GetOutput{}, errCursorStale
		}
		offset = st.Offset
	}
	rest := o.Content[offset:]
	startLine := o.StartLine + strings.Count(o.Content[:offset], "\n")
	full := budget.Shape{Items: 1, Text: budget.TextBound([]int{runes(rest)}, limit)}
	return fit(s, req, limit, full, 1, func(sh budget.Shape, est int) view[GetOutput] {
		body := ""
		if sh.Items > 0 {
			body = pageOf(rest, sh.Text)
		}
		out := GetOutput{
			Source: sourceRef(o.Source), Section: o.Section, Content: body, Offset: offset, TotalBytes: len(o.Content),
			Complete: len(body) == len(rest), Resource: sourceURI(o.Source.ID),
		}
		out.Lines = [2]int{startLine, startLine + strings.Count(strings.TrimSuffix(body, "\n"), "\n")}
		if !out.Complete {
			out.NextCursor = s.cursors.issue(cursorState{Tool: ToolGet, Args: args, Offset: offset + len(body), Seen: version})
		}
		out.EstimatedTokens, out.Budget = est, limit
		var b strings.Builder
		fmt.Fprintf(&b, "%s", o.Source.URI)
		if o.Section != "" {
			fmt.Fprintf(&b, " § %s", o.Section)
		}
		fmt.Fprintf(&b, " (lines %d-%d, bytes %d-%d of %d)\n\n%s", out.Lines[0], out.Lines[1], offset, offset+len(body), len(o.Content), body)
		if !out.Complete {
			fmt.Fprintf(&b, "\n[continues: call sagasu_get again with the same source and section and cursor %q]\n", out.NextCursor)
		}
		return view[GetOutput]{Out: out, Text: b.String(), Links: []*mcp.ResourceLink{{URI: out.Resource, Name: o.Source.URI, MIMEType: mimeOf(o.Source.Format)}}}
	})
}

// pageOf returns the longest prefix of s of at most n runes that ends at a
// line break; a first line longer than n is cut at a rune boundary.
func pageOf(s string, n int) string {
	if runes(s) <= n {
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

func (s *Server) list(ctx context.Context, req *mcp.CallToolRequest, in ListInput) (*mcp.CallToolResult, ListOutput, error) {
	limit := in.Limit
	if limit == 0 {
		limit = 50
	}
	if limit < 1 || limit > maxListLimit {
		return nil, ListOutput{}, fmt.Errorf("limit %d is out of range: use 1 to %d", limit, maxListLimit)
	}
	if in.Glob != "" {
		if err := glob.Valid(in.Glob); err != nil {
			return nil, ListOutput{}, fmt.Errorf("glob: %w", err)
		}
	}
	if _, err := filter(nonEmptyList(in.Type), "", nil); err != nil {
		return nil, ListOutput{}, err
	}
	args := hashOf(ToolList, in.Type, in.Glob, limit)
	offset := 0
	if in.Cursor != "" {
		st, err := s.cursors.open(in.Cursor, ToolList, args)
		if err != nil {
			return nil, ListOutput{}, err
		}
		offset = st.Offset
	}
	srcs, err := s.store.Sources(ctx, store.ListOptions{Type: doc.SourceType(in.Type), PathGlob: in.Glob, Limit: limit + 1, Offset: offset})
	if err != nil {
		return nil, ListOutput{}, err
	}
	more := len(srcs) > limit
	srcs = srcs[:min(limit, len(srcs))]
	st, err := s.store.Stats(ctx)
	if err != nil {
		return nil, ListOutput{}, err
	}
	stats := IndexStats{Sources: st.Sources, Chunks: st.Chunks, Vectors: st.Vectors}
	lim := s.limits.Cap
	return fit(s, req, lim, budget.Shape{Items: len(srcs)}, 0, func(sh budget.Shape, est int) view[ListOutput] {
		out := ListOutput{Sources: []SourceInfo{}, Offset: offset, OmittedSources: len(srcs) - sh.Items, Index: stats}
		var b strings.Builder
		fmt.Fprintf(&b, "%d sources, %d chunks in the index", stats.Sources, stats.Chunks)
		if stats.Sources == 0 {
			b.WriteString(": index documents with sagasu_index")
		}
		b.WriteString("\n")
		for _, src := range srcs[:sh.Items] {
			out.Sources = append(out.Sources, SourceInfo{ID: src.ID, URI: src.URI, Title: echo(src.Title), Type: string(src.Type),
				Format: string(src.Format), Chunks: src.Chunks, Bytes: src.Size,
				IndexedAt: time.Unix(src.IndexedAt, 0).UTC().Format(time.RFC3339), Resource: sourceURI(src.ID)})
			fmt.Fprintf(&b, "%s  %s  %s (%d chunks)\n", src.ID, src.URI, echo(src.Title), src.Chunks)
		}
		if more || sh.Items < len(srcs) {
			out.NextCursor = s.cursors.issue(cursorState{Tool: ToolList, Args: args, Offset: offset + sh.Items})
			fmt.Fprintf(&b, "More: call again with cursor %q\n", out.NextCursor)
		}
		out.EstimatedTokens, out.Budget = est, lim
		return view[ListOutput]{Out: out, Text: b.String()}
	})
}

func nonEmptyList(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// mimeOf is the MIME type of a source's content.
func mimeOf(f doc.Format) string {
	if f == doc.FormatMarkdown {
		return "text/markdown"
	}
	return "text/plain"
}

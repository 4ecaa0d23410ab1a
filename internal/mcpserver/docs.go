package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

func (s *Server) addGetTool() {
	addTool(s, s.def(ToolGet), s.get)
	addTool(s, s.def(ToolList), s.list)
}

func (s *Server) get(ctx context.Context, req *mcp.CallToolRequest, in tools.GetInput) (*mcp.CallToolResult, tools.GetOutput, error) {
	limit := s.limits.Cap
	if in.MaxTokens != 0 {
		if in.MaxTokens < 500 || in.MaxTokens > s.limits.Cap {
			return nil, tools.GetOutput{}, fmt.Errorf("maxTokens: got %d; give a whole number from 500 to %d", in.MaxTokens, s.limits.Cap)
		}
		limit = in.MaxTokens
	}
	args := tools.HashOf(ToolGet, in.Source, in.Section)
	version := ""
	if in.Cursor != "" {
		st, err := s.cursors.Open(in.Cursor, ToolGet, args)
		if err != nil {
			return nil, tools.GetOutput{}, err
		}
		in.Offset, version = st.Offset, st.Seen
	}
	g, err := s.tools.Get(ctx, in)
	if in.Cursor != "" && (errors.Is(err, tools.ErrPastEnd) || err == nil && g.Version != version) {
		return nil, tools.GetOutput{}, tools.ErrCursorStale
	}
	if err != nil {
		return nil, tools.GetOutput{}, err
	}
	full := budget.Shape{Items: 1, Text: budget.TextBound([]int{tools.Runes(g.Rest())}, limit)}
	at := s.cursors.Now()
	return fit(s, req, limit, full, 1, func(sh budget.Shape, est int) view[tools.GetOutput] {
		body := ""
		if sh.Items > 0 {
			body = g.Page(sh.Text)
		}
		cursor := ""
		if len(body) < len(g.Rest()) {
			cursor = s.cursors.Issue(tools.CursorState{Tool: ToolGet, Args: args, Offset: g.Offset + len(body), Seen: g.Version}, at)
		}
		out := g.Output(body, cursor)
		out.EstimatedTokens, out.Budget = est, limit
		var b strings.Builder
		fmt.Fprintf(&b, "%s", g.Source.URI)
		if g.Section != "" {
			fmt.Fprintf(&b, " § %s", g.Section)
		}
		fmt.Fprintf(&b, " (lines %d-%d, bytes %d-%d of %d)\n\n%s", out.Lines[0], out.Lines[1], g.Offset, g.Offset+len(body), len(g.Content), body)
		if !out.Complete {
			fmt.Fprintf(&b, "\n[continues: call sagasu_get again with the same source and section and cursor %q]\n", out.NextCursor)
		}
		return view[tools.GetOutput]{Out: out, Text: b.String(), Links: []*mcp.ResourceLink{{URI: out.Resource, Name: g.Source.URI, MIMEType: tools.MIME(g.Source.Format)}}}
	})
}

func (s *Server) list(ctx context.Context, req *mcp.CallToolRequest, in tools.ListInput) (*mcp.CallToolResult, tools.ListOutput, error) {
	limit := in.Limit
	if limit == 0 {
		limit = 50
	}
	args := tools.HashOf(ToolList, in.Type, in.Glob, limit)
	in.Unbounded = false
	if in.Cursor != "" {
		st, err := s.cursors.Open(in.Cursor, ToolList, args)
		if err != nil {
			return nil, tools.ListOutput{}, err
		}
		in.Offset = st.Offset
	}
	res, err := s.tools.List(ctx, in)
	if err != nil {
		return nil, tools.ListOutput{}, err
	}
	lim := s.limits.Cap
	at := s.cursors.Now()
	return fit(s, req, lim, budget.Shape{Items: len(res.Sources)}, 0, func(sh budget.Shape, est int) view[tools.ListOutput] {
		cursor := ""
		if res.More || sh.Items < len(res.Sources) {
			cursor = s.cursors.Issue(tools.CursorState{Tool: ToolList, Args: args, Offset: res.Offset + sh.Items}, at)
		}
		out := res.Output(sh.Items, cursor)
		out.EstimatedTokens, out.Budget = est, lim
		var b strings.Builder
		fmt.Fprintf(&b, "%d sources, %d chunks in the index", out.Index.Sources, out.Index.Chunks)
		if out.Index.Sources == 0 {
			b.WriteString(": index documents with sagasu_index")
		}
		b.WriteString("\n")
		for _, r := range out.Roots {
			b.WriteString(tools.DescribeRoot(r) + "\n")
		}
		for _, src := range out.Sources {
			fmt.Fprintf(&b, "%s  %s  %s (%d chunks)\n", src.ID, src.URI, src.Title, src.Chunks)
		}
		if cursor != "" {
			fmt.Fprintf(&b, "More: call again with cursor %q\n", cursor)
		}
		return view[tools.ListOutput]{Out: out, Text: b.String()}
	})
}

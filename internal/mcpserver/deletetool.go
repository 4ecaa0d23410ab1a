package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// ToolDelete is the name of the tool that removes sources.
const ToolDelete = tools.NameDelete

func (s *Server) addDeleteTool() {
	addTool(s, s.def(ToolDelete), s.deleteSources)
}

func (s *Server) deleteSources(ctx context.Context, req *mcp.CallToolRequest, in tools.DeleteInput) (*mcp.CallToolResult, tools.DeleteOutput, error) {
	in.InsideRoots = true
	res, err := s.tools.Delete(ctx, in)
	if err != nil {
		return nil, tools.DeleteOutput{}, err
	}
	limit := s.limits.Cap
	return fit(s, req, limit, budget.Shape{Items: len(res.Sources)}, 0, func(sh budget.Shape, est int) view[tools.DeleteOutput] {
		out := res.Page(sh.Items)
		out.Measured = tools.Measured{EstimatedTokens: est, Budget: limit}
		var b strings.Builder
		if out.DryRun {
			fmt.Fprintf(&b, "Dry run: %d source(s) would be deleted; nothing was.\n", len(res.Sources))
		} else {
			fmt.Fprintf(&b, "Deleted %d source(s).\n", out.Deleted)
		}
		for _, src := range out.Sources {
			fmt.Fprintf(&b, "%s  %s  %s\n", src.ID, src.URI, src.Title)
		}
		if out.OmittedSources > 0 {
			fmt.Fprintf(&b, "… and %d more (left out to fit the budget).\n", out.OmittedSources)
		}
		fmt.Fprintf(&b, "The index holds %d sources, %d chunks.\n", out.Index.Sources, out.Index.Chunks)
		return view[tools.DeleteOutput]{Out: out, Text: b.String()}
	})
}

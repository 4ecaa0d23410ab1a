package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

func (s *Server) addIndexTool() {
	addTool(s, s.def(ToolIndex), s.indexDocs)
}

func (s *Server) indexDocs(ctx context.Context, req *mcp.CallToolRequest, in tools.IndexInput) (*mcp.CallToolResult, tools.IndexOutput, error) {
	res, err := s.tools.Index(ctx, in, func(p tools.IndexProgress) { s.notifyProgress(ctx, req, p) })
	if err != nil {
		return nil, tools.IndexOutput{}, err
	}
	limit := s.limits.Cap
	return fit(s, req, limit, budget.Shape{Items: len(res.Skipped)}, 0, func(sh budget.Shape, est int) view[tools.IndexOutput] {
		out := res.Output(sh.Items)
		out.Measured = tools.Measured{EstimatedTokens: est, Budget: limit}
		var b strings.Builder
		fmt.Fprintf(&b, "Indexed %d source(s): %d added, %d updated, %d unchanged; %d chunks written, %.1f MB read in %.0f ms.\n",
			res.Added+res.Updated+res.Unchanged, res.Added, res.Updated, res.Unchanged, res.Chunks, float64(res.Bytes)/1e6, out.TookMs)
		fmt.Fprintf(&b, "The index holds %d sources, %d chunks.\n", res.Index.Sources, res.Index.Chunks)
		for _, sk := range out.Skipped {
			fmt.Fprintf(&b, "skipped %s (%s) %s\n", sk.Path, sk.Reason, sk.Error)
		}
		if out.OmittedSkipped > 0 {
			fmt.Fprintf(&b, "… and %d more skipped files.\n", out.OmittedSkipped)
		}
		return view[tools.IndexOutput]{Out: out, Text: b.String()}
	})
}

// notifyProgress sends a progress notification when the client asked for
// them.
func (s *Server) notifyProgress(ctx context.Context, req *mcp.CallToolRequest, p tools.IndexProgress) {
	token := req.Params.GetProgressToken()
	if token != nil && req.Session != nil {
		// The chunks done of the chunks known, which only grows (MCP wants
		// progress to increase); the total once every source is read.
		done, total := p.Work()
		n := &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(done), Message: p.String()}
		if !p.Reading || p.Final {
			n.Total = float64(total)
		}
		if err := req.Session.NotifyProgress(ctx, n); err != nil {
			s.log.Debug("progress notification not sent", "err", err)
		}
	}
}

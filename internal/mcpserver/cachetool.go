package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

func (s *Server) readCache(ctx context.Context, req *mcp.CallToolRequest, in tools.ReadCacheInput) (*mcp.CallToolResult, tools.ReadCacheOutput, error) {
	c, err := s.tools.ReadCache(ctx, in)
	if err != nil {
		return nil, tools.ReadCacheOutput{}, err
	}
	lim := s.limits.Cap
	return fit(s, req, lim, budget.Shape{Items: len(c.Records), Text: budget.TextBound(c.TextLengths(), lim)}, 200, func(sh budget.Shape, est int) view[tools.ReadCacheOutput] {
		out := c.Output(sh.Items, sh.Text)
		out.Measured = tools.Measured{EstimatedTokens: est, Budget: lim}
		var b strings.Builder
		fmt.Fprintf(&b, "Agent cache %s: %d record(s)\n", c.Dir, len(c.Records))
		for i, cr := range out.Records {
			score := ""
			if c.Records[i].Score != nil {
				score = fmt.Sprintf(" score %.2f", *c.Records[i].Score)
			}
			fmt.Fprintf(&b, "- %s %s%s: %s | %s | %s\n", cr.Timestamp, cr.ID, score, cr.Goal, cr.Query, cr.Summary)
			if cr.Data != nil {
				raw, _ := json.Marshal(cr.Data)
				fmt.Fprintf(&b, "  data: %s\n", raw)
			}
		}
		if out.SummaryMarkdown != "" {
			b.WriteString("\n" + out.SummaryMarkdown + "\n")
		}
		if out.OmittedRecords > 0 {
			fmt.Fprintf(&b, "%d more record(s) did not fit: ask with a smaller limit, or one by id.\n", out.OmittedRecords)
		}
		return view[tools.ReadCacheOutput]{Out: out, Text: b.String()}
	})
}

package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// MaxQueryK bounds sagasu_query's k: a page of results an agent can read.
const MaxQueryK = tools.MaxQueryK

func (s *Server) addQueryTool() {
	addTool(s, s.def(ToolQuery), s.query)
}

func (s *Server) query(ctx context.Context, req *mcp.CallToolRequest, in tools.QueryInput) (*mcp.CallToolResult, tools.QueryOutput, error) {
	args := in.PageArgs()
	in.MaxK, in.MMR = 0, 0
	res, err := ranked(s, ToolQuery, in.Cursor, args, func(offset int) (tools.QueryResult, error) {
		in.Offset = offset
		return s.tools.Query(ctx, in)
	}, func(r tools.QueryResult) tools.Ranking { return r.Ranking })
	if err != nil {
		return nil, tools.QueryOutput{}, err
	}
	limit := s.limits.Cap
	full := budget.Shape{Items: len(res.Hits), Text: budget.TextBound(tools.TextLengths(res.Hits), limit)}
	at := s.cursors.Now()
	return fit(s, req, limit, full, 300, func(sh budget.Shape, est int) view[tools.QueryOutput] {
		out := res.Output(sh.Items, sh.Text, s.next(res.Ranking, ToolQuery, args, sh.Items, at))
		out.EstimatedTokens, out.Budget = est, limit
		var b strings.Builder
		if len(out.Results) == 0 && out.OmittedResults == 0 {
			fmt.Fprintf(&b, "No results for %q (%s).\n", out.Query, out.Mode)
		} else {
			fmt.Fprintf(&b, "Results %d-%d for %q (%s, %.1f ms)\n", res.Offset+1, res.Offset+len(out.Results), out.Query, out.Mode, out.TookMs)
		}
		writeResults(&b, out.Results)
		footer(&b, out.OmittedResults, out.Truncated, out.NextCursor)
		return view[tools.QueryOutput]{Out: out, Text: b.String(), Links: resultLinks(out.Results)}
	})
}

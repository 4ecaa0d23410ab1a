package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// ToolLoop is the autonomous loop (the tools package owns the name).
const ToolLoop = tools.NameLoop

// runLoop answers sagasu_loop: the loop runs to its end within the call
// (at most tools.MaxLoopIterations lexical searches, each a fraction of a
// second), and the answer — iterations in brief, merged results — is
// fitted to the cap like a stage's.
func (s *Server) runLoop(ctx context.Context, req *mcp.CallToolRequest, in tools.LoopInput) (*mcp.CallToolResult, tools.LoopOutput, error) {
	in.SessionID = s.sessionOf(req, in.SessionID, in.Goal)
	res, err := s.tools.RunLoop(ctx, in)
	if err != nil {
		return nil, tools.LoopOutput{}, err
	}
	limit := s.limits.Cap
	full := budget.Shape{Items: len(res.Hits), Text: budget.TextBound(res.TextLengths(), limit)}
	return fit(s, req, limit, full, minFullRunes, func(sh budget.Shape, est int) view[tools.LoopOutput] {
		out := res.Output(sh.Items, sh.Text)
		out.EstimatedTokens, out.Budget = est, limit
		var b strings.Builder
		fmt.Fprintf(&b, "Loop for goal %q: %d iteration(s), confidence %.2f\nsession %s (record %s)\n", out.Goal, len(out.Iterations), out.Confidence,
			out.SessionID, orDash(out.SessionRecord))
		for i, it := range out.Iterations {
			fmt.Fprintf(&b, "%d. %q: %d new, confidence %.2f, coverage %.2f → %s", i+1, it.Query, it.NewResults, it.Confidence, it.Coverage, it.Action)
			if it.RefinedQuery != "" {
				fmt.Fprintf(&b, " (%s → %q)", it.Strategy, it.RefinedQuery)
			}
			b.WriteByte('\n')
		}
		if len(out.Missing) > 0 {
			fmt.Fprintf(&b, "missing: %s\n", strings.Join(out.Missing, "; "))
		}
		fmt.Fprintf(&b, "stopped: %s\n", out.Stopped)
		writeResults(&b, out.Results)
		footer(&b, out.OmittedResults, out.Truncated, "")
		return view[tools.LoopOutput]{Out: out, Text: b.String(), Links: resultLinks(out.Results)}
	})
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

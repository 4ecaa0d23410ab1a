package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// Detail levels of sagasu_search (the tools package owns them).
const (
	ModeSummary  = tools.ModeSummary
	ModeDetailed = tools.ModeDetailed
	ModeFull     = tools.ModeFull
)

// MaxSearchK bounds sagasu_search's k.
const MaxSearchK = tools.MaxSearchK

// Snippet lengths of detailed mode, in runes: the least a snippet is cut to
// before results are dropped, and the least a whole chunk is cut to in full
// mode.
const (
	minSnippetRunes = 160
	minFullRunes    = 400
)

func (s *Server) addSearchTool() {
	addTool(s, s.def(ToolSearch), s.search)
}

func (s *Server) search(ctx context.Context, req *mcp.CallToolRequest, in tools.SearchInput) (*mcp.CallToolResult, tools.SearchOutput, error) {
	st, err := in.Settings()
	if err != nil {
		return nil, tools.SearchOutput{}, err
	}
	in.SessionID = s.sessionOf(req, in.SessionID, in.Goal)
	args := tools.HashOf(ToolSearch, in.Goal, in.Query, st.Context, st.K, st.Hybrid)
	res, err := ranked(s, ToolSearch, in.Cursor, args, func(offset int) (tools.SearchResult, error) {
		in.Offset = offset
		return s.tools.Search(ctx, in)
	}, func(r tools.SearchResult) tools.Ranking { return r.Ranking })
	if err != nil {
		return nil, tools.SearchOutput{}, err
	}
	mode := st.Mode
	limit := s.limits.Mode(mode)
	full := budget.Shape{Items: len(res.Hits)}
	minText := 0
	switch mode {
	case ModeDetailed:
		full.Text, minText = tools.SnippetRunes, minSnippetRunes
	case ModeFull:
		full.Text, minText = budget.TextBound(tools.TextLengths(res.Hits), limit), minFullRunes
	}
	at := s.cursors.Now()
	return fit(s, req, limit, full, minText, func(sh budget.Shape, est int) view[tools.SearchOutput] {
		out := res.Output(sh.Items, sh.Text, s.next(res.Ranking, ToolSearch, args, sh.Items, at))
		if out.Debug != nil {
			out.Debug.Tokenizer, out.Debug.Margin = s.counter.Encoding(), s.counter.Margin()
		}
		out.EstimatedTokens, out.Budget = est, limit
		return view[tools.SearchOutput]{Out: out, Text: searchText(out), Links: resultLinks(out.Results)}
	})
}

// text renders a sagasu_search answer.
func searchText(o tools.SearchOutput) string {
	var b strings.Builder
	c := o.Summary.CoverageStatus
	fmt.Fprintf(&b, "Goal: %s\nQuery: %s (%s mode)\n", o.Goal, o.Query, o.Mode)
	fmt.Fprintf(&b, "%d result(s), scores %g-%g (avg %g); coverage %s: %.2f, confidence %.2f\n",
		o.Summary.TotalResults, o.Summary.MinScore, o.Summary.MaxScore, o.Summary.AvgScore, c.Status, c.Coverage, c.Confidence)
	if len(c.FoundAspects) > 0 {
		fmt.Fprintf(&b, "found: %s\n", strings.Join(c.FoundAspects, "; "))
	}
	if len(c.MissingAspects) > 0 {
		fmt.Fprintf(&b, "missing: %s\n", strings.Join(c.MissingAspects, "; "))
	}
	if len(o.Summary.TopTopics) > 0 {
		fmt.Fprintf(&b, "topics: %s\n", strings.Join(o.Summary.TopTopics, "; "))
	}
	fmt.Fprintf(&b, "next: %s — %s", o.PrimaryAction.Action, o.PrimaryAction.Reason)
	if o.PrimaryAction.SuggestedTool != "" {
		fmt.Fprintf(&b, " (%s)", o.PrimaryAction.SuggestedTool)
	}
	b.WriteByte('\n')
	for _, n := range o.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	for _, r := range o.TopResults {
		fmt.Fprintf(&b, "%d. %s — %s (score %g, %s)\n", r.Rank, r.URI, r.Heading, r.Score, r.Resource)
	}
	writeResults(&b, o.Results)
	for _, h := range o.Hints {
		fmt.Fprintf(&b, "hint: %s — %s\n", h.Action, h.Reason)
	}
	footer(&b, o.OmittedResults, o.Truncated, o.NextCursor)
	return b.String()
}

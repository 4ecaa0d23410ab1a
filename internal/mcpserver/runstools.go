package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/clip"
	"github.com/sagasu-dev/sagasu/internal/runs"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// RunsList is sagasu_runs_list's answer.
type RunsList struct {
	runs.ListOutput
	OmittedRuns int `json:"omittedRuns,omitempty"`
	tools.Measured
}

// RunsDeleted is sagasu_runs_delete's answer.
type RunsDeleted struct {
	runs.DeleteOutput
	tools.Measured
}

// RunsPruned is sagasu_runs_prune's answer.
type RunsPruned struct {
	runs.PruneOutput
	OmittedRuns int `json:"omittedRuns,omitempty" jsonschema:"runs pruned but left out of this list to fit the budget"`
	tools.Measured
}

// RunExport is sagasu_runs_export's answer.
type RunExport struct {
	runs.ExportOutput
	// Truncated says the content was cut to fit the budget: `sagasu agent
	// export` or `sagasu chat export` writes it whole.
	Truncated bool `json:"truncated,omitempty"`
	tools.Measured
}

// runOps are the lifecycle operations: the configured ones, or the bare
// run log of the toolset's store.
func (s *Server) runOps() *runs.Ops {
	if s.opt.Runs != nil {
		return s.opt.Runs
	}
	return runs.New(runs.Options{Store: s.store})
}

func (s *Server) addRunTools() {
	ops := s.runOps()
	defs := runs.Defs()
	addTool(s, defs[0], func(ctx context.Context, req *mcp.CallToolRequest, in runs.ListInput) (*mcp.CallToolResult, RunsList, error) {
		res, err := ops.List(ctx, in)
		if err != nil {
			return nil, RunsList{}, err
		}
		limit := s.limits.Mode(ModeSummary)
		return fit(s, req, limit, budget.Shape{Items: len(res.Runs)}, 0, func(sh budget.Shape, est int) view[RunsList] {
			out := RunsList{ListOutput: runs.ListOutput{Runs: res.Runs[:sh.Items]}, OmittedRuns: len(res.Runs) - sh.Items}
			out.Measured = tools.Measured{EstimatedTokens: est, Budget: limit}
			return view[RunsList]{Out: out, Text: headersText(fmt.Sprintf("%d runs", len(res.Runs)), out.Runs, out.OmittedRuns)}
		})
	})
	addTool(s, defs[1], func(ctx context.Context, req *mcp.CallToolRequest, in runs.DeleteInput) (*mcp.CallToolResult, RunsDeleted, error) {
		res, err := ops.Delete(ctx, in)
		if err != nil {
			return nil, RunsDeleted{}, err
		}
		limit := s.limits.Cap
		return fit(s, req, limit, budget.Shape{}, 0, func(_ budget.Shape, est int) view[RunsDeleted] {
			out := RunsDeleted{DeleteOutput: res, Measured: tools.Measured{EstimatedTokens: est, Budget: limit}}
			return view[RunsDeleted]{Out: out, Text: headersText(fmt.Sprintf("Deleted %d runs", len(res.Deleted)), res.Deleted, 0)}
		})
	})
	addTool(s, defs[2], func(ctx context.Context, req *mcp.CallToolRequest, in runs.PruneInput) (*mcp.CallToolResult, RunsPruned, error) {
		res, err := ops.Prune(ctx, in)
		if err != nil {
			return nil, RunsPruned{}, err
		}
		limit := s.limits.Mode(ModeSummary)
		return fit(s, req, limit, budget.Shape{Items: len(res.Pruned)}, 0, func(sh budget.Shape, est int) view[RunsPruned] {
			out := RunsPruned{PruneOutput: res, OmittedRuns: len(res.Pruned) - sh.Items}
			out.Pruned = res.Pruned[:sh.Items]
			out.Measured = tools.Measured{EstimatedTokens: est, Budget: limit}
			verb := "Deleted"
			if res.DryRun {
				verb = "Dry run: would delete"
			}
			return view[RunsPruned]{Out: out, Text: headersText(fmt.Sprintf("%s %d runs (%s)", verb, len(res.Pruned), res.Rule), out.Pruned, out.OmittedRuns)}
		})
	})
	addTool(s, defs[3], func(ctx context.Context, req *mcp.CallToolRequest, in runs.ExportInput) (*mcp.CallToolResult, RunExport, error) {
		res, err := ops.Export(ctx, in)
		if err != nil {
			return nil, RunExport{}, err
		}
		limit := s.limits.Cap
		n := utf8.RuneCountInString(res.Content)
		// The content goes once, in the structured answer; the text says
		// what it is.
		return fit(s, req, limit, budget.Shape{Text: n}, 200, func(sh budget.Shape, est int) view[RunExport] {
			out := RunExport{ExportOutput: res, Truncated: sh.Text < n}
			out.Content = clip.Runes(res.Content, sh.Text)
			out.Measured = tools.Measured{EstimatedTokens: est, Budget: limit}
			text := fmt.Sprintf("Run %s exported as %s (%s, %d characters) in structuredContent.content.\n", res.ID, res.Format, res.Filename, n)
			if out.Truncated {
				text += "It was cut to fit the budget: `sagasu agent export` or `sagasu chat export` writes it whole.\n"
			}
			return view[RunExport]{Out: out, Text: text}
		})
	})
}

// headersText lists runs for people and models.
func headersText(title string, hs []runs.Header, omitted int) string {
	var b strings.Builder
	b.WriteString(title + "\n")
	for _, h := range hs {
		fmt.Fprintf(&b, "%s  %s  %-8s %s  %s\n", h.ID, h.Kind, h.Status, h.Updated.Format("2006-01-02 15:04"), clip.Runes(h.Title, 80))
	}
	if omitted > 0 {
		fmt.Fprintf(&b, "… and %d more (left out to fit the budget).\n", omitted)
	}
	return b.String()
}

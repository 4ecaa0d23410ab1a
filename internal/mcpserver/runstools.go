package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

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

// runOps are the run lifecycle operations over ops (nil: listed, not
// callable).
func runOps(ops *runs.Ops) []tools.Op {
	defs := runs.Defs()
	if ops == nil {
		return []tools.Op{
			tools.Bind[runs.ListInput](defs[0], tools.GroupRuns, tools.OutputOf[RunsList](), nil),
			tools.Bind[runs.DeleteInput](defs[1], tools.GroupRuns, tools.OutputOf[RunsDeleted](), nil),
			tools.Bind[runs.PruneInput](defs[2], tools.GroupRuns, tools.OutputOf[RunsPruned](), nil),
			tools.Bind[runs.ExportInput](defs[3], tools.GroupRuns, tools.OutputOf[RunExport](), nil),
		}
	}
	return []tools.Op{
		tools.Bind(defs[0], tools.GroupRuns, tools.OutputOf[RunsList](), func(ctx context.Context, env *tools.Env, in runs.ListInput) (tools.Reply, error) {
			res, err := ops.List(ctx, in)
			if err != nil {
				return tools.Reply{}, err
			}
			return tools.Fit(env, env.Budget().Mode(ModeSummary), budget.Shape{Items: len(res.Runs)}, 0, func(sh budget.Shape, est int) tools.View[RunsList] {
				out := RunsList{ListOutput: runs.ListOutput{Runs: res.Runs[:sh.Items]}, OmittedRuns: len(res.Runs) - sh.Items}
				out.EstimatedTokens = est
				return tools.View[RunsList]{Out: out, Text: headersText(tools.Count(len(res.Runs), "run"), out.Runs, out.OmittedRuns)}
			})
		}),
		tools.Bind(defs[1], tools.GroupRuns, tools.OutputOf[RunsDeleted](), func(ctx context.Context, env *tools.Env, in runs.DeleteInput) (tools.Reply, error) {
			res, err := ops.Delete(ctx, in)
			if err != nil {
				return tools.Reply{}, err
			}
			return tools.Fit(env, env.Budget().Cap, budget.Shape{}, 0, func(_ budget.Shape, est int) tools.View[RunsDeleted] {
				out := RunsDeleted{DeleteOutput: res, Measured: tools.Measured{EstimatedTokens: est}}
				return tools.View[RunsDeleted]{Out: out, Text: headersText("Deleted "+tools.Count(len(res.Deleted), "run"), res.Deleted, 0)}
			})
		}),
		tools.Bind(defs[2], tools.GroupRuns, tools.OutputOf[RunsPruned](), func(ctx context.Context, env *tools.Env, in runs.PruneInput) (tools.Reply, error) {
			res, err := ops.Prune(ctx, in)
			if err != nil {
				return tools.Reply{}, err
			}
			return tools.Fit(env, env.Budget().Mode(ModeSummary), budget.Shape{Items: len(res.Pruned)}, 0, func(sh budget.Shape, est int) tools.View[RunsPruned] {
				out := RunsPruned{PruneOutput: res, OmittedRuns: len(res.Pruned) - sh.Items}
				out.Pruned = res.Pruned[:sh.Items]
				out.EstimatedTokens = est
				verb := "Deleted"
				if res.DryRun {
					verb = "Dry run: would delete"
				}
				return tools.View[RunsPruned]{Out: out, Text: headersText(fmt.Sprintf("%s %s (%s)", verb, tools.Count(len(res.Pruned), "run"), res.Rule), out.Pruned, out.OmittedRuns)}
			})
		}),
		tools.Bind(defs[3], tools.GroupRuns, tools.OutputOf[RunExport](), func(ctx context.Context, env *tools.Env, in runs.ExportInput) (tools.Reply, error) {
			res, err := ops.Export(ctx, in)
			if err != nil {
				return tools.Reply{}, err
			}
			n := utf8.RuneCountInString(res.Content)
			// The content goes once, in the structured answer; the text says
			// what it is.
			return tools.Fit(env, env.Budget().Cap, budget.Shape{Text: n}, 200, func(sh budget.Shape, est int) tools.View[RunExport] {
				out := RunExport{ExportOutput: res, Truncated: sh.Text < n}
				out.Content = clip.Runes(res.Content, sh.Text)
				out.EstimatedTokens = est
				text := fmt.Sprintf("Run %s exported as %s (%s, %d characters) in structuredContent.content.\n", res.ID, res.Format, res.Filename, n)
				if out.Truncated {
					text += "It was cut to fit the budget: `sagasu agent export` or `sagasu chat export` writes it whole.\n"
				}
				return tools.View[RunExport]{Out: out, Text: text}
			})
		}),
	}
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

package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

func (s *Server) addLoopTools() {
	addTool(s, s.def(ToolEvaluate), s.evaluate)
	addTool(s, s.def(ToolRefine), s.refine)
	addTool(s, s.def(ToolExecuteStage), s.executeStage)
	addTool(s, s.def(ToolLoop), s.runLoop)
	addTool(s, s.def(ToolReadCache), s.readCache)
}

func (s *Server) evaluate(ctx context.Context, req *mcp.CallToolRequest, in tools.EvaluateInput) (*mcp.CallToolResult, tools.EvaluateOutput, error) {
	in.SessionID = s.sessionOf(req, in.SessionID, in.Goal)
	ev, err := s.tools.Evaluate(ctx, in)
	if err != nil {
		return nil, tools.EvaluateOutput{}, err
	}
	limit := s.limits.Cap
	return fit(s, req, limit, budget.Shape{Items: len(ev.Aspects)}, 0, func(sh budget.Shape, est int) view[tools.EvaluateOutput] {
		out := tools.EvaluateOutputOf(ev, sh.Items)
		out.SessionID = in.SessionID
		out.Measured = tools.Measured{EstimatedTokens: est, Budget: limit}
		var b strings.Builder
		fmt.Fprintf(&b, "Evaluation of %q for goal %q (iteration %d)\nconfidence %.2f · coverage %.2f · relevance %.2f\n",
			out.Query, out.Goal, out.Iteration, out.Confidence, out.Coverage, out.Relevance)
		if len(out.FoundAspects) > 0 {
			fmt.Fprintf(&b, "found: %s\n", strings.Join(out.FoundAspects, "; "))
		}
		if len(out.MissingAspects) > 0 {
			fmt.Fprintf(&b, "missing: %s\n", strings.Join(out.MissingAspects, "; "))
		}
		for _, a := range out.Aspects {
			if a.Evidence != nil {
				fmt.Fprintf(&b, "- %s (%.2f): %s — %s\n", a.Name, a.Score, a.Evidence.URI, a.Evidence.Line)
			}
		}
		fmt.Fprintf(&b, "shouldContinue: %t → %s: %s\n", out.ShouldContinue, out.Recommendations.Action, out.Recommendations.Reason)
		return view[tools.EvaluateOutput]{Out: out, Text: b.String()}
	})
}

func (s *Server) refine(ctx context.Context, req *mcp.CallToolRequest, in tools.RefineInput) (*mcp.CallToolResult, tools.RefineOutput, error) {
	in.SessionID = s.sessionOf(req, in.SessionID, in.Goal)
	r, err := s.tools.Refine(ctx, in)
	if err != nil {
		return nil, tools.RefineOutput{}, err
	}
	limit := s.limits.Cap
	return fit(s, req, limit, budget.Shape{Items: len(r.Alternatives)}, 0, func(sh budget.Shape, est int) view[tools.RefineOutput] {
		out := tools.RefineOutputOf(in, r, sh.Items)
		out.Measured = tools.Measured{EstimatedTokens: est, Budget: limit}
		var b strings.Builder
		fmt.Fprintf(&b, "Refined query (%s): %s\nreasoning: %s\n", out.Strategy, out.RefinedQuery, out.Reasoning)
		for _, a := range out.Alternatives {
			fmt.Fprintf(&b, "- alternative: %s (%s)\n", a.Query, a.Purpose)
		}
		return view[tools.RefineOutput]{Out: out, Text: b.String()}
	})
}

func (s *Server) executeStage(ctx context.Context, req *mcp.CallToolRequest, in tools.StageInput) (*mcp.CallToolResult, tools.StageOutput, error) {
	res, err := s.tools.PlanStage(ctx, in)
	if err != nil {
		return nil, tools.StageOutput{}, err
	}
	var lengths []int
	for _, r := range res.Results {
		lengths = append(lengths, tools.Runes(r.Text))
	}
	limit := s.limits.Cap
	full := budget.Shape{Items: len(res.Results), Text: budget.TextBound(lengths, limit)}
	shown := res.Plan
	return fit(s, req, limit, full, minFullRunes, func(sh budget.Shape, est int) view[tools.StageOutput] {
		out := res.Output(sh.Items, sh.Text)
		out.EstimatedTokens, out.Budget = est, limit
		var b strings.Builder
		fmt.Fprintf(&b, "Plan %s, stage %d (index %d): %s\nquery %q · score %.2f · successful %t\nfound: %s\nmissing: %s\nnext: %s (%s)\n",
			out.PlanID, out.StageNumber, out.StageIndex, out.Description, out.Query, out.Evaluation.Score, out.Evaluation.IsSuccessful,
			strings.Join(out.Evaluation.FoundKeywords, ", "), strings.Join(out.Evaluation.MissingKeywords, ", "),
			out.AgentGuidance.NextAction, strings.Join(out.AgentGuidance.SuggestedTools, ", "))
		if shown != nil {
			for i, st := range shown.Stages {
				fmt.Fprintf(&b, "plan stage %d (index %d): %s — query %q\n", st.StageNumber, i, st.Description, st.Query)
			}
		}
		writeResults(&b, out.Results)
		footer(&b, out.OmittedResults, out.Truncated, "")
		return view[tools.StageOutput]{Out: out, Text: b.String(), Links: resultLinks(out.Results)}
	})
}

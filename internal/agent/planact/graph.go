package planact

import (
	"context"
	"fmt"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/graph"
)

// graph builds the seed's graph:
//
//	START → planner_init → executor_dispatch → executor_run →
//	executor_process_result → memory_update → planner_evaluate →
//	(executor_dispatch | planner_replan → executor_dispatch | finish) → END
//
// The conditional edges go through named branches, so a routing table
// (testdata/planact.json has the built-in one) can replace them.
func (a *Agent) graph() *graph.Graph[State] {
	g := graph.New[State]()
	g.AddNode(NodePlannerInit, a.plannerInit)
	g.AddNode(NodeDispatch, a.dispatch)
	g.AddNode(NodeRun, a.run)
	g.AddNode(NodeProcessResult, a.processResult)
	g.AddNode(NodeMemoryUpdate, a.memoryUpdate)
	g.AddNode(NodePlannerEvaluate, a.plannerEvaluate)
	g.AddNode(NodePlannerReplan, a.plannerReplan)
	g.AddNode(NodeFinish, a.finish)

	g.RegisterBranch(BranchAfterPlan, afterPlan)
	g.RegisterBranch(BranchAfterDispatch, afterDispatch)
	g.RegisterBranch(BranchAfterEvaluate, afterEvaluate)
	g.RegisterBranch(BranchAfterReplan, afterReplan)

	g.AddEdge(graph.START, NodePlannerInit)
	g.AddConditionalEdges(NodePlannerInit, BranchAfterPlan, map[string]string{
		"plan": NodeDispatch, "retry": NodePlannerInit, "finish": NodeFinish})
	g.AddConditionalEdges(NodeDispatch, BranchAfterDispatch, map[string]string{
		"call": NodeRun, "text": NodeProcessResult})
	g.AddEdge(NodeRun, NodeProcessResult)
	g.AddEdge(NodeProcessResult, NodeMemoryUpdate)
	g.AddEdge(NodeMemoryUpdate, NodePlannerEvaluate)
	g.AddConditionalEdges(NodePlannerEvaluate, BranchAfterEvaluate, map[string]string{
		DecideContinue: NodeDispatch, DecideNext: NodeDispatch, DecideReplan: NodePlannerReplan,
		DecideDone: NodeFinish, DecideFail: NodeFinish, DecideRetry: NodePlannerEvaluate})
	g.AddConditionalEdges(NodePlannerReplan, BranchAfterReplan, map[string]string{
		"plan": NodeDispatch, "retry": NodePlannerReplan, "finish": NodeFinish})
	g.AddEdge(NodeFinish, graph.END)
	g.SetFingerprint(fingerprint)
	// A checkpoint holds the passages' chunk IDs: a resumed run reads
	// their text back from the index first.
	g.SetRestore(func(ctx context.Context, s State) (State, error) {
		return s, s.Passages.Restore(ctx, a.loader())
	})
	return g
}

// afterPlan routes after planner_init and planner_replan: to the executor
// when there is a step to run, to finish when the run has an outcome, and
// back to the planner when its reply could not be read.
func afterPlan(s State) string {
	switch {
	case s.Outcome != "" || s.Finished:
		return "finish"
	case s.current() != nil:
		return "plan"
	}
	return "retry"
}

// afterReplan routes after planner_replan: to the executor with the new
// plan, to finish when the run has an outcome, and back to the planner
// when its reply could not be read (the decision is still "replan").
func afterReplan(s State) string {
	switch {
	case s.Outcome != "" || s.Finished:
		return "finish"
	case s.Decision == DecideReplan || s.current() == nil:
		return "retry"
	}
	return "plan"
}

// afterDispatch skips executor_run when the executor answered in text.
func afterDispatch(s State) string {
	if s.Pending == nil {
		return "text"
	}
	return "call"
}

// afterEvaluate routes on the planner's decision.
func afterEvaluate(s State) string {
	if s.Decision == "" {
		return DecideRetry
	}
	return s.Decision
}

// fingerprint is what the no-progress guard compares: where the run is in
// its plan, not the text it has seen (memory_update reports new
// observations as progress).
func fingerprint(s State) string {
	var b strings.Builder
	for _, st := range s.Plan {
		fmt.Fprintf(&b, "%s|%s|%s;", st.Text, st.Status, st.Query)
	}
	fmt.Fprintf(&b, "#%d/%d/%t/%t/%s/%t/%s", s.StepIdx, s.Replans, s.NeedsReplan, s.Pending != nil, s.Decision, s.Finished, s.Outcome)
	return b.String()
}

package planact

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/llm"
)

// TestPlannerRepliesAreHeldToSchemas: every planner call asks for its
// reply under a schema (plan or decision), and a plan that ignores the
// bounds, as a small model's did (the same steps over and over, past any
// sensible length), is cut to maxPlanSteps distinct steps, saying so.
func TestPlannerRepliesAreHeldToSchemas(t *testing.T) {
	for _, s := range []*llm.Schema{planSchema, decisionSchema} {
		var v map[string]any
		require.NoError(t, json.Unmarshal(s.Schema, &v), "schema %s", s.Name)
	}
	var long []string
	for i := range 30 {
		long = append(long, fmt.Sprintf("Look up fact %d", i%(maxPlanSteps+3)+1))
	}
	r := roles{
		plan: func(llm.Request) string { return planJSON(long...) },
		execute: func(req llm.Request) llm.Message {
			return callMsg(ToolSearch, map[string]any{"query": strings.TrimPrefix(currentStep(req), "Look up ")})
		},
		evaluate: func(req llm.Request) string {
			if strings.Contains(userText(req), fmt.Sprintf("Step just run: %d.", maxPlanSteps)) {
				return decisionJSON("done", "", "all looked up", "")
			}
			return decisionJSON("next", "found", "", "")
		},
	}
	m := r.model(100)
	kb := &fakeResearch{}
	res, err := newAgent(t, Options{Model: m, Research: kb, Functions: kb}).Run(context.Background(), RunInput{Goal: "Look up every fact"})
	require.NoError(t, err)
	require.Equal(t, OutcomeSuccess, res.Outcome, res.Reason)
	assert.Len(t, res.Plan, maxPlanSteps)
	plans := eventsOf(res.Trace, graph.TypePlan)
	require.NotEmpty(t, plans)
	assert.Contains(t, plans[0].Text, "15 repeated step(s) dropped; 3 step(s) past the cap of 12 dropped")

	byRole := map[string]string{}
	for _, req := range m.Requests() {
		name := ""
		if req.Reply != nil {
			name = req.Reply.Name
		}
		switch req.System {
		case systemPlanner, systemReplanner:
			byRole["plan"] += name + " "
		case systemEvaluator:
			byRole["evaluate"] += name + " "
		case systemExecutor:
			byRole["execute"] += name + " "
		}
	}
	assert.Equal(t, "plan ", byRole["plan"])
	assert.Equal(t, strings.Repeat("decision ", maxPlanSteps), byRole["evaluate"])
	assert.Equal(t, strings.Repeat(" ", maxPlanSteps), byRole["execute"], "the executor calls tools: no reply schema")
}

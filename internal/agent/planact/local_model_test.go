package planact

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/llm/llmtest"
	"github.com/sagasu-dev/sagasu/internal/llm/openai"
)

// TestPlanActWithTheLocalModel runs the agent with the real local chat
// model (SmolLM2-135M behind llama-server) against the real Playwright MCP
// server and the test site. A 135M-parameter model is not expected to find
// the answer; the run must end within its limits with a structured outcome
// (success, or failure or stopped with a reason) — never hang or crash.
func TestPlanActWithTheLocalModel(t *testing.T) {
	base, name := llmtest.LocalModel(t)
	m, home := browser(t, 1500)
	// Progress bounds each call, not the clock (a busy machine is slow).
	model, err := openai.New(openai.Config{BaseURL: base, Model: name, Stall: llmtest.LocalStall})
	require.NoError(t, err)

	ctx := context.Background()
	start := time.Now()
	a := newAgent(t, Options{
		Model: llm.WithRetry(model, llm.RetryOptions{MaxAttempts: 2}), MCP: m, Log: graph.NewMemLog(),
		Limits: graph.Limits{MaxSteps: 60, MaxDuration: 6 * time.Minute, MaxToolCalls: 12},
	})
	res, err := a.Run(ctx, RunInput{Goal: "On the web site at " + home + "/ find out when the reading room opens on Saturdays."})
	require.NoError(t, err, "a model's weakness must end the run with an outcome, not an error")
	took := time.Since(start)
	require.Contains(t, []string{OutcomeSuccess, OutcomeFailure, OutcomeStopped}, res.Outcome)
	if res.Outcome != OutcomeSuccess {
		assert.NotEmpty(t, res.Reason, "a run that did not succeed says why")
	}
	t.Logf("local model %s: %s (%s) in %s, %d steps, %d replans, %d+%d tokens, guard %q",
		name, res.Outcome, res.Reason, took.Round(time.Second), len(res.Steps), res.Replans, res.Usage.In, res.Usage.Out, res.Guard)
}

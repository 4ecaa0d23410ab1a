package openai_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/llm/llmtest"
	"github.com/sagasu-dev/sagasu/internal/llm/openai"
)

// TestLocalModel talks to a real OpenAI-compatible server (the project's
// SmolLM2 behind llama-server) that llmtest.LocalModel names: a chat, a
// stream, and a tool call forced with
// tool_choice "required" whose result goes back for a final text.
func TestLocalModel(t *testing.T) {
	base, name := llmtest.LocalModel(t)
	// Progress bounds each call, not the clock: on a busy machine the
	// same call takes many times longer, and a fixed 2 minutes failed it.
	m, err := openai.New(openai.Config{BaseURL: base, Model: name, APIKey: os.Getenv("OPENAI_API_KEY"), Stall: llmtest.LocalStall})
	require.NoError(t, err)
	model := llm.WithRetry(m, llm.RetryOptions{MaxAttempts: 2})
	ctx := context.Background()
	zero := 0.0

	t.Run("chat", func(t *testing.T) {
		resp, err := model.Chat(ctx, llm.Request{
			System:      "You are a helpful assistant.",
			Messages:    []llm.Message{{Role: llm.RoleUser, Content: "Say hello in one short sentence."}},
			Temperature: &zero, MaxTokens: 32,
		})
		require.NoError(t, err)
		assert.NotEmpty(t, strings.TrimSpace(resp.Message.Content))
		assert.Contains(t, []llm.StopReason{llm.StopEnd, llm.StopLength}, resp.StopReason)
		assert.Positive(t, resp.Usage.OutputTokens)
		t.Logf("chat: %q (%+v, %s)", resp.Message.Content, resp.Usage, resp.StopReason)
	})

	t.Run("stream", func(t *testing.T) {
		var got strings.Builder
		deltas := 0
		resp, err := model.Stream(ctx, llm.Request{
			Messages:    []llm.Message{{Role: llm.RoleUser, Content: "Count from one to five."}},
			Temperature: &zero, MaxTokens: 32,
		}, func(d llm.Delta) error {
			deltas++
			got.WriteString(d.Text)
			return nil
		})
		require.NoError(t, err)
		assert.Greater(t, deltas, 1, "the answer came in pieces")
		assert.Equal(t, got.String(), resp.Message.Content)
		assert.NotEmpty(t, strings.TrimSpace(resp.Message.Content))
		t.Logf("stream: %d deltas, %q (%+v)", deltas, resp.Message.Content, resp.Usage)
	})

	t.Run("tool round trip", func(t *testing.T) {
		weather := llm.Tool{
			Name:        "get_weather",
			Description: "Get the current weather in a city.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"the city name"}},"required":["city"]}`),
		}
		// A 135M model needs the call spelled out: asked "What is the
		// weather in Paris?" it talks about Paris instead (measured).
		msgs := []llm.Message{{Role: llm.RoleUser, Content: "Call get_weather for the city Paris."}}
		resp, err := model.Chat(ctx, llm.Request{
			Messages: msgs, Tools: []llm.Tool{weather}, ToolChoice: llm.ToolChoiceRequired,
			Temperature: &zero, MaxTokens: 128,
		})
		require.NoError(t, err)
		require.NotEmpty(t, resp.Message.ToolCalls, "tool_choice required gave no tool call: %q", resp.Message.Content)
		call := resp.Message.ToolCalls[0]
		_, err = llm.CheckToolCall([]llm.Tool{weather}, call)
		require.NoError(t, err, "arguments %s", call.Arguments)
		assert.NotEmpty(t, call.ID)
		assert.Equal(t, llm.StopToolCalls, resp.StopReason)
		t.Logf("tool call: %s(%s)", call.Name, call.Arguments)

		msgs = append(msgs, resp.Message, llm.Message{
			Role: llm.RoleTool, ToolCallID: call.ID, Name: call.Name, Content: `{"city":"Paris","sky":"sunny","celsius":21}`,
		})
		final, err := model.Chat(ctx, llm.Request{
			Messages: msgs, Tools: []llm.Tool{weather}, ToolChoice: llm.ToolChoiceNone,
			Temperature: &zero, MaxTokens: 64,
		})
		require.NoError(t, err)
		assert.Empty(t, final.Message.ToolCalls)
		assert.NotEmpty(t, strings.TrimSpace(final.Message.Content))
		t.Logf("final: %q", final.Message.Content)
	})
}

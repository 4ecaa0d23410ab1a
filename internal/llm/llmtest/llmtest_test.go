package llmtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/llm/llmtest"
)

func req(content string) llm.Request {
	return llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: content}}}
}

func TestScriptInOrderAndRecordsRequests(t *testing.T) {
	boom := errors.New("boom")
	m := llmtest.New(
		llmtest.Text("first"),
		llmtest.Calls(llmtest.Call("c1", "search", `{"query":"go"}`), llmtest.Call("c2", "list", `{}`)),
		llmtest.Fail(boom),
		llmtest.Func(func(r llm.Request) (*llm.Response, error) {
			return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: "echo " + r.Messages[0].Content}}, nil
		}),
	)
	ctx := context.Background()
	r, err := m.Chat(ctx, req("a"))
	require.NoError(t, err)
	assert.Equal(t, "first", r.Message.Content)
	assert.Equal(t, llm.StopEnd, r.StopReason)

	r, err = m.Chat(ctx, req("b"))
	require.NoError(t, err)
	assert.Equal(t, llm.StopToolCalls, r.StopReason)
	require.Len(t, r.Message.ToolCalls, 2)
	assert.Equal(t, "list", r.Message.ToolCalls[1].Name)

	_, err = m.Chat(ctx, req("c"))
	assert.ErrorIs(t, err, boom)

	r, err = m.Chat(ctx, req("d"))
	require.NoError(t, err)
	assert.Equal(t, "echo d", r.Message.Content)

	_, err = m.Chat(ctx, req("e"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `no scripted answer left for request 5 (last message: "e")`)

	got := m.Requests()
	require.Len(t, got, 5)
	for i, want := range []string{"a", "b", "c", "d", "e"} {
		assert.Equal(t, want, got[i].Messages[0].Content)
	}
	assert.Equal(t, 0, m.Remaining())
}

func TestRecordedRequestsAreCopies(t *testing.T) {
	m := llmtest.New(llmtest.Text("x"))
	r := req("original")
	_, err := m.Chat(context.Background(), r)
	require.NoError(t, err)
	r.Messages[0].Content = "changed"
	assert.Equal(t, "original", m.Requests()[0].Messages[0].Content)
}

func TestStreamDeliversDeltasAndAssembles(t *testing.T) {
	m := llmtest.New(llmtest.Step{
		Text:      "日本語 text",
		ToolCalls: []llm.ToolCall{llmtest.Call("c1", "search", `{"query":"go"}`)},
		Usage:     llm.Usage{InputTokens: 7, OutputTokens: 3},
	})
	m.ChunkSize = 3
	var deltas []llm.Delta
	resp, err := m.Stream(context.Background(), req("q"), func(d llm.Delta) error {
		deltas = append(deltas, d)
		return nil
	})
	require.NoError(t, err)
	var texts []string
	for _, d := range deltas {
		if d.Text != "" {
			texts = append(texts, d.Text)
		}
	}
	assert.Equal(t, []string{"日本語", " te", "xt"}, texts)
	require.Len(t, deltas, 5)
	assert.Equal(t, &llm.ToolCallDelta{Index: 0, ID: "c1", Name: "search", ArgumentsDelta: `{"query`}, deltas[3].ToolCall)
	assert.Equal(t, "日本語 text", resp.Message.Content)
	assert.Equal(t, json.RawMessage(`{"query":"go"}`), resp.Message.ToolCalls[0].Arguments)
	assert.Equal(t, llm.Usage{InputTokens: 7, OutputTokens: 3}, resp.Usage)
	assert.Equal(t, llm.StopToolCalls, resp.StopReason)
}

func TestStreamCut(t *testing.T) {
	m := llmtest.New(llmtest.Step{Text: "abcdefghij", CutAfter: 2})
	var got string
	resp, err := m.Stream(context.Background(), req("q"), func(d llm.Delta) error { got += d.Text; return nil })
	require.ErrorIs(t, err, llm.ErrIncomplete)
	assert.Nil(t, resp)
	assert.Equal(t, "abcdefgh", got)
}

func TestStreamCutWithScriptedError(t *testing.T) {
	reset := errors.New("connection reset")
	m := llmtest.New(llmtest.Step{Text: "abcdefghij", CutAfter: 1, Err: reset})
	_, err := m.Stream(context.Background(), req("q"), func(llm.Delta) error { return nil })
	assert.ErrorIs(t, err, reset)
}

func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m := llmtest.New(llmtest.Text("x"))
	_, err := m.Chat(ctx, req("q"))
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, m.Remaining(), "a cancelled call does not use up a step")
}

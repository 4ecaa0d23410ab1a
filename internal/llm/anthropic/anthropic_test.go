package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/llm/anthropic"
	"github.com/sagasu-dev/sagasu/internal/llm/internal/fakeserver"
)

// The bodies below follow Anthropic's Messages API reference: a "message"
// object with content blocks, and for streams named events
// (message_start, content_block_start/delta/stop, message_delta,
// message_stop, ping, error), each "event:" line followed by a "data:" line.

const searchSchema = `{"type":"object","properties":{"query":{"type":"string","description":"what to look for"},"limit":{"type":"integer"}},"required":["query"],"additionalProperties":false}`

var searchTool = llm.Tool{Name: "search", Description: "search the knowledge base", Parameters: json.RawMessage(searchSchema)}

var ask = llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}}

func newModel(t *testing.T, srv *fakeserver.Server) *anthropic.Model {
	t.Helper()
	m, err := anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "sk-ant-test-secret"})
	require.NoError(t, err)
	return m
}

func message(content, stop string) string {
	return `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":` + content +
		`,"stop_reason":"` + stop + `","stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":11}}`
}

func event(name, data string) string { return "event: " + name + "\ndata: " + data }

var messageStart = event("message_start", `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}}`)

func textDelta(i int, s string) string {
	b, _ := json.Marshal(s)
	return event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%s}}`, i, b))
}

func jsonDelta(i int, s string) string {
	b, _ := json.Marshal(s)
	return event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, i, b))
}

func blockStop(i int) string {
	return event("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
}

func messageEnd(stop string) []string {
	return []string{
		event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"`+stop+`","stop_sequence":null},"usage":{"output_tokens":15}}`),
		event("message_stop", `{"type":"message_stop"}`),
	}
}

func TestChat(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Reply{Body: message(`[{"type":"text","text":"Tokyo."}]`, "end_turn")})
	m := newModel(t, srv)
	temp := 0.3
	resp, err := m.Chat(context.Background(), llm.Request{
		System:      "Answer briefly.",
		Messages:    []llm.Message{{Role: llm.RoleSystem, Content: "Use English."}, {Role: llm.RoleUser, Content: "Capital of Japan?"}},
		Temperature: &temp,
	})
	require.NoError(t, err)
	assert.Equal(t, llm.Message{Role: llm.RoleAssistant, Content: "Tokyo."}, resp.Message)
	assert.Equal(t, llm.Usage{InputTokens: 25, OutputTokens: 11}, resp.Usage)
	assert.Equal(t, llm.StopEnd, resp.StopReason)

	got := srv.Last()
	assert.Equal(t, "/v1/messages", got.Path)
	assert.Equal(t, "sk-ant-test-secret", got.Header.Get("X-Api-Key"))
	assert.NotEmpty(t, got.Header.Get("Anthropic-Version"))
	assert.JSONEq(t, `{"model":"claude-sonnet-4-5","max_tokens":1024,"temperature":0.3,
		"system":[{"type":"text","text":"Answer briefly."},{"type":"text","text":"Use English."}],
		"messages":[{"role":"user","content":[{"type":"text","text":"Capital of Japan?"}]}]}`, string(got.Body))
}

func TestToolRoundTripRequest(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Reply{Body: message(`[{"type":"text","text":"Found."}]`, "end_turn")})
	_, err := newModel(t, srv).Chat(context.Background(), llm.Request{
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "find go and rust"},
			{Role: llm.RoleAssistant, Content: "Searching.", ToolCalls: []llm.ToolCall{
				{ID: "toolu_1", Name: "search", Arguments: json.RawMessage(`{"query":"go"}`)},
				{ID: "toolu_2", Name: "search", Arguments: json.RawMessage(`{"query": broken`)},
			}},
			{Role: llm.RoleTool, ToolCallID: "toolu_1", Content: "go: 3 hits"},
			{Role: llm.RoleTool, ToolCallID: "toolu_2", Content: "error: the arguments are not valid JSON"},
			{Role: llm.RoleUser, Content: "and?"},
		},
		Tools:      []llm.Tool{searchTool, {Name: "list"}},
		ToolChoice: llm.ToolChoiceAuto,
		MaxTokens:  200,
	})
	require.NoError(t, err)
	want := `{"model":"claude-sonnet-4-5","max_tokens":200,
		"messages":[
			{"role":"user","content":[{"type":"text","text":"find go and rust"}]},
			{"role":"assistant","content":[
				{"type":"text","text":"Searching."},
				{"type":"tool_use","id":"toolu_1","name":"search","input":{"query":"go"}},
				{"type":"tool_use","id":"toolu_2","name":"search","input":{}}]},
			{"role":"user","content":[
				{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"go: 3 hits"}]},
				{"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"error: the arguments are not valid JSON"}]},
				{"type":"text","text":"and?"}]}],
		"tools":[
			{"name":"search","description":"search the knowledge base","input_schema":` + searchSchema + `},
			{"name":"list","input_schema":{"type":"object","properties":{}}}]}`
	assert.JSONEq(t, want, string(srv.Last().Body))
}

func TestToolChoice(t *testing.T) {
	tests := []struct {
		choice llm.ToolChoice
		want   string
	}{
		{llm.ToolChoiceRequired, `{"type":"any"}`},
		{llm.ToolChoiceNone, `{"type":"none"}`},
		{"search", `{"type":"tool","name":"search"}`},
	}
	for _, tt := range tests {
		t.Run(string(tt.choice), func(t *testing.T) {
			srv := fakeserver.New(t, fakeserver.Reply{Body: message(`[{"type":"text","text":"x"}]`, "end_turn")})
			req := ask
			req.Tools, req.ToolChoice = []llm.Tool{searchTool}, tt.choice
			_, err := newModel(t, srv).Chat(context.Background(), req)
			require.NoError(t, err)
			got, _ := json.Marshal(srv.Last().JSON(t)["tool_choice"])
			assert.JSONEq(t, tt.want, string(got))
		})
	}
}

func TestChatParallelToolCalls(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Reply{Body: message(`[
		{"type":"text","text":"I'll look both up."},
		{"type":"tool_use","id":"toolu_a","name":"search","input":{"query":"go"}},
		{"type":"tool_use","id":"toolu_b","name":"search","input":{"query":"rust","limit":2}}]`, "tool_use")})
	resp, err := newModel(t, srv).Chat(context.Background(), ask)
	require.NoError(t, err)
	assert.Equal(t, llm.StopToolCalls, resp.StopReason)
	assert.Equal(t, "I'll look both up.", resp.Message.Content)
	require.Len(t, resp.Message.ToolCalls, 2)
	assert.Equal(t, "toolu_a", resp.Message.ToolCalls[0].ID)
	assert.JSONEq(t, `{"query":"go"}`, string(resp.Message.ToolCalls[0].Arguments))
	assert.Equal(t, "toolu_b", resp.Message.ToolCalls[1].ID)
	assert.JSONEq(t, `{"query":"rust","limit":2}`, string(resp.Message.ToolCalls[1].Arguments))
}

func TestStopReasons(t *testing.T) {
	for stop, want := range map[string]llm.StopReason{
		"end_turn": llm.StopEnd, "stop_sequence": llm.StopEnd, "max_tokens": llm.StopLength,
		"tool_use": llm.StopToolCalls, "refusal": llm.StopContentFilter, "pause_turn": llm.StopOther,
		"model_context_window_exceeded": llm.StopLength,
	} {
		t.Run(stop, func(t *testing.T) {
			srv := fakeserver.New(t, fakeserver.Reply{Body: message(`[{"type":"text","text":"x"}]`, stop)})
			resp, err := newModel(t, srv).Chat(context.Background(), ask)
			require.NoError(t, err)
			assert.Equal(t, want, resp.StopReason)
		})
	}
}

func TestStreamText(t *testing.T) {
	events := []string{
		messageStart,
		event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
		event("ping", `{"type": "ping"}`),
		textDelta(0, "東京"), textDelta(0, " is the"), textDelta(0, " capital."),
		blockStop(0),
	}
	srv := fakeserver.New(t, fakeserver.Reply{Events: append(events, messageEnd("end_turn")...)})
	var texts []string
	resp, err := newModel(t, srv).Stream(context.Background(), ask, func(d llm.Delta) error {
		assert.Nil(t, d.ToolCall)
		texts = append(texts, d.Text)
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"東京", " is the", " capital."}, texts)
	assert.Equal(t, "東京 is the capital.", resp.Message.Content)
	assert.Equal(t, llm.Usage{InputTokens: 25, OutputTokens: 15}, resp.Usage)
	assert.Equal(t, llm.StopEnd, resp.StopReason)
	assert.Equal(t, true, srv.Last().JSON(t)["stream"])
}

func TestStreamParallelToolCalls(t *testing.T) {
	events := []string{
		messageStart,
		event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
		textDelta(0, "Checking."),
		blockStop(0),
		event("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_a","name":"search","input":{}}}`),
		jsonDelta(1, ""), jsonDelta(1, `{"query":`), jsonDelta(1, ` "go"}`),
		blockStop(1),
		event("content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_b","name":"list","input":{}}}`),
		blockStop(2),
	}
	srv := fakeserver.New(t, fakeserver.Reply{Events: append(events, messageEnd("tool_use")...)})
	var calls []llm.ToolCallDelta
	resp, err := newModel(t, srv).Stream(context.Background(), ask, func(d llm.Delta) error {
		if d.ToolCall != nil {
			calls = append(calls, *d.ToolCall)
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, llm.ToolCallDelta{Index: 0, ID: "toolu_a", Name: "search"}, calls[0])
	assert.Equal(t, llm.ToolCallDelta{Index: 0, ArgumentsDelta: `{"query":`}, calls[1])
	assert.Equal(t, llm.ToolCallDelta{Index: 1, ID: "toolu_b", Name: "list"}, calls[3])
	assert.Equal(t, "Checking.", resp.Message.Content)
	assert.Equal(t, []llm.ToolCall{
		{ID: "toolu_a", Name: "search", Arguments: json.RawMessage(`{"query": "go"}`)},
		{ID: "toolu_b", Name: "list", Arguments: json.RawMessage(`{}`)},
	}, resp.Message.ToolCalls)
	assert.Equal(t, llm.StopToolCalls, resp.StopReason)
}

func TestStreamCut(t *testing.T) {
	fakeserver.CheckStreamCut(t, asModel, fakeserver.Reply{Events: []string{
		messageStart,
		event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
		textDelta(0, "The answer"), textDelta(0, " is"),
	}}, "The answer is")
}

func TestStreamErrorEvent(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Reply{Events: []string{
		messageStart,
		event("error", `{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}`),
	}})
	_, err := newModel(t, srv).Stream(context.Background(), ask, func(llm.Delta) error { return nil })
	require.ErrorIs(t, err, llm.ErrIncomplete)
	assert.Contains(t, err.Error(), "Overloaded")
	assert.True(t, llm.IsRetryable(err), "nothing was delivered, so WithRetry may try again")
}

func TestStreamCallbackErrorStops(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Reply{Events: append([]string{messageStart,
		event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
		textDelta(0, "a"), textDelta(0, "b"), blockStop(0)}, messageEnd("end_turn")...)})
	stop := errors.New("stop pressed")
	n := 0
	_, err := newModel(t, srv).Stream(context.Background(), ask, func(llm.Delta) error { n++; return stop })
	assert.ErrorIs(t, err, stop)
	assert.Equal(t, 1, n)
}

func TestHTTPErrors(t *testing.T) {
	fakeserver.CheckErrors(t, "anthropic", "sk-ant-test-secret", asModel, []fakeserver.ErrorCase{
		{Name: "400", Reply: fakeserver.Reply{Status: 400, Body: `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"},"request_id":"req_1"}`},
			Sentinel: llm.ErrBadRequest, Code: "invalid_request_error", InText: []string{"max_tokens: Field required"}},
		{Name: "401", Reply: fakeserver.Reply{Status: 401, Body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_2"}`},
			Sentinel: llm.ErrUnauthorized, Code: "authentication_error", InText: []string{"ANTHROPIC_API_KEY", "invalid x-api-key"}},
		{Name: "429", Reply: fakeserver.Reply{Status: 429, Header: map[string]string{"Retry-After": "12"}, Body: `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`},
			Sentinel: llm.ErrRateLimited, Code: "rate_limit_error", InText: []string{"per-minute rate limit"}, RetryAfter: 12 * time.Second},
		{Name: "500", Reply: fakeserver.Reply{Status: 500, Body: `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`},
			Code: "api_error", InText: []string{"Internal server error"}},
		{Name: "529", Reply: fakeserver.Reply{Status: 529, Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
			Code: "overloaded_error", InText: []string{"Overloaded"}},
	})
}

func asModel(t *testing.T, srv *fakeserver.Server) llm.Model { return newModel(t, srv) }

func TestMalformedBody(t *testing.T) {
	fakeserver.CheckMalformed(t, "anthropic", asModel, []fakeserver.MalformedCase{
		{Name: "truncated JSON", Reply: fakeserver.Reply{Body: `{"id":"msg_01","type":"message","content":[{"type":"text","text":"trunc`}},
		{Name: "truncated event", Stream: true, Reply: fakeserver.Reply{Events: []string{messageStart, event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`)}}},
		{Name: "JSON instead of a stream", Stream: true, Reply: fakeserver.Reply{Body: message(`[{"type":"text","text":"not a stream"}]`, "end_turn")}},
	})
}

func TestNewChecksConfig(t *testing.T) {
	_, err := anthropic.New(anthropic.Config{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ANTHROPIC_API_KEY")
	m, err := anthropic.New(anthropic.Config{APIKey: "k"})
	require.NoError(t, err)
	assert.Equal(t, llm.Info{Driver: "anthropic", Model: "claude-sonnet-4-5", Endpoint: "https://api.anthropic.com"}, m.Info())
}

func TestStreamCancelledByCaller(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Reply{Hold: true, Events: []string{messageStart,
		event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
		textDelta(0, "a")}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := newModel(t, srv).Stream(ctx, ask, func(llm.Delta) error { cancel(); return nil })
	require.ErrorIs(t, err, context.Canceled)
	assert.Nil(t, resp)
}

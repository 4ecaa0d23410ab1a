package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/llm/internal/fakeserver"
	"github.com/sagasu-dev/sagasu/internal/llm/openai"
)

// The bodies below follow the Chat Completions reference: a
// chat.completion object, chat.completion.chunk events as "data:" lines
// ending with "data: [DONE]", and {"error":{...}} on failure.

const searchSchema = `{"type":"object","properties":{"query":{"type":"string","description":"what to look for"},"limit":{"type":"integer"}},"required":["query"]}`

var searchTool = llm.Tool{Name: "search", Description: "search the knowledge base", Parameters: json.RawMessage(searchSchema)}

func newModel(t *testing.T, srv *fakeserver.Server) *openai.Model {
	t.Helper()
	m, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", Model: "smollm2", APIKey: "sk-test-secret"})
	require.NoError(t, err)
	return m
}

func completion(message, finish string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"smollm2",` +
		`"choices":[{"index":0,"message":` + message + `,"logprobs":null,"finish_reason":"` + finish + `"}],` +
		`"usage":{"prompt_tokens":21,"completion_tokens":7,"total_tokens":28}}`
}

func chunk(delta, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"smollm2",` +
		`"choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + f + `}]}`
}

const usageChunk = `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"smollm2","choices":[],"usage":{"prompt_tokens":30,"completion_tokens":9,"total_tokens":39}}`

func TestChat(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Reply{Body: completion(`{"role":"assistant","content":"Tokyo.","refusal":null}`, "stop")})
	m := newModel(t, srv)
	temp := 0.2
	resp, err := m.Chat(context.Background(), llm.Request{
		System:      "Answer briefly.",
		Messages:    []llm.Message{{Role: llm.RoleUser, Content: "Capital of Japan?"}},
		Temperature: &temp,
		MaxTokens:   64,
	})
	require.NoError(t, err)
	assert.Equal(t, llm.Message{Role: llm.RoleAssistant, Content: "Tokyo."}, resp.Message)
	assert.Equal(t, llm.Usage{InputTokens: 21, OutputTokens: 7}, resp.Usage)
	assert.Equal(t, llm.StopEnd, resp.StopReason)

	got := srv.Last()
	assert.Equal(t, "POST", got.Method)
	assert.Equal(t, "/v1/chat/completions", got.Path)
	assert.Equal(t, "Bearer sk-test-secret", got.Header.Get("Authorization"))
	assert.JSONEq(t, `{"model":"smollm2","temperature":0.2,"max_tokens":64,"messages":[
		{"role":"system","content":"Answer briefly."},
		{"role":"user","content":"Capital of Japan?"}]}`, string(got.Body))
	assert.Equal(t, openai.DefaultModel, mustNew(t, openai.Config{APIKey: "k"}).Info().Model)
}

func mustNew(t *testing.T, cfg openai.Config) *openai.Model {
	t.Helper()
	m, err := openai.New(cfg)
	require.NoError(t, err)
	return m
}

func TestToolRoundTripRequest(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Reply{Body: completion(`{"role":"assistant","content":"Found it."}`, "stop")})
	m := newModel(t, srv)
	_, err := m.Chat(context.Background(), llm.Request{
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "find go"},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
				{ID: "call_1", Name: "search", Arguments: json.RawMessage(`{"query":"go"}`)},
				{ID: "call_2", Name: "search", Arguments: json.RawMessage(`{"query":"rust","limit":2}`)},
			}},
			{Role: llm.RoleTool, ToolCallID: "call_1", Name: "search", Content: "go: 3 hits"},
			{Role: llm.RoleTool, ToolCallID: "call_2", Name: "search", Content: "rust: 1 hit"},
		},
		Tools:      []llm.Tool{searchTool, {Name: "list"}},
		ToolChoice: llm.ToolChoiceAuto,
	})
	require.NoError(t, err)
	body := srv.Last().JSON(t)
	assert.NotContains(t, body, "tool_choice", "auto is the server's default and is left out")
	want := `{"model":"smollm2","messages":[
		{"role":"user","content":"find go"},
		{"role":"assistant","tool_calls":[
			{"id":"call_1","type":"function","function":{"name":"search","arguments":"{\"query\":\"go\"}"}},
			{"id":"call_2","type":"function","function":{"name":"search","arguments":"{\"query\":\"rust\",\"limit\":2}"}}]},
		{"role":"tool","tool_call_id":"call_1","content":"go: 3 hits"},
		{"role":"tool","tool_call_id":"call_2","content":"rust: 1 hit"}],
		"tools":[
			{"type":"function","function":{"name":"search","description":"search the knowledge base","parameters":` + searchSchema + `}},
			{"type":"function","function":{"name":"list","parameters":{"type":"object","properties":{}}}}]}`
	assert.JSONEq(t, want, string(srv.Last().Body))
}

func TestToolChoice(t *testing.T) {
	tests := []struct {
		choice llm.ToolChoice
		want   string
	}{
		{llm.ToolChoiceRequired, `"required"`},
		{llm.ToolChoiceNone, `"none"`},
		{"search", `{"type":"function","function":{"name":"search"}}`},
	}
	for _, tt := range tests {
		t.Run(string(tt.choice), func(t *testing.T) {
			srv := fakeserver.New(t, fakeserver.Reply{Body: completion(`{"role":"assistant","content":"x"}`, "stop")})
			_, err := newModel(t, srv).Chat(context.Background(), llm.Request{
				Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}, Tools: []llm.Tool{searchTool}, ToolChoice: tt.choice,
			})
			require.NoError(t, err)
			got, _ := json.Marshal(srv.Last().JSON(t)["tool_choice"])
			assert.JSONEq(t, tt.want, string(got))
		})
	}
}

func TestChatParallelToolCalls(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Reply{Body: completion(`{"role":"assistant","content":null,"tool_calls":[
		{"id":"call_a","type":"function","function":{"name":"search","arguments":"{\"query\":\"go\"}"}},
		{"id":"call_b","type":"function","function":{"name":"search","arguments":"{\"query\": oops"}}]}`, "tool_calls")})
	resp, err := newModel(t, srv).Chat(context.Background(), llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}, Tools: []llm.Tool{searchTool},
	})
	require.NoError(t, err)
	assert.Equal(t, llm.StopToolCalls, resp.StopReason)
	assert.Equal(t, "", resp.Message.Content)
	assert.Equal(t, []llm.ToolCall{
		{ID: "call_a", Name: "search", Arguments: json.RawMessage(`{"query":"go"}`)},
		{ID: "call_b", Name: "search", Arguments: json.RawMessage(`{"query": oops`)}, // kept as sent
	}, resp.Message.ToolCalls)
}

func TestStopReasons(t *testing.T) {
	tests := []struct {
		message, finish string
		want            llm.StopReason
	}{
		{`{"role":"assistant","content":"cut"}`, "length", llm.StopLength},
		{`{"role":"assistant","content":""}`, "content_filter", llm.StopContentFilter},
		{`{"role":"assistant","content":null,"refusal":"I can't help with that."}`, "stop", llm.StopContentFilter},
		{`{"role":"assistant","content":"x","tool_calls":[{"id":"c","type":"function","function":{"name":"search","arguments":"{}"}}]}`, "stop", llm.StopToolCalls},
		{`{"role":"assistant","content":"x"}`, "something_new", llm.StopOther},
	}
	for _, tt := range tests {
		t.Run(tt.finish, func(t *testing.T) {
			srv := fakeserver.New(t, fakeserver.Reply{Body: completion(tt.message, tt.finish)})
			resp, err := newModel(t, srv).Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}})
			require.NoError(t, err)
			assert.Equal(t, tt.want, resp.StopReason)
			assert.NotEmpty(t, resp.Message.Content+string(resp.StopReason))
		})
	}
}

func TestRefusalBecomesContent(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Reply{Body: completion(`{"role":"assistant","content":null,"refusal":"I can't help with that."}`, "stop")})
	resp, err := newModel(t, srv).Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}})
	require.NoError(t, err)
	assert.Equal(t, "I can't help with that.", resp.Message.Content)
}

func TestStreamText(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Reply{Events: []string{
		chunk(`{"role":"assistant","content":""}`, ""),
		chunk(`{"content":"東京"}`, ""),
		chunk(`{"content":" is the"}`, ""),
		chunk(`{"content":" capital."}`, ""),
		chunk(`{}`, "stop"),
		usageChunk,
		"data: [DONE]",
	}})
	var texts []string
	resp, err := newModel(t, srv).Stream(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}},
		func(d llm.Delta) error {
			assert.Nil(t, d.ToolCall)
			texts = append(texts, d.Text)
			return nil
		})
	require.NoError(t, err)
	assert.Equal(t, []string{"東京", " is the", " capital."}, texts)
	assert.Equal(t, "東京 is the capital.", resp.Message.Content)
	assert.Equal(t, llm.Usage{InputTokens: 30, OutputTokens: 9}, resp.Usage)
	assert.Equal(t, llm.StopEnd, resp.StopReason)
	body := srv.Last().JSON(t)
	assert.Equal(t, true, body["stream"])
	assert.Equal(t, map[string]any{"include_usage": true}, body["stream_options"])
}

func TestStreamParallelToolCalls(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Reply{Events: []string{
		chunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"search","arguments":""}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"query\":"}}]}`, ""),
		chunk(`{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"search","arguments":"{\"query\""}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"go\"}"}}]}`, ""),
		chunk(`{"tool_calls":[{"index":1,"function":{"arguments":":\"rust\"}"}}]}`, ""),
		chunk(`{}`, "tool_calls"),
		usageChunk,
		"data: [DONE]",
	}})
	var deltas []llm.ToolCallDelta
	resp, err := newModel(t, srv).Stream(context.Background(), llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}, Tools: []llm.Tool{searchTool},
	}, func(d llm.Delta) error {
		require.NotNil(t, d.ToolCall)
		deltas = append(deltas, *d.ToolCall)
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, llm.ToolCallDelta{Index: 0, ID: "call_a", Name: "search"}, deltas[0])
	assert.Equal(t, llm.ToolCallDelta{Index: 1, ArgumentsDelta: `:"rust"}`}, deltas[4])
	assert.Equal(t, []llm.ToolCall{
		{ID: "call_a", Name: "search", Arguments: json.RawMessage(`{"query":"go"}`)},
		{ID: "call_b", Name: "search", Arguments: json.RawMessage(`{"query":"rust"}`)},
	}, resp.Message.ToolCalls)
	assert.Equal(t, llm.StopToolCalls, resp.StopReason)
}

func TestStreamToolCallsAllNumberedZero(t *testing.T) {
	// Some servers send each whole call at index 0, told apart by ID.
	srv := fakeserver.New(t, fakeserver.Reply{Events: []string{
		chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"search","arguments":"{\"query\":\"go\"}"}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"id":"call_b","type":"function","function":{"name":"list","arguments":"{}"}}]}`, ""),
		chunk(`{}`, "tool_calls"),
		"data: [DONE]",
	}})
	resp, err := newModel(t, srv).Stream(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}},
		func(llm.Delta) error { return nil })
	require.NoError(t, err)
	require.Len(t, resp.Message.ToolCalls, 2)
	assert.Equal(t, "list", resp.Message.ToolCalls[1].Name)
	assert.Equal(t, json.RawMessage(`{"query":"go"}`), resp.Message.ToolCalls[0].Arguments)
}

func TestStreamCut(t *testing.T) {
	fakeserver.CheckStreamCut(t, asModel, fakeserver.Reply{Events: []string{
		chunk(`{"role":"assistant","content":""}`, ""),
		chunk(`{"content":"The answer"}`, ""),
		chunk(`{"content":" is"}`, ""),
	}}, "The answer is")
}

func TestStreamCallbackErrorStops(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Reply{Events: []string{
		chunk(`{"content":"a"}`, ""), chunk(`{"content":"b"}`, ""), chunk(`{}`, "stop"), "data: [DONE]",
	}})
	stop := errors.New("stop pressed")
	n := 0
	_, err := newModel(t, srv).Stream(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}},
		func(llm.Delta) error { n++; return stop })
	assert.ErrorIs(t, err, stop)
	assert.Equal(t, 1, n)
}

func TestHTTPErrors(t *testing.T) {
	fakeserver.CheckErrors(t, "openai", "sk-test-secret", asModel, []fakeserver.ErrorCase{
		{Name: "400", Reply: fakeserver.Reply{Status: 400, Body: `{"error":{"message":"Invalid value for 'temperature'.","type":"invalid_request_error","param":"temperature","code":null}}`},
			Sentinel: llm.ErrBadRequest, Code: "invalid_request_error", InText: []string{"Invalid value for 'temperature'."}},
		{Name: "401", Reply: fakeserver.Reply{Status: 401, Body: `{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`},
			Sentinel: llm.ErrUnauthorized, Code: "invalid_api_key", InText: []string{"OPENAI_API_KEY", "Incorrect API key provided."}},
		{Name: "429", Reply: fakeserver.Reply{Status: 429, Header: map[string]string{"Retry-After": "7"}, Body: `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`},
			Sentinel: llm.ErrRateLimited, Code: "rate_limit_exceeded", InText: []string{"Rate limit reached", "retry after 7s"}, RetryAfter: 7 * time.Second},
		{Name: "500 with an HTML page", Reply: fakeserver.Reply{Status: 500, Header: map[string]string{"Content-Type": "text/html"}, Body: "<html><body>Internal Server Error</body></html>"},
			InText: []string{"Internal Server Error"}},
	})
}

func asModel(t *testing.T, srv *fakeserver.Server) llm.Model { return newModel(t, srv) }

func TestMalformedBody(t *testing.T) {
	fakeserver.CheckMalformed(t, "openai", asModel, []fakeserver.MalformedCase{
		{Name: "truncated JSON", Reply: fakeserver.Reply{Body: `{"id":"chatcmpl-1","choices":[{"index":0,"message":{"role":"assistant","content":"trunc`}},
		{Name: "no choices", Reply: fakeserver.Reply{Body: `{"id":"chatcmpl-1","object":"chat.completion","choices":[]}`}},
		{Name: "truncated chunk", Stream: true, Reply: fakeserver.Reply{Events: []string{chunk(`{"content":"a"}`, ""), `data: {"choices":[{"index":0,"delta":{"content":`}}},
		// A whole completion instead of a stream is read as one chunk
		// (TestWholeAnswerToAStream); a page is not.
		{Name: "a page instead of a stream", Stream: true, Reply: fakeserver.Reply{Header: map[string]string{"Content-Type": "text/html"}, Body: `<html><body>proxy login</body></html>`}},
		{Name: "JSON that is no completion instead of a stream", Stream: true, Reply: fakeserver.Reply{Body: `[1, 2]`}},
	})
}

func TestWithRetryRetriesTheServer(t *testing.T) {
	srv := fakeserver.New(t,
		fakeserver.Reply{Status: 503, Body: `{"error":{"message":"overloaded","type":"server_error"}}`},
		fakeserver.Reply{Status: 429, Header: map[string]string{"Retry-After": "0.001"}, Body: `{"error":{"message":"slow down","type":"requests"}}`},
		fakeserver.Reply{Body: completion(`{"role":"assistant","content":"ok"}`, "stop")},
	)
	var waits []time.Duration
	m := llm.WithRetry(newModel(t, srv), llm.RetryOptions{BaseDelay: time.Millisecond,
		Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }})
	resp, err := m.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}})
	require.NoError(t, err)
	assert.Equal(t, "ok", resp.Message.Content)
	assert.Len(t, srv.Requests(), 3)
	assert.Len(t, waits, 2)
}

func TestNewChecksConfig(t *testing.T) {
	_, err := openai.New(openai.Config{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "OPENAI_API_KEY")

	_, err = openai.New(openai.Config{BaseURL: "localhost:8080"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"localhost:8080"`)

	srv := fakeserver.New(t, fakeserver.Reply{Body: completion(`{"role":"assistant","content":"hi"}`, "stop")})
	m := mustNew(t, openai.Config{BaseURL: srv.URL + "/v1/", Model: "local"})
	assert.Equal(t, llm.Info{Driver: "openai", Model: "local", Endpoint: srv.URL + "/v1"}, m.Info())
	_, err = m.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}})
	require.NoError(t, err)
	assert.Empty(t, srv.Last().Header.Get("Authorization"), "no key, no Authorization header")
}

func TestBadRequestsFailBeforeSending(t *testing.T) {
	srv := fakeserver.New(t)
	m := newModel(t, srv)
	for _, req := range []llm.Request{
		{Messages: []llm.Message{{Role: "robot", Content: "x"}}},
		{Messages: []llm.Message{{Role: llm.RoleTool, Content: "x"}}},
		{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}, Tools: []llm.Tool{{Name: "t", Parameters: json.RawMessage(`[1]`)}}},
	} {
		_, err := m.Chat(context.Background(), req)
		require.Error(t, err)
		assert.True(t, strings.HasPrefix(err.Error(), "openai: "), err.Error())
	}
	assert.Empty(t, srv.Requests())
}

func TestUnreachableServerIsRetryableAndNamed(t *testing.T) {
	srv := fakeserver.New(t)
	url := srv.URL
	srv.Close()
	m := mustNew(t, openai.Config{BaseURL: url + "/v1"})
	_, err := m.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), url+"/v1")
	assert.True(t, llm.IsRetryable(err), "connection refused: %v", err)
	assert.NotErrorIs(t, err, llm.ErrMalformed)
}

func TestStreamCancelledByCaller(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Reply{Hold: true, Events: []string{chunk(`{"content":"a"}`, "")}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := newModel(t, srv).Stream(ctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}},
		func(llm.Delta) error { cancel(); return nil })
	require.ErrorIs(t, err, context.Canceled)
	assert.Nil(t, resp)
}

func TestToolCallsWithoutIDGetOne(t *testing.T) {
	srv := fakeserver.New(t,
		fakeserver.Reply{Body: completion(`{"role":"assistant","content":null,"tool_calls":[
			{"type":"function","function":{"name":"search","arguments":"{\"query\":\"go\"}"}},
			{"type":"function","function":{"name":"search","arguments":"{\"query\":\"rust\"}"}}]}`, "tool_calls")},
		fakeserver.Reply{Events: []string{
			chunk(`{"tool_calls":[{"index":0,"type":"function","function":{"name":"search","arguments":"{\"query\":"}}]}`, ""),
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"go\"}"}}]}`, ""),
			chunk(`{}`, "tool_calls"), "data: [DONE]",
		}},
	)
	m := newModel(t, srv)
	resp, err := m.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}})
	require.NoError(t, err)
	require.Len(t, resp.Message.ToolCalls, 2)
	assert.Equal(t, "call_0", resp.Message.ToolCalls[0].ID)
	assert.Equal(t, "call_1", resp.Message.ToolCalls[1].ID)

	var first *llm.ToolCallDelta
	resp, err = m.Stream(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}},
		func(d llm.Delta) error {
			if first == nil {
				first = d.ToolCall
			}
			return nil
		})
	require.NoError(t, err)
	assert.Equal(t, "call_0", first.ID, "the caller sees the ID with the first piece")
	assert.Equal(t, []llm.ToolCall{{ID: "call_0", Name: "search", Arguments: json.RawMessage(`{"query":"go"}`)}}, resp.Message.ToolCalls)
}

func TestConfigTimeoutBoundsAStream(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Reply{Hold: true, Events: []string{chunk(`{"content":"thinking"}`, "")}})
	m := mustNew(t, openai.Config{BaseURL: srv.URL + "/v1", Timeout: 20 * time.Millisecond})
	resp, err := m.Stream(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}},
		func(llm.Delta) error { return nil })
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Nil(t, resp)
	assert.True(t, llm.IsRetryable(err), "a call that ran out of its own time may be made again")
}

// TestReplySchema: a structured reply goes out as response_format
// json_schema (what llama-server turns into a grammar); a schema that is
// not an object is refused before anything is sent.
func TestReplySchema(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Reply{Body: completion(`{"role":"assistant","content":"{\"plan\":[\"a\"]}"}`, "stop")})
	m := newModel(t, srv)
	schema := `{"type":"object","properties":{"plan":{"type":"array","items":{"type":"string"},"maxItems":8}},"required":["plan"]}`
	_, err := m.Chat(context.Background(), llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "plan it"}},
		Reply:    &llm.Schema{Name: "plan", Schema: json.RawMessage(schema)},
	})
	require.NoError(t, err)
	assert.JSONEq(t, `{"model":"smollm2","messages":[{"role":"user","content":"plan it"}],
		"response_format":{"type":"json_schema","json_schema":{"name":"plan","schema":`+schema+`}}}`, string(srv.Last().Body))

	_, err = m.Chat(context.Background(), llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "plan it"}},
		Reply:    &llm.Schema{Name: "plan", Schema: json.RawMessage(`[1]`)},
	})
	require.ErrorContains(t, err, `reply schema "plan"`)
}

// TestStallBoundsByProgress: with Stall, a slow answer that keeps coming
// finishes although it takes longer than Stall in all (Chat streams
// underneath and asks for prompt progress), while a server that stops
// sending fails after Stall, saying so.
func TestStallBoundsByProgress(t *testing.T) {
	const stall = 400 * time.Millisecond
	events := []string{chunk(`{"role":"assistant","content":""}`, "")}
	for range 6 {
		events = append(events, chunk(`{"content":"word "}`, ""))
	}
	events = append(events, chunk(`{}`, "stop"), usageChunk, "data: [DONE]")
	srv := fakeserver.New(t, fakeserver.Reply{Events: events, Gap: 150 * time.Millisecond})
	m, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", Model: "smollm2", Stall: stall, Timeout: time.Millisecond})
	require.NoError(t, err)
	start := time.Now()
	resp, err := m.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}})
	require.NoError(t, err)
	assert.Greater(t, time.Since(start), stall, "the answer took longer than Stall in all")
	assert.Equal(t, strings.Repeat("word ", 6), resp.Message.Content)
	assert.Equal(t, llm.StopEnd, resp.StopReason)
	body := srv.Last().JSON(t)
	assert.Equal(t, true, body["stream"])
	assert.Equal(t, true, body["return_progress"])

	held := fakeserver.New(t, fakeserver.Reply{Events: events[:2], Hold: true})
	m, err = openai.New(openai.Config{BaseURL: held.URL + "/v1", Model: "smollm2", Stall: stall})
	require.NoError(t, err)
	_, err = m.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}})
	require.ErrorContains(t, err, "no progress from the model for 400ms")
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

// TestWholeAnswerToAStream: a server that ignores "stream": true and sends
// one whole completion is read as a one-chunk stream, tool calls included.
func TestWholeAnswerToAStream(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Reply{Body: completion(`{"role":"assistant","content":"Looking.","tool_calls":[
		{"id":"call_a","type":"function","function":{"name":"search","arguments":"{\"query\":\"go\"}"}},
		{"id":"call_b","type":"function","function":{"name":"search","arguments":"{\"query\":\"rust\"}"}}]}`, "tool_calls")})
	m, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", Model: "smollm2", Stall: time.Minute})
	require.NoError(t, err)
	resp, err := m.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}, Tools: []llm.Tool{searchTool}})
	require.NoError(t, err)
	assert.Equal(t, "Looking.", resp.Message.Content)
	require.Len(t, resp.Message.ToolCalls, 2)
	assert.Equal(t, llm.ToolCall{ID: "call_b", Name: "search", Arguments: json.RawMessage(`{"query":"rust"}`)}, resp.Message.ToolCalls[1])
	assert.Equal(t, llm.StopToolCalls, resp.StopReason)
	assert.Equal(t, llm.Usage{InputTokens: 21, OutputTokens: 7}, resp.Usage)

	// Read as no stream at all, it is asked again whole: malformed both ways.
	bad := fakeserver.New(t, fakeserver.Reply{Body: `[1, 2]`}, fakeserver.Reply{Body: `[1, 2]`})
	m, err = openai.New(openai.Config{BaseURL: bad.URL + "/v1", Model: "smollm2", Stall: time.Minute})
	require.NoError(t, err)
	_, err = m.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}})
	require.ErrorContains(t, err, "malformed")
}

// TestErrorEventInAStream: llama-server reports a reply it could not parse
// as a tool call, once the stream has begun, as an error event; it comes
// back as the same *llm.APIError (HTTP 500) a whole call gets, so that the
// agents' fallback (ask again without tools) works when streaming too.
func TestErrorEventInAStream(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Reply{Events: []string{
		chunk(`{"role":"assistant","content":null}`, ""),
		`data: {"error":{"code":500,"message":"Failed to parse input at pos 12","type":"server_error"}}`,
	}})
	_, err := newModel(t, srv).Stream(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}, Tools: []llm.Tool{searchTool}},
		func(llm.Delta) error { return nil })
	var api *llm.APIError
	require.ErrorAs(t, err, &api)
	assert.Equal(t, 500, api.Status)
	assert.Contains(t, api.Message, "Failed to parse input")
}

// TestStallFallsBackToAWholeCall: llama-server drops a stream it fails on
// before the first chunk; the call is asked again as a whole, which gets
// the answer (or the server's error in words).
func TestStallFallsBackToAWholeCall(t *testing.T) {
	srv := fakeserver.New(t,
		fakeserver.Reply{Events: []string{}, Abort: true},
		fakeserver.Reply{Body: completion(`{"role":"assistant","content":"whole"}`, "stop")},
	)
	m, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", Model: "smollm2", Stall: time.Minute})
	require.NoError(t, err)
	resp, err := m.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}})
	require.NoError(t, err)
	assert.Equal(t, "whole", resp.Message.Content)
	body := srv.Last().JSON(t)
	assert.Nil(t, body["stream"], "the second call is a whole one")

	refused := fakeserver.New(t, fakeserver.Reply{Status: 400, Body: `{"error":{"message":"bad tools","type":"invalid_request_error"}}`})
	m, err = openai.New(openai.Config{BaseURL: refused.URL + "/v1", Model: "smollm2", Stall: time.Minute})
	require.NoError(t, err)
	_, err = m.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}})
	var api *llm.APIError
	require.ErrorAs(t, err, &api, "a refusal in words is not asked again")
}

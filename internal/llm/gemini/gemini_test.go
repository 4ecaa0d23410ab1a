package gemini_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/llm/gemini"
	"github.com/sagasu-dev/sagasu/internal/llm/internal/fakeserver"
)

// The bodies below follow the Gemini API reference: GenerateContentResponse
// objects (candidates[].content.parts[], finishReason, usageMetadata), for
// streams one per "data:" line of streamGenerateContent?alt=sse with CRLF
// between events and no end marker, and google.rpc.Status errors.

const searchSchema = `{"type":"object","properties":{"query":{"type":"string","description":"what to look for"},"limit":{"type":"integer"}},"required":["query"],"additionalProperties":false}`

var searchTool = llm.Tool{Name: "search", Description: "search the knowledge base", Parameters: json.RawMessage(searchSchema)}

var ask = llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}}

func newModel(t *testing.T, srv *fakeserver.Server) *gemini.Model {
	t.Helper()
	m, err := gemini.New(gemini.Config{BaseURL: srv.URL, APIKey: "AIza-test-secret"})
	require.NoError(t, err)
	return m
}

func response(parts, finish string) string {
	return `{"candidates":[{"content":{"parts":` + parts + `,"role":"model"},"finishReason":"` + finish + `","index":0}],` +
		`"usageMetadata":{"promptTokenCount":8,"candidatesTokenCount":3,"thoughtsTokenCount":4,"totalTokenCount":15},` +
		`"modelVersion":"gemini-2.5-flash","responseId":"resp1"}`
}

func chunk(parts, finish string) string {
	f := ""
	if finish != "" {
		f = `,"finishReason":"` + finish + `"`
	}
	return `data: {"candidates":[{"content":{"parts":` + parts + `,"role":"model"}` + f + `,"index":0}],` +
		`"usageMetadata":{"promptTokenCount":8,"candidatesTokenCount":5,"totalTokenCount":13},"modelVersion":"gemini-2.5-flash","responseId":"resp2"}`
}

func TestChat(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Reply{Body: response(`[{"text":"Tokyo."}]`, "STOP")})
	temp := 0.5
	resp, err := newModel(t, srv).Chat(context.Background(), llm.Request{
		System:      "Answer briefly.",
		Messages:    []llm.Message{{Role: llm.RoleUser, Content: "Capital of Japan?"}, {Role: llm.RoleAssistant, Content: "Tokyo."}, {Role: llm.RoleUser, Content: "And France?"}},
		Temperature: &temp,
		MaxTokens:   100,
	})
	require.NoError(t, err)
	assert.Equal(t, llm.Message{Role: llm.RoleAssistant, Content: "Tokyo."}, resp.Message)
	assert.Equal(t, llm.Usage{InputTokens: 8, OutputTokens: 7}, resp.Usage, "thinking tokens count as output")
	assert.Equal(t, llm.StopEnd, resp.StopReason)

	got := srv.Last()
	assert.Equal(t, "/v1beta/models/gemini-2.5-flash:generateContent", got.Path)
	assert.Equal(t, "AIza-test-secret", got.Header.Get("X-Goog-Api-Key"))
	assert.JSONEq(t, `{
		"systemInstruction":{"role":"user","parts":[{"text":"Answer briefly."}]},
		"contents":[
			{"role":"user","parts":[{"text":"Capital of Japan?"}]},
			{"role":"model","parts":[{"text":"Tokyo."}]},
			{"role":"user","parts":[{"text":"And France?"}]}],
		"generationConfig":{"temperature":0.5,"maxOutputTokens":100}}`, string(got.Body))
}

// TestThinkingBudget: a thinking budget is sent as Gemini's thinkingConfig,
// and on top of the answer's cap, since Gemini counts thinking tokens in
// maxOutputTokens; a budget of 0 turns thinking off.
func TestThinkingBudget(t *testing.T) {
	for _, tc := range []struct {
		budget int
		want   string
	}{
		{1024, `{"temperature":0,"maxOutputTokens":1424,"thinkingConfig":{"thinkingBudget":1024}}`},
		{0, `{"temperature":0,"maxOutputTokens":400,"thinkingConfig":{"thinkingBudget":0}}`},
	} {
		srv := fakeserver.New(t, fakeserver.Reply{Body: response(`[{"text":"ok"}]`, "STOP")})
		zero, budget := 0.0, tc.budget
		_, err := newModel(t, srv).Chat(context.Background(), llm.Request{Messages: ask.Messages, Temperature: &zero, MaxTokens: 400, ThinkingBudget: &budget})
		require.NoError(t, err)
		var body struct {
			GenerationConfig json.RawMessage `json:"generationConfig"`
		}
		require.NoError(t, json.Unmarshal(srv.Last().Body, &body))
		assert.JSONEq(t, tc.want, string(body.GenerationConfig))
	}
}

// TestReplySchema: a structured reply asks Gemini for JSON under the schema.
func TestReplySchema(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Reply{Body: response(`[{"text":"{\"plan\":[\"a\"]}"}]`, "STOP")})
	schema := `{"type":"object","properties":{"plan":{"type":"array","items":{"type":"string"}}},"required":["plan"]}`
	_, err := newModel(t, srv).Chat(context.Background(), llm.Request{Messages: ask.Messages, Reply: &llm.Schema{Name: "plan", Schema: json.RawMessage(schema)}})
	require.NoError(t, err)
	var body struct {
		GenerationConfig json.RawMessage `json:"generationConfig"`
	}
	require.NoError(t, json.Unmarshal(srv.Last().Body, &body))
	assert.JSONEq(t, `{"responseMimeType":"application/json","responseJsonSchema":`+schema+`}`, string(body.GenerationConfig))
}

func TestToolRoundTripRequest(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Reply{Body: response(`[{"text":"Found."}]`, "STOP")})
	_, err := newModel(t, srv).Chat(context.Background(), llm.Request{
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "find go and rust"},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
				{ID: "gemini-call-resp1-0", Name: "search", Arguments: json.RawMessage(`{"query":"go"}`), Signature: "c2lnMQ=="},
				{ID: "fc_7", Name: "list", Arguments: json.RawMessage(`not json`)},
			}},
			{Role: llm.RoleTool, ToolCallID: "gemini-call-resp1-0", Content: "go: 3 hits"},
			{Role: llm.RoleTool, ToolCallID: "fc_7", Content: `{"items":["a","b"]}`},
		},
		Tools:      []llm.Tool{searchTool, {Name: "list", Description: "list documents"}},
		ToolChoice: llm.ToolChoiceAuto,
	})
	require.NoError(t, err)
	// The SDK leaves out empty args and sends an empty generationConfig.
	want := `{
		"generationConfig":{},
		"contents":[
			{"role":"user","parts":[{"text":"find go and rust"}]},
			{"role":"model","parts":[
				{"functionCall":{"name":"search","args":{"query":"go"}},"thoughtSignature":"c2lnMQ=="},
				{"functionCall":{"id":"fc_7","name":"list"}}]},
			{"role":"user","parts":[
				{"functionResponse":{"name":"search","response":{"output":"go: 3 hits"}}},
				{"functionResponse":{"id":"fc_7","name":"list","response":{"items":["a","b"]}}}]}],
		"tools":[{"functionDeclarations":[
			{"name":"search","description":"search the knowledge base","parametersJsonSchema":` + searchSchema + `},
			{"name":"list","description":"list documents"}]}]}`
	assert.JSONEq(t, want, string(srv.Last().Body))
}

func TestToolResultWithoutKnownCallFails(t *testing.T) {
	srv := fakeserver.New(t)
	_, err := newModel(t, srv).Chat(context.Background(), llm.Request{Messages: []llm.Message{
		{Role: llm.RoleUser, Content: "q"}, {Role: llm.RoleTool, ToolCallID: "nowhere", Content: "x"},
	}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"nowhere"`)
	assert.Empty(t, srv.Requests())
}

func TestToolChoice(t *testing.T) {
	tests := []struct {
		choice llm.ToolChoice
		want   string
	}{
		{llm.ToolChoiceRequired, `{"functionCallingConfig":{"mode":"ANY"}}`},
		{llm.ToolChoiceNone, `{"functionCallingConfig":{"mode":"NONE"}}`},
		{"search", `{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["search"]}}`},
	}
	for _, tt := range tests {
		t.Run(string(tt.choice), func(t *testing.T) {
			srv := fakeserver.New(t, fakeserver.Reply{Body: response(`[{"text":"x"}]`, "STOP")})
			req := ask
			req.Tools, req.ToolChoice = []llm.Tool{searchTool}, tt.choice
			_, err := newModel(t, srv).Chat(context.Background(), req)
			require.NoError(t, err)
			got, _ := json.Marshal(srv.Last().JSON(t)["toolConfig"])
			assert.JSONEq(t, tt.want, string(got))
		})
	}
}

func TestChatParallelToolCalls(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Reply{Body: response(`[
		{"functionCall":{"name":"search","args":{"query":"go"}},"thoughtSignature":"c2lnMQ=="},
		{"functionCall":{"name":"search","args":{"query":"rust","limit":2}}}]`, "STOP")})
	resp, err := newModel(t, srv).Chat(context.Background(), ask)
	require.NoError(t, err)
	assert.Equal(t, llm.StopToolCalls, resp.StopReason)
	require.Len(t, resp.Message.ToolCalls, 2)
	a, b := resp.Message.ToolCalls[0], resp.Message.ToolCalls[1]
	assert.Equal(t, "search", a.Name)
	assert.JSONEq(t, `{"query":"go"}`, string(a.Arguments))
	assert.Equal(t, "c2lnMQ==", a.Signature)
	assert.JSONEq(t, `{"query":"rust","limit":2}`, string(b.Arguments))
	assert.NotEqual(t, a.ID, b.ID, "calls without Gemini IDs still get distinct ones")
	assert.Empty(t, b.Signature)
}

func TestStopReasons(t *testing.T) {
	for finish, want := range map[string]llm.StopReason{
		"STOP": llm.StopEnd, "MAX_TOKENS": llm.StopLength, "SAFETY": llm.StopContentFilter,
		"RECITATION": llm.StopContentFilter, "PROHIBITED_CONTENT": llm.StopContentFilter,
		"MALFORMED_FUNCTION_CALL": llm.StopOther, "OTHER": llm.StopOther,
	} {
		t.Run(finish, func(t *testing.T) {
			srv := fakeserver.New(t, fakeserver.Reply{Body: response(`[{"text":"x"}]`, finish)})
			resp, err := newModel(t, srv).Chat(context.Background(), ask)
			require.NoError(t, err)
			assert.Equal(t, want, resp.StopReason)
		})
	}
}

func TestBlockedPrompt(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Reply{Body: `{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":8,"totalTokenCount":8}}`})
	resp, err := newModel(t, srv).Chat(context.Background(), ask)
	require.NoError(t, err)
	assert.Equal(t, llm.StopContentFilter, resp.StopReason)
	assert.Empty(t, resp.Message.Content)
}

func TestStreamText(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Reply{CRLF: true, Events: []string{
		chunk(`[{"text":"東京"}]`, ""),
		chunk(`[{"text":" is the"}]`, ""),
		chunk(`[{"text":" capital."}]`, "STOP"),
	}})
	var texts []string
	resp, err := newModel(t, srv).Stream(context.Background(), ask, func(d llm.Delta) error {
		assert.Nil(t, d.ToolCall)
		texts = append(texts, d.Text)
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"東京", " is the", " capital."}, texts)
	assert.Equal(t, "東京 is the capital.", resp.Message.Content)
	assert.Equal(t, llm.Usage{InputTokens: 8, OutputTokens: 5}, resp.Usage)
	assert.Equal(t, llm.StopEnd, resp.StopReason)
	assert.Equal(t, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", srv.Last().Path)
}

func TestStreamParallelToolCalls(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Reply{CRLF: true, Events: []string{
		chunk(`[{"text":"Checking."}]`, ""),
		chunk(`[{"functionCall":{"name":"search","args":{"query":"go"}},"thoughtSignature":"c2lnMQ=="},{"functionCall":{"id":"fc_2","name":"list","args":{}}}]`, "STOP"),
	}})
	var calls []llm.ToolCallDelta
	resp, err := newModel(t, srv).Stream(context.Background(), ask, func(d llm.Delta) error {
		if d.ToolCall != nil {
			calls = append(calls, *d.ToolCall)
		}
		return nil
	})
	require.NoError(t, err)
	require.Len(t, calls, 2)
	assert.Equal(t, 0, calls[0].Index)
	assert.Equal(t, "search", calls[0].Name)
	assert.JSONEq(t, `{"query":"go"}`, calls[0].ArgumentsDelta)
	assert.Equal(t, llm.ToolCallDelta{Index: 1, ID: "fc_2", Name: "list", ArgumentsDelta: `{}`}, calls[1])
	assert.Equal(t, "Checking.", resp.Message.Content)
	require.Len(t, resp.Message.ToolCalls, 2)
	assert.Equal(t, "c2lnMQ==", resp.Message.ToolCalls[0].Signature)
	assert.Equal(t, llm.StopToolCalls, resp.StopReason)
}

func TestStreamCut(t *testing.T) {
	fakeserver.CheckStreamCut(t, asModel, fakeserver.Reply{CRLF: true, Events: []string{
		chunk(`[{"text":"The answer"}]`, ""), chunk(`[{"text":" is"}]`, ""),
	}}, "The answer is")
}

func TestStreamCallbackErrorStops(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Reply{CRLF: true, Events: []string{chunk(`[{"text":"a"},{"text":"b"}]`, "STOP")}})
	stop := errors.New("stop pressed")
	n := 0
	_, err := newModel(t, srv).Stream(context.Background(), ask, func(llm.Delta) error { n++; return stop })
	assert.ErrorIs(t, err, stop)
	assert.Equal(t, 1, n)
}

func TestHTTPErrors(t *testing.T) {
	fakeserver.CheckErrors(t, "gemini", "AIza-test-secret", asModel, []fakeserver.ErrorCase{
		{Name: "400", Reply: fakeserver.Reply{Status: 400, Body: `{"error":{"code":400,"message":"Invalid JSON payload received.","status":"INVALID_ARGUMENT"}}`},
			Sentinel: llm.ErrBadRequest, Code: "INVALID_ARGUMENT", InText: []string{"Invalid JSON payload received."}},
		{Name: "400 bad key", Reply: fakeserver.Reply{Status: 400, Body: `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]}}`},
			Sentinel: llm.ErrUnauthorized, Code: "API_KEY_INVALID", InText: []string{"GEMINI_API_KEY", "API key not valid"}},
		{Name: "403", Reply: fakeserver.Reply{Status: 403, Body: `{"error":{"code":403,"message":"Method doesn't allow unregistered callers.","status":"PERMISSION_DENIED"}}`},
			Sentinel: llm.ErrUnauthorized, Code: "PERMISSION_DENIED", InText: []string{"GEMINI_API_KEY"}},
		{Name: "429", Reply: fakeserver.Reply{Status: 429, Body: `{"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}`},
			Sentinel: llm.ErrRateLimited, Code: "RESOURCE_EXHAUSTED", InText: []string{"exceeded your current quota"}, RetryAfter: 37 * time.Second},
		{Name: "429 Retry-After", Reply: fakeserver.Reply{Status: 429, Header: map[string]string{"Retry-After": "3"}, Body: `{"error":{"code":429,"message":"Resource exhausted.","status":"RESOURCE_EXHAUSTED"}}`},
			Sentinel: llm.ErrRateLimited, Code: "RESOURCE_EXHAUSTED", RetryAfter: 3 * time.Second},
		{Name: "500", Reply: fakeserver.Reply{Status: 500, Body: `{"error":{"code":500,"message":"An internal error has occurred.","status":"INTERNAL"}}`},
			Code: "INTERNAL", InText: []string{"An internal error has occurred."}},
	})
}

func asModel(t *testing.T, srv *fakeserver.Server) llm.Model { return newModel(t, srv) }

func TestMalformedBody(t *testing.T) {
	fakeserver.CheckMalformed(t, "gemini", asModel, []fakeserver.MalformedCase{
		{Name: "truncated JSON", Reply: fakeserver.Reply{Body: `{"candidates":[{"content":{"parts":[{"text":"trunc`}},
		{Name: "no candidates", Reply: fakeserver.Reply{Body: `{"candidates":[]}`}},
		{Name: "truncated chunk", Stream: true, Reply: fakeserver.Reply{CRLF: true, Events: []string{chunk(`[{"text":"a"}]`, ""), `data: {"candidates":[{"content":`}}},
		{Name: "JSON instead of a stream", Stream: true, Reply: fakeserver.Reply{Body: response(`[{"text":"not a stream"}]`, "STOP")}},
	})
}

func TestNewChecksConfig(t *testing.T) {
	_, err := gemini.New(gemini.Config{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "GEMINI_API_KEY")
	m, err := gemini.New(gemini.Config{APIKey: "k", Model: "models/gemini-2.5-pro"})
	require.NoError(t, err)
	assert.Equal(t, llm.Info{Driver: "gemini", Model: "gemini-2.5-pro", Endpoint: gemini.DefaultBaseURL}, m.Info())
	m, err = gemini.New(gemini.Config{APIKey: "k"})
	require.NoError(t, err)
	assert.Equal(t, "gemini-2.5-flash", m.Info().Model)
}

func TestStreamCancelledByCaller(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Reply{Hold: true, CRLF: true, Events: []string{chunk(`[{"text":"a"}]`, "")}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := newModel(t, srv).Stream(ctx, ask, func(llm.Delta) error { cancel(); return nil })
	require.ErrorIs(t, err, context.Canceled)
	assert.Nil(t, resp)
}

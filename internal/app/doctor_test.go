package app

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"
)

// fakeChat speaks just enough of the OpenAI chat API: text, or a tool call
// when tools are offered and toolCalls is set.
func fakeChat(t *testing.T, toolCalls bool) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Tools []json.RawMessage `json:"tools"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		msg := map[string]any{"role": "assistant", "content": "OK"}
		finish := "stop"
		if len(req.Tools) > 0 && toolCalls {
			msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
				"id": "call_1", "type": "function", "function": map[string]any{"name": "echo", "arguments": `{"text":"hello"}`}}}}
			finish = "tool_calls"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "created": 1, "model": "tiny",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   map[string]any{"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestDoctor(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "idx.db")
	st, err := OpenStore(ctx, db, true)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()

	for _, tc := range []struct {
		name      string
		url       string
		wantOK    bool
		wantTool  bool
		wantError bool
	}{
		{"model with tool calls", fakeChat(t, true).URL + "/v1", true, true, false},
		{"model without tool calls", fakeChat(t, false).URL + "/v1", false, false, true},
		{"model down", "http://127.0.0.1:1/v1", false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Defaults()
			c.DB = db
			c.LLM = LLMConfig{Driver: "openai", URL: tc.url, Model: "tiny"}
			a := &App{Config: c, Log: nopLogger(), Getenv: func(string) string { return "" }}
			r := a.Doctor(ctx, 5*time.Second)
			if !r.Index.OK || r.LLM.OK != tc.wantOK || (r.LLM.Error != "") != tc.wantError || r.Failed() == tc.wantOK {
				t.Errorf("%+v", r)
			}
			if tc.url != "http://127.0.0.1:1/v1" && (r.LLM.ToolCall == nil || *r.LLM.ToolCall != tc.wantTool) {
				t.Errorf("toolCall %v, want %v", r.LLM.ToolCall, tc.wantTool)
			}
			if r.Embedder.Configured || !r.Embedder.OK {
				t.Errorf("no embedder configured, yet %+v", r.Embedder)
			}
		})
	}

	c := Defaults()
	c.DB = filepath.Join(dir, "missing.db")
	a := &App{Config: c, Log: nopLogger(), Getenv: func(string) string { return "" }}
	if r := a.Doctor(ctx, time.Second); r.Index.OK || r.Index.Fix == "" || !r.Failed() {
		t.Errorf("missing index: %+v", r.Index)
	}
}

func nopLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

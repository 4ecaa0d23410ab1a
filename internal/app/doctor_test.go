package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/tools"
)

// fakeChat speaks just enough of the OpenAI chat API: text, or, when
// tools are offered, text and a call of sagasu_query with each of calls'
// arguments (none: text only). The tools request it got is kept in got.
func fakeChat(t *testing.T, got *probeRequest, calls ...string) *httptest.Server {
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req probeRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		msg := map[string]any{"role": "assistant", "content": "OK"}
		finish := "stop"
		if len(req.Tools) > 0 {
			if got != nil {
				mu.Lock()
				*got = req
				mu.Unlock()
			}
			if len(calls) > 0 {
				var tcs []any
				for i, args := range calls {
					tcs = append(tcs, map[string]any{"id": fmt.Sprintf("call_%d", i), "type": "function",
						"function": map[string]any{"name": "sagasu_query", "arguments": args}})
				}
				msg = map[string]any{"role": "assistant", "content": "sagasu_query(", "tool_calls": tcs}
				finish = "tool_calls"
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "created": 1, "model": "tiny",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   map[string]any{"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// probeRequest is what doctor's forced call sends, as far as the test
// looks.
type probeRequest struct {
	Tools []struct {
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	ToolChoice any `json:"tool_choice"`
	MaxTokens  int `json:"max_tokens"`
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

	var sent probeRequest
	for _, tc := range []struct {
		name      string
		url       string
		wantOK    bool
		wantTool  bool
		wantError bool
	}{
		{"model with tool calls", fakeChat(t, &sent, `{"query":"sitemap"}`).URL + "/v1", true, true, false},
		// What SmolLM2-135M does: a word of text, the call, the call again
		// until the token limit cuts the last one short.
		{"a valid call among others", fakeChat(t, nil, `{"query":"sitemap"}`, `{"query":"sitemap"}`, `{"`).URL + "/v1", true, true, false},
		{"only a broken call", fakeChat(t, nil, `{"`).URL + "/v1", false, false, true},
		{"model without tool calls", fakeChat(t, nil).URL + "/v1", false, false, true},
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

	// The probe offers sagasu_query as the agents offer it, forced, within
	// the reply size the real-model test proves enough.
	want, err := tools.FunctionTools(tools.NameQuery)
	if err != nil {
		t.Fatal(err)
	}
	if len(sent.Tools) != len(want) || sent.ToolChoice != "required" || sent.MaxTokens != probeMaxTokens {
		t.Fatalf("the probe sent %d tools, tool_choice %v, max_tokens %d; want the agents' %d, required, %d",
			len(sent.Tools), sent.ToolChoice, sent.MaxTokens, len(want), probeMaxTokens)
	}
	for i, w := range want {
		if got := sent.Tools[i].Function; got.Name != w.Name || !jsonEqual(got.Parameters, w.Parameters) {
			t.Errorf("probe tool %d: %s %s; want the agents' %s %s", i, got.Name, got.Parameters, w.Name, w.Parameters)
		}
	}

	c := Defaults()
	c.DB = filepath.Join(dir, "missing.db")
	a := &App{Config: c, Log: nopLogger(), Getenv: func(string) string { return "" }}
	if r := a.Doctor(ctx, time.Second); r.Index.OK || r.Index.Fix == "" || !r.Failed() {
		t.Errorf("missing index: %+v", r.Index)
	}
}

func nopLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

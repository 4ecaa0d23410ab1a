package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/llm/llmtest"
	"github.com/sagasu-dev/sagasu/internal/telemetry/otlptest"
)

// openAIWire is a chat server speaking OpenAI's wire format (JSON, or SSE
// when asked to stream) that answers every request with the same text and
// reports usage, as llama.cpp and vLLM do.
func openAIWire(t *testing.T, text string, in, out int) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Stream bool `json:"stream"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		usage := map[string]int{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out}
		msg := map[string]any{"role": "assistant", "content": text}
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "created": 1, "model": "wire",
				"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": "stop"}}, "usage": usage})
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, chunk := range []map[string]any{
			{"choices": []any{map[string]any{"index": 0, "delta": msg}}},
			{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": "stop"}}},
			{"choices": []any{}, "usage": usage},
		} {
			chunk["id"], chunk["object"], chunk["created"], chunk["model"] = "x", "chat.completion.chunk", 1, "wire"
			b, _ := json.Marshal(chunk)
			fmt.Fprintf(w, "data: %s\n\n", b)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// One `sagasu agent run` sends its trace to an OTLP/HTTP receiver on
// loopback: the run's span, and under it a chat span per model call with
// the model and the token counts the server reported.
func TestAgentRunTraceReachesAnOTLPReceiver(t *testing.T) {
	base := openAIWire(t, "I could not find it.", 120, 9)
	spans, chats := tracedAgentRun(t, base, "wire-model")
	for _, c := range chats {
		if c.Attrs["gen_ai.usage.input_tokens"] != int64(120) || c.Attrs["gen_ai.usage.output_tokens"] != int64(9) {
			t.Errorf("chat span tokens %v/%v, want the server's 120/9", c.Attrs["gen_ai.usage.input_tokens"], c.Attrs["gen_ai.usage.output_tokens"])
		}
	}
	_ = spans
}

// The same with the real local chat model (SmolLM2-135M behind
// llama-server): every chat span has either the tokens the server counted
// or the kind of error that stopped the call.
func TestAgentRunTraceWithTheLocalModel(t *testing.T) {
	base, model := llmtest.LocalModel(t)
	_, chats := tracedAgentRun(t, base, model)
	for _, c := range chats {
		in, _ := c.Attrs["gen_ai.usage.input_tokens"].(int64)
		if in == 0 && c.Attrs["error.type"] == nil {
			t.Errorf("chat span with neither tokens nor an error: %v", c.Attrs)
		}
	}
}

func tracedAgentRun(t *testing.T, base, model string) ([]otlptest.Span, []otlptest.Span) {
	dir := docsFixture(t)
	mustRun(t, dir, "index", "docs")
	rcv := otlptest.Start(t)

	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	var out, errb bytes.Buffer
	env := []string{"HOME=" + dir, "OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.URL}
	code := run(context.Background(), []string{"agent", "run", "--json", "--goal", "find how to configure the search index",
		"--llm", "openai", "--llm-url", base, "--llm-model", model,
		// Short replies: a call to a model on this machine is bounded by its
		// progress, not the clock, so the reply's length bounds its time.
		"--max-tokens", "128"}, strings.NewReader(""), &out, &errb, env)
	if code != 0 {
		t.Fatalf("agent run: exit %d\n%s", code, errb.String())
	}
	spans := rcv.Spans()
	agents := rcv.Named("invoke_agent sagasu plan-and-act")
	if len(agents) != 1 {
		t.Fatalf("%d agent spans; received %d spans", len(agents), len(spans))
	}
	agent := agents[0]
	chats := rcv.Named("chat " + model)
	if len(chats) == 0 {
		t.Fatalf("no chat span for %s", model)
	}
	var in, outTok int64
	for _, c := range chats {
		if c.TraceID != agent.TraceID || c.Attrs["gen_ai.provider.name"] != "openai" || c.Attrs["gen_ai.request.model"] != model {
			t.Errorf("chat span %+v is not in the run's trace with its model", c)
		}
		i, _ := c.Attrs["gen_ai.usage.input_tokens"].(int64)
		o, _ := c.Attrs["gen_ai.usage.output_tokens"].(int64)
		in, outTok = in+i, outTok+o
	}
	// What the run sent, for the record.
	counts := map[string]int{}
	for _, s := range spans {
		counts[s.Name]++
	}
	names := make([]string, 0, len(counts))
	for n, c := range counts {
		names = append(names, fmt.Sprintf("%s ×%d", n, c))
	}
	sort.Strings(names)
	t.Logf("received %d spans in %d requests: %s; chat tokens %d in, %d out", len(spans), rcv.Requests(), strings.Join(names, ", "), in, outTok)
	t.Logf("first chat span attributes: %v", chats[0].Attrs)
	return spans, chats
}

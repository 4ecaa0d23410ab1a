package telemetry_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/llm/llmtest"
	"github.com/sagasu-dev/sagasu/internal/telemetry"
	"github.com/sagasu-dev/sagasu/internal/telemetry/otlptest"
)

func TestNoEndpointMeansNoTracer(t *testing.T) {
	for _, env := range [][]string{
		nil,
		{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318", "OTEL_SDK_DISABLED=true"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER=none"},
	} {
		tr, err := telemetry.New(context.Background(), telemetry.Options{Environ: env})
		if err != nil || tr != nil {
			t.Fatalf("%v: tracer %v, err %v; want none", env, tr, err)
		}
		m := llmtest.New()
		if got := tr.Model(m); got != llm.Model(m) {
			t.Error("a nil tracer wrapped the model")
		}
		if tr.MCPMiddleware() != nil || tr.OnEvent(context.Background(), nil) != nil {
			t.Error("a nil tracer added a middleware or an event handler")
		}
		ctx, end := tr.StartAgent(context.Background(), "a", "")
		end(nil)
		if ctx != context.Background() {
			t.Error("a nil tracer changed the context")
		}
	}
	if _, err := telemetry.New(context.Background(), telemetry.Options{Environ: []string{"OTEL_EXPORTER_OTLP_ENDPOINT=127.0.0.1:4318"}}); err == nil || !strings.Contains(err.Error(), "http://") {
		t.Errorf("an endpoint without scheme: %v, want an error that says what to give", err)
	}
}

func setup(t *testing.T, extra ...string) (*telemetry.Tracer, *otlptest.Receiver) {
	rcv := otlptest.Start(t)
	env := append([]string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.URL, "OTEL_EXPORTER_OTLP_HEADERS=x-team=search%20team"}, extra...)
	tr, err := telemetry.New(context.Background(), telemetry.Options{Environ: env, Version: "v1.2.3"})
	if err != nil || tr == nil {
		t.Fatalf("tracer %v, err %v", tr, err)
	}
	return tr, rcv
}

func one(t *testing.T, rcv *otlptest.Receiver, name string) otlptest.Span {
	t.Helper()
	s := rcv.Named(name)
	if len(s) != 1 {
		var names []string
		for _, x := range rcv.Spans() {
			names = append(names, x.Name)
		}
		t.Fatalf("%d spans named %q; received %v", len(s), name, names)
	}
	return s[0]
}

const secret = "the prompt says PURPLE-ELEPHANT"

func run(t *testing.T, tr *telemetry.Tracer) {
	ctx, end := tr.StartAgent(context.Background(), "sagasu ask", "")
	m := tr.Model(llmtest.New(llmtest.Func(func(llm.Request) (*llm.Response, error) {
		return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: "answer about PURPLE-ELEPHANT"},
			Usage: llm.Usage{InputTokens: 42, OutputTokens: 7}, StopReason: llm.StopEnd}, nil
	}), llmtest.Fail(errors.New("boom: "+secret))))
	if _, err := m.Chat(ctx, llm.Request{System: secret, Messages: []llm.Message{{Role: llm.RoleUser, Content: secret}}, MaxTokens: 100}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Chat(ctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: secret}}}); err == nil {
		t.Fatal("the scripted failure did not fail")
	}
	ok, failed := true, false
	now := time.Now()
	on := tr.OnEvent(ctx, nil)
	on(graph.Event{Type: graph.TypeAction, Tool: "sagasu_search", Arguments: json.RawMessage(`{"query":"` + secret + `"}`)})
	on(graph.Event{Type: graph.TypeObservation, Tool: "sagasu_search", OK: &ok, LatencyMs: 30, Time: now, Arguments: json.RawMessage(`{"query":"` + secret + `"}`), Observation: "3 results: " + secret})
	on(graph.Event{Type: graph.TypeObservation, Tool: "browser_navigate", OK: &failed, LatencyMs: 5, Time: now})
	end(nil)
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// Spans reach a real OTLP/HTTP endpoint (protobuf decoded with the
// protocol's own types) with the GenAI conventions' names and attributes,
// nested under the agent's span, and without any text of the run.
func TestSpansReachAnOTLPReceiverWithoutContent(t *testing.T) {
	tr, rcv := setup(t)
	run(t, tr)
	agent := one(t, rcv, "invoke_agent sagasu ask")
	if agent.Attrs["gen_ai.operation.name"] != "invoke_agent" || agent.Attrs["gen_ai.agent.name"] != "sagasu ask" || agent.Service != "sagasu" {
		t.Errorf("agent span %+v", agent)
	}
	chats := rcv.Named("chat scripted")
	if len(chats) != 2 {
		t.Fatalf("%d chat spans, want 2: %+v", len(chats), rcv.Spans())
	}
	c := chats[0]
	want := map[string]any{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "llmtest", "gen_ai.system": "llmtest",
		"gen_ai.request.model": "scripted", "gen_ai.usage.input_tokens": int64(42), "gen_ai.usage.output_tokens": int64(7),
		"gen_ai.request.max_tokens": int64(100),
	}
	for k, v := range want {
		if c.Attrs[k] != v {
			t.Errorf("chat span %s = %v (%T), want %v", k, c.Attrs[k], c.Attrs[k], v)
		}
	}
	if c.Kind != "SPAN_KIND_CLIENT" || c.ParentID != agent.SpanID || c.TraceID != agent.TraceID {
		t.Errorf("chat span kind %s parent %s, want a client span under the agent %s", c.Kind, c.ParentID, agent.SpanID)
	}
	if !chats[1].Error || chats[1].Attrs["error.type"] == nil || chats[1].Message != "" {
		t.Errorf("failed chat: error %v type %v message %q; want an error with its type and no text", chats[1].Error, chats[1].Attrs["error.type"], chats[1].Message)
	}
	tool := one(t, rcv, "execute_tool sagasu_search")
	if tool.Attrs["gen_ai.tool.name"] != "sagasu_search" || tool.Attrs["gen_ai.operation.name"] != "execute_tool" || tool.ParentID != agent.SpanID || tool.Error {
		t.Errorf("tool span %+v", tool)
	}
	if d := tool.End.Sub(tool.Start); d != 30*time.Millisecond {
		t.Errorf("tool span lasts %s, want the call's 30ms", d)
	}
	if !one(t, rcv, "execute_tool browser_navigate").Error {
		t.Error("a failed tool call is not marked as an error")
	}
	for _, s := range rcv.Spans() {
		for k, v := range s.Attrs {
			if strings.Contains(fmtAny(v), "PURPLE-ELEPHANT") {
				t.Errorf("span %q attribute %s carries the run's text without the opt-in", s.Name, k)
			}
		}
	}
	if h := rcv.Headers(); len(h) == 0 || h[0].Get("x-team") != "search team" {
		t.Errorf("OTEL_EXPORTER_OTLP_HEADERS not sent: %v", h)
	}
}

func fmtAny(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestContentOnlyWithTheOptIn(t *testing.T) {
	tr, rcv := setup(t, "SAGASU_OTEL_CAPTURE_CONTENT=true")
	run(t, tr)
	c := rcv.Named("chat scripted")[0]
	for _, k := range []string{"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions"} {
		if !strings.Contains(fmtAny(c.Attrs[k]), "PURPLE-ELEPHANT") {
			t.Errorf("with the opt-in, %s = %v", k, c.Attrs[k])
		}
	}
	tool := one(t, rcv, "execute_tool sagasu_search")
	if !strings.Contains(fmtAny(tool.Attrs["gen_ai.tool.call.arguments"]), "PURPLE") || !strings.Contains(fmtAny(tool.Attrs["gen_ai.tool.call.result"]), "PURPLE") {
		t.Errorf("with the opt-in, tool span %v", tool.Attrs)
	}
}

type echoIn struct {
	Text string `json:"text"`
}

func TestMCPToolCallsAreSpans(t *testing.T) {
	tr, rcv := setup(t)
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		if in.Text == "fail" {
			return nil, nil, errors.New("refused " + secret)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	srv.AddReceivingMiddleware(tr.MCPMiddleware())
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, text := range []string{"hi " + secret, "fail"} {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	spans := rcv.Named("execute_tool echo")
	if len(spans) != 2 || spans[0].Error || !spans[1].Error || spans[0].Attrs["gen_ai.tool.name"] != "echo" {
		t.Fatalf("spans %+v", spans)
	}
	if strings.Contains(fmtAny(spans), "PURPLE") {
		t.Errorf("MCP tool spans carry text without the opt-in: %+v", spans)
	}
}

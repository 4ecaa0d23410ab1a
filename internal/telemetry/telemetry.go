// Package telemetry exports OpenTelemetry traces of agent runs, asks, model
// calls and tool calls over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, following the GenAI semantic
// conventions. Without it New returns nil, and a nil *Tracer does nothing:
// no SDK is started and wrapped values are returned as they are.
//
// Prompts, answers, documents and tool arguments and results are left out
// of spans unless the user opts in with SAGASU_OTEL_CAPTURE_CONTENT=true
// (or OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true).
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Attribute keys of the GenAI semantic conventions (and the general ones
// they use), as strings so no semconv package version is pinned.
const (
	AttrOperation     = "gen_ai.operation.name"
	AttrProvider      = "gen_ai.provider.name"
	AttrSystem        = "gen_ai.system" // the name before gen_ai.provider.name; both are set
	AttrRequestModel  = "gen_ai.request.model"
	AttrMaxTokens     = "gen_ai.request.max_tokens"
	AttrTemperature   = "gen_ai.request.temperature"
	AttrFinishReasons = "gen_ai.response.finish_reasons"
	AttrInputTokens   = "gen_ai.usage.input_tokens"
	AttrOutputTokens  = "gen_ai.usage.output_tokens"
	AttrInputMsgs     = "gen_ai.input.messages"
	AttrOutputMsgs    = "gen_ai.output.messages"
	AttrSystemInstr   = "gen_ai.system_instructions"
	AttrToolName      = "gen_ai.tool.name"
	AttrToolType      = "gen_ai.tool.type"
	AttrToolCallID    = "gen_ai.tool.call.id"
	AttrToolArgs      = "gen_ai.tool.call.arguments"
	AttrToolResult    = "gen_ai.tool.call.result"
	AttrAgentName     = "gen_ai.agent.name"
	AttrConversation  = "gen_ai.conversation.id"
	AttrErrorType     = "error.type"
	AttrServerAddress = "server.address"
	AttrServerPort    = "server.port"
)

// Operation names of the conventions.
const (
	OpChat        = "chat"
	OpExecuteTool = "execute_tool"
	OpInvokeAgent = "invoke_agent"
)

// Tracer makes sagasu's spans. A nil *Tracer is valid and does nothing.
type Tracer struct {
	tp      *sdktrace.TracerProvider
	tr      trace.Tracer
	content bool
}

// Options configure New.
type Options struct {
	// Environ is the environment ("KEY=value" entries) the OTEL_* settings
	// are read from.
	Environ []string
	// Version is sagasu's version, recorded as service.version.
	Version string
}

// New starts an OTLP/HTTP exporter when the environment names an
// endpoint, and returns nil when it does not (or OTEL_SDK_DISABLED=true,
// or OTEL_TRACES_EXPORTER=none). Call Shutdown before exiting, which sends
// what is still buffered.
func New(ctx context.Context, opt Options) (*Tracer, error) {
	env := func(k string) string {
		for _, kv := range opt.Environ {
			if key, v, ok := strings.Cut(kv, "="); ok && key == k {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	if strings.EqualFold(env("OTEL_SDK_DISABLED"), "true") || strings.EqualFold(env("OTEL_TRACES_EXPORTER"), "none") {
		return nil, nil
	}
	endpoint, err := tracesURL(env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), env("OTEL_EXPORTER_OTLP_ENDPOINT"))
	if err != nil || endpoint == "" {
		return nil, err
	}
	eopts := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(endpoint)}
	headers, err := parseHeaders(env("OTEL_EXPORTER_OTLP_HEADERS"), env("OTEL_EXPORTER_OTLP_TRACES_HEADERS"))
	if err != nil {
		return nil, err
	}
	if len(headers) > 0 {
		eopts = append(eopts, otlptracehttp.WithHeaders(headers))
	}
	exp, err := otlptracehttp.New(ctx, eopts...)
	if err != nil {
		return nil, fmt.Errorf("OTLP exporter for %s: %w", endpoint, err)
	}
	name := env("OTEL_SERVICE_NAME")
	if name == "" {
		name = "sagasu"
	}
	res := resource.NewSchemaless(attribute.String("service.name", name), attribute.String("service.version", opt.Version))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	capture := func(k string) bool { b, _ := strconv.ParseBool(env(k)); return b }
	return &Tracer{
		tp:      tp,
		tr:      tp.Tracer("github.com/sagasu-dev/sagasu", trace.WithInstrumentationVersion(opt.Version)),
		content: capture("SAGASU_OTEL_CAPTURE_CONTENT") || capture("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"),
	}, nil
}

// tracesURL is the traces endpoint: the signal's own variable as given, or
// the base endpoint with /v1/traces appended (as the OTLP exporter spec says).
func tracesURL(signal, base string) (string, error) {
	raw := signal
	if raw == "" && base != "" {
		raw = strings.TrimRight(base, "/") + "/v1/traces"
	}
	if raw == "" {
		return "", nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT %q: give an http:// or https:// URL such as http://127.0.0.1:4318", raw)
	}
	return raw, nil
}

// parseHeaders reads "k1=v1,k2=v2" (values URL-encoded); the signal's own
// variable wins over the general one.
func parseHeaders(general, signal string) (map[string]string, error) {
	out := map[string]string{}
	for _, s := range []string{general, signal} {
		for _, pair := range strings.Split(s, ",") {
			if strings.TrimSpace(pair) == "" {
				continue
			}
			k, v, ok := strings.Cut(pair, "=")
			if !ok {
				return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_HEADERS: %q is not key=value", strings.TrimSpace(k))
			}
			if dv, err := url.QueryUnescape(strings.TrimSpace(v)); err == nil {
				v = dv
			}
			out[strings.TrimSpace(k)] = v
		}
	}
	return out, nil
}

// Shutdown sends the spans still buffered and stops the exporter.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.tp.Shutdown(ctx)
}

// CapturesContent reports whether the user opted in to text in spans.
func (t *Tracer) CapturesContent() bool { return t != nil && t.content }

// StartAgent starts an invoke_agent span for one agent run or ask; end it
// with the run's error (nil on success). id is the run or thread, if any.
func (t *Tracer) StartAgent(ctx context.Context, agent, id string) (context.Context, func(error)) {
	if t == nil {
		return ctx, func(error) {}
	}
	attrs := []attribute.KeyValue{attribute.String(AttrOperation, OpInvokeAgent), attribute.String(AttrAgentName, agent)}
	if id != "" {
		attrs = append(attrs, attribute.String(AttrConversation, id))
	}
	ctx, span := t.tr.Start(ctx, OpInvokeAgent+" "+agent, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return ctx, func(err error) { finish(span, err, t.content) }
}

// Tool records one finished tool call as an execute_tool span that began
// at start. args and result are kept only with the content opt-in.
func (t *Tracer) Tool(ctx context.Context, name, callID string, start, end time.Time, args, result string, failed error) {
	if t == nil {
		return
	}
	_, span := t.StartTool(ctx, name, callID, args, trace.WithTimestamp(start))
	t.EndTool(span, result, failed, trace.WithTimestamp(end))
}

// StartTool starts an execute_tool span; EndTool ends it.
func (t *Tracer) StartTool(ctx context.Context, name, callID, args string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if t == nil {
		return ctx, trace.SpanFromContext(ctx)
	}
	attrs := []attribute.KeyValue{
		attribute.String(AttrOperation, OpExecuteTool),
		attribute.String(AttrToolName, name),
		attribute.String(AttrToolType, "function"),
	}
	if callID != "" {
		attrs = append(attrs, attribute.String(AttrToolCallID, callID))
	}
	if t.content && args != "" {
		attrs = append(attrs, attribute.String(AttrToolArgs, args))
	}
	opts = append(opts, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return t.tr.Start(ctx, OpExecuteTool+" "+name, opts...)
}

// EndTool ends a span from StartTool.
func (t *Tracer) EndTool(span trace.Span, result string, failed error, opts ...trace.SpanEndOption) {
	if t == nil {
		return
	}
	if t.content && result != "" {
		span.SetAttributes(attribute.String(AttrToolResult, result))
	}
	finish(span, failed, t.content, opts...)
}

// finish records err and ends span. The error's text (which may quote a
// document or a prompt) is kept only with the content opt-in; its kind
// always is.
func finish(span trace.Span, err error, content bool, opts ...trace.SpanEndOption) {
	if err != nil {
		span.SetAttributes(attribute.String(AttrErrorType, errorType(err)))
		msg := ""
		if content {
			msg = err.Error()
		}
		span.SetStatus(codes.Error, msg)
	}
	span.End(opts...)
}

// errorType names an error's kind for error.type: a context ending, or its
// Go type, or _OTHER for anonymous errors.
func errorType(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	t := fmt.Sprintf("%T", err)
	if strings.HasPrefix(t, "*errors.") || strings.HasPrefix(t, "*fmt.") {
		return "_OTHER"
	}
	return t
}

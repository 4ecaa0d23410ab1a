package telemetry

import (
	"context"
	"encoding/json"
	"net"
	"net/url"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/sagasu-dev/sagasu/internal/llm"
)

// Model wraps m so every Chat and Stream is a chat span with the model,
// provider, token usage and finish reason. A nil Tracer returns m itself.
func (t *Tracer) Model(m llm.Model) llm.Model {
	if t == nil || m == nil {
		return m
	}
	return &tracedModel{Model: m, t: t}
}

type tracedModel struct {
	llm.Model
	t *Tracer
}

// providers maps sagasu's drivers onto the conventions' provider names.
var providers = map[string]string{"openai": "openai", "anthropic": "anthropic", "gemini": "gcp.gemini"}

func (m *tracedModel) start(ctx context.Context, req llm.Request) (context.Context, trace.Span) {
	info := m.Model.Info()
	provider := providers[info.Driver]
	if provider == "" {
		provider = info.Driver
	}
	attrs := []attribute.KeyValue{
		attribute.String(AttrOperation, OpChat),
		attribute.String(AttrProvider, provider),
		attribute.String(AttrSystem, provider),
		attribute.String(AttrRequestModel, info.Model),
	}
	if u, err := url.Parse(info.Endpoint); err == nil && u.Host != "" {
		host, port, err := net.SplitHostPort(u.Host)
		if err != nil {
			host, port = u.Host, map[string]string{"http": "80", "https": "443"}[u.Scheme]
		}
		attrs = append(attrs, attribute.String(AttrServerAddress, host))
		if p, err := strconv.Atoi(port); err == nil {
			attrs = append(attrs, attribute.Int(AttrServerPort, p))
		}
	}
	if req.MaxTokens > 0 {
		attrs = append(attrs, attribute.Int(AttrMaxTokens, req.MaxTokens))
	}
	if req.Temperature != nil {
		attrs = append(attrs, attribute.Float64(AttrTemperature, *req.Temperature))
	}
	if m.t.content {
		if req.System != "" {
			attrs = append(attrs, attribute.String(AttrSystemInstr, req.System))
		}
		if b, err := json.Marshal(req.Messages); err == nil {
			attrs = append(attrs, attribute.String(AttrInputMsgs, string(b)))
		}
	}
	return m.t.tr.Start(ctx, OpChat+" "+info.Model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

func (m *tracedModel) end(span trace.Span, resp *llm.Response, err error) {
	if resp != nil {
		span.SetAttributes(
			attribute.Int(AttrInputTokens, resp.Usage.InputTokens),
			attribute.Int(AttrOutputTokens, resp.Usage.OutputTokens),
			attribute.StringSlice(AttrFinishReasons, []string{string(resp.StopReason)}),
		)
		if m.t.content {
			if b, err := json.Marshal([]llm.Message{resp.Message}); err == nil {
				span.SetAttributes(attribute.String(AttrOutputMsgs, string(b)))
			}
		}
	}
	finish(span, err, m.t.content)
}

func (m *tracedModel) Chat(ctx context.Context, req llm.Request) (*llm.Response, error) {
	ctx, span := m.start(ctx, req)
	resp, err := m.Model.Chat(ctx, req)
	m.end(span, resp, err)
	return resp, err
}

func (m *tracedModel) Stream(ctx context.Context, req llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	ctx, span := m.start(ctx, req)
	resp, err := m.Model.Stream(ctx, req, onDelta)
	m.end(span, resp, err)
	return resp, err
}

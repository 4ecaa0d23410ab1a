// Package anthropic is the llm driver for Anthropic's Messages API through
// github.com/anthropics/anthropic-sdk-go. The system prompt goes in the
// top-level system parameter, tool calls are tool_use blocks and their
// results tool_result blocks in the next user turn, and max_tokens (which
// the API requires) defaults to 1024. The default model is
// claude-sonnet-4-5; the key comes from ANTHROPIC_API_KEY, read by
// internal/app.
package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/llm/internal/wire"
)

// DefaultBaseURL is Anthropic's API.
const DefaultBaseURL = "https://api.anthropic.com"

// DefaultModel is used when Config.Model is empty.
const DefaultModel = "claude-sonnet-4-5"

// DefaultMaxTokens is sent when the request sets no MaxTokens.
const DefaultMaxTokens = 1024

// KeyEnv is where internal/app reads the key from; errors name it.
const KeyEnv = "ANTHROPIC_API_KEY"

const driver = "anthropic"

// Config says which model to use and where.
type Config struct {
	Model   string // default DefaultModel
	BaseURL string // default DefaultBaseURL (without /v1)
	// APIKey is sent as x-api-key; required for api.anthropic.com.
	APIKey     string
	HTTPClient *http.Client  // default: a client without timeout
	Timeout    time.Duration // bounds one call, a stream included; 0 means none
}

// Model calls /v1/messages. It implements llm.Model.
type Model struct {
	svc     anthropic.MessageService
	model   string
	ep      wire.Endpoint
	timeout time.Duration
}

// New checks cfg and makes the client. It does not contact the server.
func New(cfg Config) (*Model, error) {
	base, host, err := wire.ParseBase(driver, cfg.BaseURL, DefaultBaseURL)
	if err != nil {
		return nil, err
	}
	if host == "api.anthropic.com" && strings.TrimSpace(cfg.APIKey) == "" {
		return nil, fmt.Errorf("anthropic: no API key for %s: export %s", base, KeyEnv)
	}
	m := &Model{model: cfg.Model, ep: wire.Endpoint{Driver: driver, Base: base, KeyEnv: KeyEnv}, timeout: cfg.Timeout}
	if m.model == "" {
		m.model = DefaultModel
	}
	opts := []option.RequestOption{
		option.WithBaseURL(base + "/"),
		option.WithHTTPClient(wire.Client(cfg.HTTPClient)),
		option.WithMaxRetries(0), // llm.WithRetry is the one retry policy
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	// Built directly, not through anthropic.NewClient, so the SDK reads
	// nothing from the environment.
	m.svc = anthropic.NewMessageService(opts...)
	return m, nil
}

// Info names the driver, model and base URL.
func (m *Model) Info() llm.Info {
	return llm.Info{Driver: driver, Model: m.model, Endpoint: m.ep.Base}
}

// Chat sends one request and waits for the whole answer.
func (m *Model) Chat(ctx context.Context, req llm.Request) (*llm.Response, error) {
	params, err := m.params(req)
	if err != nil {
		return nil, err
	}
	ctx, cancel := wire.Bound(ctx, m.timeout)
	defer cancel()
	ctx, rec := wire.Record(ctx)
	msg, err := m.svc.New(ctx, params)
	if err != nil {
		return nil, m.ep.CallError(ctx, rec, err)
	}
	if msg.Type != "" && msg.Type != "message" {
		return nil, wire.Malformed(driver, m.ep.Base, fmt.Errorf("the answer is a %q, not a message", msg.Type))
	}
	out := llm.Message{Role: llm.RoleAssistant}
	var text strings.Builder
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			out.ToolCalls = append(out.ToolCalls, llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: b.Input})
		}
	}
	out.Content = text.String()
	return &llm.Response{
		Message:    out,
		Usage:      llm.Usage{InputTokens: int(msg.Usage.InputTokens), OutputTokens: int(msg.Usage.OutputTokens)},
		StopReason: stopReason(string(msg.StopReason)),
	}, nil
}

// Stream sends one request with stream: true and passes on the deltas:
// text_delta as text, tool_use blocks and their input_json_delta pieces as
// tool-call deltas.
func (m *Model) Stream(ctx context.Context, req llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	params, err := m.params(req)
	if err != nil {
		return nil, err
	}
	ctx, cancel := wire.Bound(ctx, m.timeout)
	defer cancel()
	ctx, rec := wire.Record(ctx)
	stream := m.svc.NewStreaming(ctx, params)
	defer stream.Close()

	var acc llm.Accumulator
	var usage llm.Usage
	stop, stopped, events := "", false, 0
	calls := map[int64]int{} // content block index -> tool call index
	for stream.Next() {
		events++
		ev := stream.Current()
		var d *llm.Delta
		switch ev.Type {
		case "message_start":
			usage.InputTokens = int(ev.Message.Usage.InputTokens)
			usage.OutputTokens = int(ev.Message.Usage.OutputTokens)
		case "content_block_start":
			if ev.ContentBlock.Type == "tool_use" {
				i := len(calls)
				calls[ev.Index] = i
				d = &llm.Delta{ToolCall: &llm.ToolCallDelta{Index: i, ID: ev.ContentBlock.ID, Name: ev.ContentBlock.Name}}
			} else if ev.ContentBlock.Type == "text" && ev.ContentBlock.Text != "" {
				d = &llm.Delta{Text: ev.ContentBlock.Text}
			}
		case "content_block_delta":
			switch ev.Delta.Type {
			case "text_delta":
				d = &llm.Delta{Text: ev.Delta.Text}
			case "input_json_delta":
				if ev.Delta.PartialJSON == "" {
					break // the API often opens with an empty piece
				}
				i, ok := calls[ev.Index]
				if !ok {
					return nil, wire.Malformed(driver, m.ep.Base, fmt.Errorf("input_json_delta for content block %d, which is not a tool_use block", ev.Index))
				}
				d = &llm.Delta{ToolCall: &llm.ToolCallDelta{Index: i, ArgumentsDelta: ev.Delta.PartialJSON}}
			}
		case "message_delta":
			stop = string(ev.Delta.StopReason)
			if ev.Usage.OutputTokens > 0 {
				usage.OutputTokens = int(ev.Usage.OutputTokens)
			}
			if ev.Usage.InputTokens > 0 {
				usage.InputTokens = int(ev.Usage.InputTokens)
			}
		case "message_stop":
			stopped = true
		}
		if d != nil && (d.Text != "" || d.ToolCall != nil) {
			acc.Add(*d)
			if err := onDelta(*d); err != nil {
				return nil, err
			}
		}
	}
	if err := stream.Err(); err != nil {
		return nil, m.ep.StreamError(ctx, rec, events, acc.Deltas(), err)
	}
	if !stopped {
		return nil, m.ep.StreamEnded(rec, events, acc.Deltas())
	}
	msg := acc.Message()
	for i, c := range msg.ToolCalls {
		if len(c.Arguments) == 0 {
			msg.ToolCalls[i].Arguments = json.RawMessage("{}") // a tool_use without input deltas has input {}
		}
	}
	return &llm.Response{Message: msg, Usage: usage, StopReason: stopReason(stop)}, nil
}

func (m *Model) params(req llm.Request) (anthropic.MessageNewParams, error) {
	p := anthropic.MessageNewParams{Model: anthropic.Model(m.model), MaxTokens: DefaultMaxTokens}
	if req.MaxTokens > 0 {
		p.MaxTokens = int64(req.MaxTokens)
	}
	if req.System != "" {
		p.System = append(p.System, anthropic.TextBlockParam{Text: req.System})
	}
	// add appends blocks to the last message when it has the same role:
	// the API wants the results of parallel calls in one user turn.
	add := func(role anthropic.MessageParamRole, blocks ...anthropic.ContentBlockParamUnion) {
		if n := len(p.Messages); n > 0 && p.Messages[n-1].Role == role {
			p.Messages[n-1].Content = append(p.Messages[n-1].Content, blocks...)
			return
		}
		p.Messages = append(p.Messages, anthropic.MessageParam{Role: role, Content: blocks})
	}
	for i, msg := range req.Messages {
		switch msg.Role {
		case llm.RoleSystem:
			p.System = append(p.System, anthropic.TextBlockParam{Text: msg.Content})
		case llm.RoleUser:
			add(anthropic.MessageParamRoleUser, anthropic.NewTextBlock(msg.Content))
		case llm.RoleAssistant:
			var blocks []anthropic.ContentBlockParamUnion
			if msg.Content != "" {
				blocks = append(blocks, anthropic.NewTextBlock(msg.Content))
			}
			for _, tc := range msg.ToolCalls {
				input := json.RawMessage(tc.Arguments)
				if !json.Valid(input) || strings.TrimSpace(string(input))[0] != '{' {
					input = json.RawMessage("{}") // the API takes only an object; the tool result says what was wrong
				}
				blocks = append(blocks, anthropic.NewToolUseBlock(tc.ID, input, tc.Name))
			}
			if len(blocks) == 0 {
				continue // the API rejects empty text blocks; an empty turn says nothing
			}
			add(anthropic.MessageParamRoleAssistant, blocks...)
		case llm.RoleTool:
			if msg.ToolCallID == "" {
				return p, fmt.Errorf("anthropic: message %d is a tool result without the ID of the call it answers", i+1)
			}
			add(anthropic.MessageParamRoleUser, anthropic.ContentBlockParamUnion{OfToolResult: &anthropic.ToolResultBlockParam{
				ToolUseID: msg.ToolCallID,
				Content:   []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: msg.Content}}},
			}})
		default:
			return p, fmt.Errorf("anthropic: message %d has unknown role %q", i+1, msg.Role)
		}
	}
	for _, t := range req.Tools {
		schema, err := inputSchema(t)
		if err != nil {
			return p, err
		}
		tp := &anthropic.ToolParam{Name: t.Name, InputSchema: schema}
		if t.Description != "" {
			tp.Description = anthropic.String(t.Description)
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: tp})
	}
	if len(req.Tools) > 0 {
		switch req.ToolChoice {
		case "", llm.ToolChoiceAuto:
		case llm.ToolChoiceNone:
			p.ToolChoice = anthropic.ToolChoiceUnionParam{OfNone: &anthropic.ToolChoiceNoneParam{}}
		case llm.ToolChoiceRequired:
			p.ToolChoice = anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{}}
		default:
			p.ToolChoice = anthropic.ToolChoiceUnionParam{OfTool: &anthropic.ToolChoiceToolParam{Name: req.ToolChoice.Tool()}}
		}
	}
	if req.Temperature != nil {
		p.Temperature = anthropic.Float(*req.Temperature)
	}
	return p, nil
}

// inputSchema passes a tool's JSON Schema on as given: properties and
// required in their fields, every other keyword as an extra field.
func inputSchema(t llm.Tool) (anthropic.ToolInputSchemaParam, error) {
	s := anthropic.ToolInputSchemaParam{Properties: map[string]any{}}
	if len(t.Parameters) == 0 {
		return s, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(t.Parameters, &fields); err != nil {
		return s, fmt.Errorf("anthropic: parameters of tool %q are not a JSON object: %w", t.Name, err)
	}
	for k, v := range fields {
		switch k {
		case "type":
		case "properties":
			s.Properties = v
		case "required":
			if err := json.Unmarshal(v, &s.Required); err != nil {
				return s, fmt.Errorf("anthropic: \"required\" of tool %q is not a list of names: %w", t.Name, err)
			}
		default:
			if s.ExtraFields == nil {
				s.ExtraFields = map[string]any{}
			}
			s.ExtraFields[k] = v
		}
	}
	return s, nil
}

func stopReason(s string) llm.StopReason {
	switch anthropic.StopReason(s) {
	case anthropic.StopReasonEndTurn, anthropic.StopReasonStopSequence:
		return llm.StopEnd
	case anthropic.StopReasonToolUse:
		return llm.StopToolCalls
	case anthropic.StopReasonMaxTokens, anthropic.StopReasonModelContextWindowExceeded:
		return llm.StopLength
	case anthropic.StopReasonRefusal:
		return llm.StopContentFilter
	}
	return llm.StopOther
}

var _ llm.Model = (*Model)(nil)

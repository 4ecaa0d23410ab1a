// Package openai is the llm driver for the OpenAI Chat Completions API
// through github.com/openai/openai-go/v3. The same API is served by Ollama,
// llama.cpp's llama-server, vLLM and LM Studio, so a base URL points the
// driver at any of them. The key (OPENAI_API_KEY, read by internal/app) is
// required only for api.openai.com.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/llm/internal/wire"
)

// DefaultBaseURL is OpenAI's own API.
const DefaultBaseURL = "https://api.openai.com/v1"

// DefaultModel is used when Config.Model is empty.
const DefaultModel = "gpt-4.1-mini"

// KeyEnv is where internal/app reads the key from; errors name it.
const KeyEnv = "OPENAI_API_KEY"

const driver = "openai"

// Config says which model to use and where.
type Config struct {
	// Model, default DefaultModel; local servers take the name they serve.
	Model string
	// BaseURL ends in /v1 (default DefaultBaseURL), e.g.
	// http://127.0.0.1:8080/v1 for llama-server, http://localhost:11434/v1
	// for Ollama.
	BaseURL string
	// APIKey is sent as a bearer token; required for api.openai.com only.
	APIKey string
	// HTTPClient sends the requests (default: a client without timeout).
	HTTPClient *http.Client
	// Timeout bounds one call, a stream included; 0 means none.
	Timeout time.Duration
	// Stall, when set, bounds a call by progress instead of the clock
	// (Timeout is then ignored): the call fails only when Stall passes
	// with no piece of the answer from the server. Chat streams
	// underneath, and the server is asked for prompt progress
	// (llama-server's return_progress), so reading a long prompt on a
	// slow or busy machine counts as progress. Meant for a model on this
	// machine, whose speed depends on the machine and its load.
	Stall time.Duration
}

// Model calls /chat/completions. It implements llm.Model.
type Model struct {
	svc      openai.ChatCompletionService
	model    string
	ep       wire.Endpoint
	official bool
	timeout  time.Duration
	stall    time.Duration
}

// New checks cfg and makes the client. It does not contact the server.
func New(cfg Config) (*Model, error) {
	base, host, err := wire.ParseBase(driver, cfg.BaseURL, DefaultBaseURL)
	if err != nil {
		return nil, err
	}
	official := host == "api.openai.com"
	if official && strings.TrimSpace(cfg.APIKey) == "" {
		return nil, fmt.Errorf("openai: no API key for %s: export %s", base, KeyEnv)
	}
	m := &Model{model: cfg.Model, ep: wire.Endpoint{Driver: driver, Base: base, KeyEnv: KeyEnv}, official: official, timeout: cfg.Timeout, stall: cfg.Stall}
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
	// The service is built directly, not through openai.NewClient, so the
	// SDK reads nothing from the environment.
	m.svc = openai.NewChatCompletionService(opts...)
	return m, nil
}

// Info names the driver, model and base URL.
func (m *Model) Info() llm.Info {
	return llm.Info{Driver: driver, Model: m.model, Endpoint: m.ep.Base}
}

// Chat sends one request and waits for the whole answer.
func (m *Model) Chat(ctx context.Context, req llm.Request) (*llm.Response, error) {
	if m.stall > 0 {
		// Only a stream shows progress.
		resp, chunks, err := m.stream(ctx, req, func(llm.Delta) error { return nil })
		var api *llm.APIError
		if err == nil || chunks > 0 || ctx.Err() != nil || errors.As(err, &api) {
			return resp, err
		}
		// Nothing at all came back: llama-server drops a stream it fails
		// on before the first chunk (a request its chat template cannot
		// render), where a whole call gets its error in words. Ask once
		// more as a whole call, bounded by Stall.
		return m.chat(ctx, req, m.stall)
	}
	return m.chat(ctx, req, m.timeout)
}

// chat is one whole (not streamed) call bounded by timeout.
func (m *Model) chat(ctx context.Context, req llm.Request, timeout time.Duration) (*llm.Response, error) {
	params, err := m.params(req)
	if err != nil {
		return nil, err
	}
	ctx, cancel := wire.Bound(ctx, timeout)
	defer cancel()
	ctx, rec := wire.Record(ctx)
	cc, err := m.svc.New(ctx, params)
	if err != nil {
		return nil, m.ep.CallError(ctx, rec, err)
	}
	if len(cc.Choices) == 0 {
		return nil, wire.Malformed(driver, m.ep.Base, errors.New("the answer has no choices"))
	}
	ch := cc.Choices[0]
	msg := llm.Message{Role: llm.RoleAssistant, Content: ch.Message.Content}
	if msg.Content == "" && ch.Message.Refusal != "" {
		msg.Content = ch.Message.Refusal
	}
	for _, tc := range ch.Message.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue // custom tools are never offered
		}
		id := tc.ID
		if id == "" {
			id = callID(len(msg.ToolCalls))
		}
		msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{
			ID: id, Name: tc.Function.Name, Arguments: json.RawMessage(tc.Function.Arguments),
		})
	}
	return &llm.Response{
		Message:    msg,
		Usage:      llm.Usage{InputTokens: int(cc.Usage.PromptTokens), OutputTokens: int(cc.Usage.CompletionTokens)},
		StopReason: stopReason(ch.FinishReason, len(msg.ToolCalls) > 0, ch.Message.Refusal != ""),
	}, nil
}

// Stream sends one request with stream: true and passes on the deltas.
func (m *Model) Stream(ctx context.Context, req llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	resp, _, err := m.stream(ctx, req, onDelta)
	return resp, err
}

// stream is Stream that also says how many chunks arrived.
func (m *Model) stream(ctx context.Context, req llm.Request, onDelta func(llm.Delta) error) (*llm.Response, int, error) {
	params, err := m.params(req)
	if err != nil {
		return nil, 0, err
	}
	params.StreamOptions.IncludeUsage = openai.Bool(true)
	var opts []option.RequestOption
	progress := func() {}
	if m.stall > 0 {
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		stalled := time.AfterFunc(m.stall, func() {
			cancel(fmt.Errorf("no progress from the model for %s (the machine may be too busy, or the server hung): %w", m.stall, context.DeadlineExceeded))
		})
		defer stalled.Stop()
		progress = func() { stalled.Reset(m.stall) }
		opts = append(opts, option.WithJSONSet("return_progress", true))
	} else {
		var cancel context.CancelFunc
		ctx, cancel = wire.Bound(ctx, m.timeout)
		defer cancel()
	}
	ctx, rec := wire.Record(ctx)
	stream := m.svc.NewStreaming(ctx, params, opts...)
	defer stream.Close()

	var acc llm.Accumulator
	var usage llm.Usage
	finish, refused, chunks := "", false, 0
	calls := callIndex{}
	for stream.Next() {
		chunks++
		progress()
		chunk := stream.Current()
		if chunk.JSON.Usage.Valid() {
			usage = llm.Usage{InputTokens: int(chunk.Usage.PromptTokens), OutputTokens: int(chunk.Usage.CompletionTokens)}
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue // only one choice is asked for
			}
			var deltas []llm.Delta
			if ch.Delta.Content != "" {
				deltas = append(deltas, llm.Delta{Text: ch.Delta.Content})
			}
			if ch.Delta.Refusal != "" {
				refused = true
				deltas = append(deltas, llm.Delta{Text: ch.Delta.Refusal})
			}
			for _, tc := range ch.Delta.ToolCalls {
				if tc.ID == "" && tc.Function.Name == "" && tc.Function.Arguments == "" {
					continue
				}
				i, first := calls.index(int(tc.Index), tc.ID)
				id := tc.ID
				if first && id == "" {
					id = callID(i)
				}
				deltas = append(deltas, llm.Delta{ToolCall: &llm.ToolCallDelta{
					Index: i, ID: id, Name: tc.Function.Name, ArgumentsDelta: tc.Function.Arguments,
				}})
			}
			for _, d := range deltas {
				acc.Add(d)
				if err := onDelta(d); err != nil {
					return nil, chunks, err
				}
			}
			if ch.FinishReason != "" {
				finish = ch.FinishReason
			}
		}
	}
	if err := stream.Err(); err != nil {
		var se *ssestream.StreamError
		if errors.As(err, &se) {
			if ae := m.ep.StreamedError(se.Event.Data); ae != nil {
				return nil, chunks, ae
			}
		}
		return nil, chunks, m.ep.StreamError(ctx, rec, chunks, acc.Deltas(), err)
	}
	if finish == "" {
		return nil, chunks, m.ep.StreamEnded(rec, chunks, acc.Deltas())
	}
	msg := acc.Message()
	return &llm.Response{Message: msg, Usage: usage, StopReason: stopReason(finish, len(msg.ToolCalls) > 0, refused)}, chunks, nil
}

// callIndex gives each streamed tool call its own index even from servers
// that number every call 0 and tell them apart only by ID.
type callIndex struct {
	ids  map[int]string // wire index -> ID of the call now using it
	next int
	to   map[int]int // wire index -> our index
}

// index returns our index for a piece of a call, and whether it is the
// call's first piece.
func (c *callIndex) index(wireIndex int, id string) (int, bool) {
	if c.to == nil {
		c.ids, c.to = map[int]string{}, map[int]int{}
	}
	i, seen := c.to[wireIndex]
	first := !seen || (id != "" && c.ids[wireIndex] != "" && c.ids[wireIndex] != id)
	if first {
		i = c.next
		c.next++
		c.to[wireIndex] = i
	}
	if id != "" {
		c.ids[wireIndex] = id
	}
	return i, first
}

// callID names a tool call the server sent without an ID (some local
// servers do), so that its result can still refer to it.
func callID(i int) string { return fmt.Sprintf("call_%d", i) }

func (m *Model) params(req llm.Request) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{Model: shared.ChatModel(m.model)}
	if req.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	}
	for i, msg := range req.Messages {
		switch msg.Role {
		case llm.RoleSystem:
			p.Messages = append(p.Messages, openai.SystemMessage(msg.Content))
		case llm.RoleUser:
			p.Messages = append(p.Messages, openai.UserMessage(msg.Content))
		case llm.RoleAssistant:
			a := openai.ChatCompletionAssistantMessageParam{}
			if msg.Content != "" || len(msg.ToolCalls) == 0 {
				a.Content.OfString = openai.String(msg.Content)
			}
			for _, tc := range msg.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       tc.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: string(tc.Arguments)},
					},
				})
			}
			p.Messages = append(p.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case llm.RoleTool:
			if msg.ToolCallID == "" {
				return p, fmt.Errorf("openai: message %d is a tool result without the ID of the call it answers", i+1)
			}
			p.Messages = append(p.Messages, openai.ToolMessage(msg.Content, msg.ToolCallID))
		default:
			return p, fmt.Errorf("openai: message %d has unknown role %q", i+1, msg.Role)
		}
	}
	for _, t := range req.Tools {
		params := shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
		if len(t.Parameters) > 0 {
			params = nil
			if err := json.Unmarshal(t.Parameters, &params); err != nil {
				return p, fmt.Errorf("openai: parameters of tool %q are not a JSON object: %w", t.Name, err)
			}
		}
		def := shared.FunctionDefinitionParam{Name: t.Name, Parameters: params}
		if t.Description != "" {
			def.Description = openai.String(t.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(def))
	}
	if len(req.Tools) > 0 {
		switch req.ToolChoice {
		case "", llm.ToolChoiceAuto:
		case llm.ToolChoiceNone, llm.ToolChoiceRequired:
			p.ToolChoice.OfAuto = openai.String(string(req.ToolChoice))
		default:
			p.ToolChoice = openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: req.ToolChoice.Tool()})
		}
	}
	if req.Temperature != nil {
		p.Temperature = openai.Float(*req.Temperature)
	}
	if req.MaxTokens > 0 {
		// OpenAI's newer models take only max_completion_tokens; the other
		// servers all know max_tokens, not all the newer name.
		if m.official {
			p.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		} else {
			p.MaxTokens = openai.Int(int64(req.MaxTokens))
		}
	}
	if req.Reply != nil {
		var schema map[string]any
		if err := json.Unmarshal(req.Reply.Schema, &schema); err != nil {
			return p, fmt.Errorf("openai: the reply schema %q is not a JSON object: %w", req.Reply.Name, err)
		}
		p.ResponseFormat.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: req.Reply.Name, Schema: schema},
		}
	}
	return p, nil
}

// stopReason maps finish_reason. Some servers say "stop" after tool calls,
// so tool calls in the answer decide.
func stopReason(finish string, hasCalls, refused bool) llm.StopReason {
	switch {
	case finish == "length":
		return llm.StopLength
	case finish == "content_filter" || refused:
		return llm.StopContentFilter
	case finish == "tool_calls" || finish == "function_call" || hasCalls:
		return llm.StopToolCalls
	case finish == "stop":
		return llm.StopEnd
	}
	return llm.StopOther
}

var _ llm.Model = (*Model)(nil)

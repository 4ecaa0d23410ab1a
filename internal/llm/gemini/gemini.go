// Package gemini is the llm driver for Google's Gemini API through
// google.golang.org/genai. The default model is gemini-2.5-flash (the
// seed used Gemini 2.0 Flash, since retired in favour of 2.5). The system
// prompt goes in systemInstruction, tool calls are functionCall parts and
// results functionResponse parts, which Gemini matches to calls by name;
// the key (GEMINI_API_KEY or GOOGLE_API_KEY, read by internal/app) is sent
// as x-goog-api-key.
package gemini

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/llm/internal/wire"
)

// DefaultBaseURL is the Gemini API.
const DefaultBaseURL = "https://generativelanguage.googleapis.com"

// DefaultModel is used when Config.Model is empty.
const DefaultModel = "gemini-2.5-flash"

// KeyEnv names where internal/app reads the key from; errors name it.
const KeyEnv = "GEMINI_API_KEY (or GOOGLE_API_KEY)"

const driver = "gemini"

// idPrefix marks tool-call IDs this driver made up because Gemini sent
// none; they are not sent back.
const idPrefix = "gemini-call-"

// Config says which model to use and where.
type Config struct {
	Model      string        // default DefaultModel; a "models/" prefix is dropped
	BaseURL    string        // default DefaultBaseURL
	APIKey     string        // required
	HTTPClient *http.Client  // default: a client without timeout
	Timeout    time.Duration // bounds one call, a stream included; 0 means none
}

// Model calls generateContent and streamGenerateContent. It implements
// llm.Model.
type Model struct {
	models  *genai.Models
	model   string
	ep      wire.Endpoint
	timeout time.Duration
}

// New checks cfg and makes the client. It does not contact the server.
func New(cfg Config) (*Model, error) {
	base, _, err := wire.ParseBase(driver, cfg.BaseURL, DefaultBaseURL)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(cfg.APIKey) == "" {
		return nil, fmt.Errorf("gemini: no API key for %s: export %s", base, KeyEnv)
	}
	m := &Model{model: strings.TrimPrefix(cfg.Model, "models/"), ep: wire.Endpoint{Driver: driver, Base: base, KeyEnv: KeyEnv}, timeout: cfg.Timeout}
	if m.model == "" {
		m.model = DefaultModel
	}
	// With the key, backend and base URL given, the SDK takes nothing from
	// the environment; without RetryOptions it does not retry.
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      cfg.APIKey,
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  wire.Client(cfg.HTTPClient),
		HTTPOptions: genai.HTTPOptions{BaseURL: base + "/"},
	})
	if err != nil {
		return nil, fmt.Errorf("gemini: %w", err)
	}
	m.models = c.Models
	return m, nil
}

// Info names the driver, model and base URL.
func (m *Model) Info() llm.Info {
	return llm.Info{Driver: driver, Model: m.model, Endpoint: m.ep.Base}
}

// Chat sends one generateContent request.
func (m *Model) Chat(ctx context.Context, req llm.Request) (*llm.Response, error) {
	contents, config, err := m.request(req)
	if err != nil {
		return nil, err
	}
	ctx, cancel := wire.Bound(ctx, m.timeout)
	defer cancel()
	ctx, rec := wire.Record(ctx)
	resp, err := m.models.GenerateContent(ctx, m.model, contents, config)
	if err != nil {
		return nil, m.ep.CallError(ctx, rec, err)
	}
	var acc llm.Accumulator
	finish := m.take(resp, &acc, nil)
	if finish == "" && (resp.PromptFeedback == nil || resp.PromptFeedback.BlockReason == "") {
		return nil, wire.Malformed(driver, m.ep.Base, errors.New("the answer has no candidate with a finishReason"))
	}
	return m.response(resp, &acc, finish), nil
}

// Stream sends one streamGenerateContent request (alt=sse) and passes on
// the deltas. Gemini sends each function call whole, so each arrives as
// one tool-call delta.
func (m *Model) Stream(ctx context.Context, req llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	contents, config, err := m.request(req)
	if err != nil {
		return nil, err
	}
	ctx, cancel := wire.Bound(ctx, m.timeout)
	defer cancel()
	ctx, rec := wire.Record(ctx)
	var acc llm.Accumulator
	var last *genai.GenerateContentResponse
	finish, chunks := genai.FinishReason(""), 0
	var usage *genai.GenerateContentResponseUsageMetadata
	for resp, err := range m.models.GenerateContentStream(ctx, m.model, contents, config) {
		if err != nil {
			return nil, m.ep.StreamError(ctx, rec, chunks, acc.Deltas(), err)
		}
		chunks++
		last = resp
		if resp.UsageMetadata != nil {
			usage = resp.UsageMetadata
		}
		var cbErr error
		if f := m.take(resp, &acc, func(d llm.Delta) bool {
			cbErr = onDelta(d)
			return cbErr == nil
		}); f != "" {
			finish = f
		}
		if cbErr != nil {
			return nil, cbErr
		}
	}
	blocked := last != nil && last.PromptFeedback != nil && last.PromptFeedback.BlockReason != ""
	if finish == "" && !blocked {
		return nil, m.ep.StreamEnded(rec, chunks, acc.Deltas())
	}
	last.UsageMetadata = usage
	return m.response(last, &acc, finish), nil
}

// take adds the first candidate's parts of resp to acc, calling deliver
// (when not nil) with each delta until it returns false, and returns the
// candidate's finish reason.
func (m *Model) take(resp *genai.GenerateContentResponse, acc *llm.Accumulator, deliver func(llm.Delta) bool) genai.FinishReason {
	if len(resp.Candidates) == 0 || resp.Candidates[0] == nil {
		return ""
	}
	cand := resp.Candidates[0]
	if cand.Content != nil {
		for _, p := range cand.Content.Parts {
			var d llm.Delta
			switch {
			case p == nil || p.Thought:
				continue
			case p.FunctionCall != nil:
				fc := p.FunctionCall
				n := len(acc.Message().ToolCalls)
				id := fc.ID
				if id == "" {
					id = fmt.Sprintf("%s%s-%d", idPrefix, resp.ResponseID, n)
				}
				args := []byte("{}")
				if fc.Args != nil {
					args, _ = json.Marshal(fc.Args) // decoded from JSON, so it encodes
				}
				d = llm.Delta{ToolCall: &llm.ToolCallDelta{Index: n, ID: id, Name: fc.Name, ArgumentsDelta: string(args)}}
				acc.Add(d)
				if len(p.ThoughtSignature) > 0 {
					acc.SetSignature(n, base64.StdEncoding.EncodeToString(p.ThoughtSignature))
				}
				if deliver != nil && !deliver(d) {
					return cand.FinishReason
				}
				continue
			case p.Text != "":
				d = llm.Delta{Text: p.Text}
			default:
				continue
			}
			acc.Add(d)
			if deliver != nil && !deliver(d) {
				return cand.FinishReason
			}
		}
	}
	return cand.FinishReason
}

func (m *Model) response(resp *genai.GenerateContentResponse, acc *llm.Accumulator, finish genai.FinishReason) *llm.Response {
	out := &llm.Response{Message: acc.Message()}
	if u := resp.UsageMetadata; u != nil {
		// Thinking tokens are billed as output, so they count as output.
		out.Usage = llm.Usage{InputTokens: int(u.PromptTokenCount), OutputTokens: int(u.CandidatesTokenCount + u.ThoughtsTokenCount)}
	}
	switch finish {
	case genai.FinishReasonStop:
		out.StopReason = llm.StopEnd
		if len(out.Message.ToolCalls) > 0 {
			out.StopReason = llm.StopToolCalls // Gemini says STOP after function calls
		}
	case genai.FinishReasonMaxTokens:
		out.StopReason = llm.StopLength
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonBlocklist,
		genai.FinishReasonProhibitedContent, genai.FinishReasonSPII, genai.FinishReasonImageSafety,
		genai.FinishReasonImageProhibitedContent, genai.FinishReasonImageRecitation:
		out.StopReason = llm.StopContentFilter
	case "":
		out.StopReason = llm.StopContentFilter // the prompt itself was blocked
	default:
		out.StopReason = llm.StopOther
	}
	return out
}

func (m *Model) request(req llm.Request) ([]*genai.Content, *genai.GenerateContentConfig, error) {
	config := &genai.GenerateContentConfig{}
	var system []string
	if req.System != "" {
		system = append(system, req.System)
	}
	names := map[string]string{} // tool call ID -> tool name, for results without Name
	var contents []*genai.Content
	add := func(role string, parts ...*genai.Part) {
		if n := len(contents); n > 0 && contents[n-1].Role == role {
			contents[n-1].Parts = append(contents[n-1].Parts, parts...)
			return
		}
		contents = append(contents, &genai.Content{Role: role, Parts: parts})
	}
	for i, msg := range req.Messages {
		switch msg.Role {
		case llm.RoleSystem:
			system = append(system, msg.Content)
		case llm.RoleUser:
			add(genai.RoleUser, &genai.Part{Text: msg.Content})
		case llm.RoleAssistant:
			var parts []*genai.Part
			if msg.Content != "" {
				parts = append(parts, &genai.Part{Text: msg.Content})
			}
			for _, tc := range msg.ToolCalls {
				names[tc.ID] = tc.Name
				part, err := callPart(tc)
				if err != nil {
					return nil, nil, fmt.Errorf("gemini: message %d: %w", i+1, err)
				}
				parts = append(parts, part)
			}
			if len(parts) == 0 {
				continue // an empty turn says nothing, and an empty part is refused
			}
			add(genai.RoleModel, parts...)
		case llm.RoleTool:
			name := msg.Name
			if name == "" {
				name = names[msg.ToolCallID]
			}
			if name == "" {
				return nil, nil, fmt.Errorf("gemini: message %d is a tool result for call %q, which no earlier message made, and has no Name; Gemini matches results to calls by name", i+1, msg.ToolCallID)
			}
			fr := &genai.FunctionResponse{Name: name, Response: resultObject(msg.Content)}
			if !strings.HasPrefix(msg.ToolCallID, idPrefix) {
				fr.ID = msg.ToolCallID
			}
			add(genai.RoleUser, &genai.Part{FunctionResponse: fr})
		default:
			return nil, nil, fmt.Errorf("gemini: message %d has unknown role %q", i+1, msg.Role)
		}
	}
	if len(system) > 0 {
		config.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: strings.Join(system, "\n\n")}}}
	}
	if len(req.Tools) > 0 {
		tool := &genai.Tool{}
		for _, t := range req.Tools {
			fd := &genai.FunctionDeclaration{Name: t.Name, Description: t.Description}
			if len(bytes.TrimSpace(t.Parameters)) > 0 {
				if !json.Valid(t.Parameters) || bytes.TrimSpace(t.Parameters)[0] != '{' {
					return nil, nil, fmt.Errorf("gemini: parameters of tool %q are not a JSON object", t.Name)
				}
				fd.ParametersJsonSchema = json.RawMessage(t.Parameters) // sent as given
			}
			tool.FunctionDeclarations = append(tool.FunctionDeclarations, fd)
		}
		config.Tools = []*genai.Tool{tool}
		fcc := &genai.FunctionCallingConfig{}
		switch req.ToolChoice {
		case "", llm.ToolChoiceAuto:
			fcc = nil
		case llm.ToolChoiceNone:
			fcc.Mode = genai.FunctionCallingConfigModeNone
		case llm.ToolChoiceRequired:
			fcc.Mode = genai.FunctionCallingConfigModeAny
		default:
			fcc.Mode = genai.FunctionCallingConfigModeAny
			fcc.AllowedFunctionNames = []string{req.ToolChoice.Tool()}
		}
		if fcc != nil {
			config.ToolConfig = &genai.ToolConfig{FunctionCallingConfig: fcc}
		}
	}
	if req.Temperature != nil {
		t := float32(*req.Temperature)
		config.Temperature = &t
	}
	if req.MaxTokens > 0 {
		config.MaxOutputTokens = int32(req.MaxTokens)
	}
	if b := req.ThinkingBudget; b != nil {
		// Gemini counts thinking tokens in maxOutputTokens: the budget comes
		// on top of the answer's cap, so that thinking cannot use it up.
		budget := int32(*b)
		config.ThinkingConfig = &genai.ThinkingConfig{ThinkingBudget: &budget}
		if req.MaxTokens > 0 {
			config.MaxOutputTokens += budget
		}
	}
	if req.Reply != nil {
		var schema map[string]any
		if err := json.Unmarshal(req.Reply.Schema, &schema); err != nil {
			return nil, nil, fmt.Errorf("gemini: the reply schema %q is not a JSON object: %w", req.Reply.Name, err)
		}
		config.ResponseMIMEType, config.ResponseJsonSchema = "application/json", schema
	}
	return contents, config, nil
}

// callPart turns a tool call back into a functionCall part. Arguments that
// are not a JSON object (a weak model's) go back as {}: the tool result
// says what was wrong with them.
func callPart(tc llm.ToolCall) (*genai.Part, error) {
	var args map[string]any
	if json.Unmarshal(tc.Arguments, &args) != nil {
		args = map[string]any{}
	}
	fc := &genai.FunctionCall{Name: tc.Name, Args: args}
	if !strings.HasPrefix(tc.ID, idPrefix) {
		fc.ID = tc.ID
	}
	part := &genai.Part{FunctionCall: fc}
	if tc.Signature != "" {
		sig, err := base64.StdEncoding.DecodeString(tc.Signature)
		if err != nil {
			return nil, fmt.Errorf("tool call %q has a signature that is not base64: %w", tc.ID, err)
		}
		part.ThoughtSignature = sig
	}
	return part, nil
}

// resultObject wraps a tool's output as Gemini wants a function response:
// a JSON object as is, anything else as {"output": text}.
func resultObject(content string) map[string]any {
	var obj map[string]any
	if s := strings.TrimSpace(content); strings.HasPrefix(s, "{") && json.Unmarshal([]byte(s), &obj) == nil {
		return obj
	}
	return map[string]any{"output": content}
}

var _ llm.Model = (*Model)(nil)

// Package llm is sagasu's one interface to chat models: a Model sends a
// conversation (with tools the model may call) and returns the model's
// message, whole (Chat) or as it is produced (Stream). Drivers live in
// sub-packages (openai, gemini, anthropic); only internal/app names them.
// WithRetry adds the single retry policy; CheckArgs is the one check of a
// tool call's arguments against the tool's schema (MCP calls and model
// calls alike), and CheckToolCall and ParseArgs turn a model's tool call
// into arguments or into an error text the model can read; llmtest
// scripts a Model for tests of agent logic.
package llm

import (
	"context"
	"encoding/json"
)

// Model is a chat model behind some vendor's API.
type Model interface {
	// Info says which driver, model and endpoint answer; never a key.
	Info() Info
	// Chat sends the request and waits for the whole answer.
	Chat(ctx context.Context, req Request) (*Response, error)
	// Stream sends the request and calls onDelta with each piece of text
	// and each piece of a tool call as it arrives. It returns the assembled
	// answer, or an error if the stream broke before the model finished
	// (the text delivered so far is then not an answer). An error from
	// onDelta stops the stream and is returned.
	Stream(ctx context.Context, req Request, onDelta func(Delta) error) (*Response, error)
}

// Info names what is behind a Model, for logs, traces and the web page.
type Info struct {
	Driver   string `json:"driver"`   // "openai", "gemini", "anthropic", "llmtest"
	Model    string `json:"model"`    // the model name sent to the API
	Endpoint string `json:"endpoint"` // base URL of the API
}

// Role says who wrote a message.
type Role string

// The four roles of a conversation.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool" // the result of a tool call, answering ToolCallID
)

// Message is one turn of a conversation.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content,omitempty"`
	// ToolCalls are the calls an assistant message asks for.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID is, on a tool message, the ID of the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Name is, on a tool message, the name of the tool that ran. Drivers
	// that match results by name (Gemini) find it from ToolCallID when empty.
	Name string `json:"name,omitempty"`
}

// Tool is a function the model may call.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Parameters is a JSON Schema object describing the arguments; it is
	// sent to the vendor as given. Empty means a tool without arguments.
	Parameters json.RawMessage `json:"parameters,omitempty"`
}

// ToolCall is the model's request to run a tool.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments are exactly as the model sent them: usually a JSON object,
	// but a weak model may send invalid JSON. Check with CheckToolCall.
	Arguments json.RawMessage `json:"arguments"`
	// Signature is opaque vendor data that must go back with the call in
	// later requests (Gemini's thought signature). Agents keep it by
	// sending the assistant message back as they got it.
	Signature string `json:"signature,omitempty"`
}

// ToolChoice says whether the model must, may or must not call a tool:
// ToolChoiceAuto (also the zero value), ToolChoiceNone, ToolChoiceRequired,
// or any other value, which names the one tool the model must call.
type ToolChoice string

// The tool choices other than naming a tool.
const (
	ToolChoiceAuto     ToolChoice = "auto"
	ToolChoiceNone     ToolChoice = "none"
	ToolChoiceRequired ToolChoice = "required"
)

// Tool returns the name of the tool the choice forces, or "" for auto,
// none and required.
func (c ToolChoice) Tool() string {
	switch c {
	case "", ToolChoiceAuto, ToolChoiceNone, ToolChoiceRequired:
		return ""
	}
	return string(c)
}

// Request is one call to a model.
type Request struct {
	// System is the system prompt. System-role messages in Messages are
	// also accepted; drivers whose API takes one system text join them.
	System     string
	Messages   []Message
	Tools      []Tool
	ToolChoice ToolChoice
	// Temperature is left to the server's default when nil.
	Temperature *float64
	// MaxTokens caps the answer; 0 leaves it to the driver's default.
	MaxTokens int
	// ThinkingBudget is what a thinking model may spend thinking before it
	// answers (Gemini 2.5), on top of MaxTokens: a driver whose vendor
	// counts thinking in the output cap sends MaxTokens + ThinkingBudget as
	// the cap. Nil leaves thinking to the model; 0 turns it off where the
	// model allows it. Drivers of models that do not think ignore it.
	ThinkingBudget *int
	// Reply, when set, asks for an answer that is one JSON object valid
	// under a schema. Servers that can hold a model to one do: the
	// OpenAI-compatible response_format (which llama-server turns into a
	// grammar, so a small model cannot wander off into prose or repeat
	// itself past the schema's bounds) and Gemini's response schema. Other
	// drivers rely on the prompt, so callers still parse leniently.
	Reply *Schema
}

// Schema names a JSON Schema for a structured reply.
type Schema struct {
	Name   string          // a short identifier, such as "plan"
	Schema json.RawMessage // a JSON Schema object
}

// Response is the model's answer.
type Response struct {
	Message    Message    `json:"message"` // Role is RoleAssistant
	Usage      Usage      `json:"usage"`
	StopReason StopReason `json:"stop_reason"`
}

// Usage counts the tokens of one call, as the vendor reported them (zero
// when it did not).
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Add returns the sum of two usages.
func (u Usage) Add(v Usage) Usage {
	return Usage{InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens}
}

// StopReason says why the model stopped.
type StopReason string

// The stop reasons every driver maps its vendor's reasons onto.
const (
	StopEnd           StopReason = "stop"           // finished its answer
	StopToolCalls     StopReason = "tool_calls"     // wants tools run
	StopLength        StopReason = "length"         // hit MaxTokens
	StopContentFilter StopReason = "content_filter" // the vendor withheld output
	StopOther         StopReason = "other"          // anything else the vendor said
)

// Delta is one piece of a streamed answer: some text, or a piece of a
// tool call.
type Delta struct {
	Text     string         `json:"text,omitempty"`
	ToolCall *ToolCallDelta `json:"tool_call,omitempty"`
}

// ToolCallDelta is a piece of a tool call. Index tells the calls of one
// answer apart (0, 1, ...); ID and Name come with a call's first piece and
// may be empty on later ones; ArgumentsDelta is appended to the arguments.
type ToolCallDelta struct {
	Index          int    `json:"index"`
	ID             string `json:"id,omitempty"`
	Name           string `json:"name,omitempty"`
	ArgumentsDelta string `json:"arguments_delta,omitempty"`
}

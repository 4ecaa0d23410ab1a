// Package llmtest provides a scripted llm.Model for tests of agent logic:
// each call takes the next step of a script (text, tool calls, an error,
// or a function of the request), every request is recorded for the test to
// inspect, and Stream hands out the scripted answer in small deltas, or
// breaks off after a given number of them.
package llmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/sagasu-dev/sagasu/internal/llm"
)

// Step is one scripted answer. Set Func for an answer computed from the
// request; otherwise Err, if set, is returned, and else Text and ToolCalls
// make the answer.
type Step struct {
	Text      string
	ToolCalls []llm.ToolCall
	// Err is returned instead of an answer (after CutAfter deltas, when
	// streaming with CutAfter > 0).
	Err error
	// Func computes the answer from the request; the other fields are then
	// ignored except CutAfter.
	Func func(llm.Request) (*llm.Response, error)
	// Usage and StopReason are reported as given; StopReason defaults to
	// tool_calls when there are tool calls and stop otherwise.
	Usage      llm.Usage
	StopReason llm.StopReason
	// CutAfter > 0 makes Stream deliver that many deltas and then fail
	// with an error wrapping llm.ErrIncomplete, like a dropped connection.
	// Chat ignores it.
	CutAfter int
}

// Text is a step that answers with text.
func Text(s string) Step { return Step{Text: s} }

// Calls is a step that answers with tool calls.
func Calls(calls ...llm.ToolCall) Step { return Step{ToolCalls: calls} }

// Fail is a step that returns err.
func Fail(err error) Step { return Step{Err: err} }

// Func is a step whose answer is computed from the request.
func Func(f func(llm.Request) (*llm.Response, error)) Step { return Step{Func: f} }

// Call builds a tool call; args is the raw arguments text (it may be
// invalid JSON on purpose).
func Call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

// Model is a scripted llm.Model. It is safe for concurrent use; steps are
// taken in call order.
type Model struct {
	// ChunkSize is how many characters (runes) of text each streamed delta
	// carries (default 4).
	ChunkSize int

	mu       sync.Mutex
	steps    []Step
	requests []llm.Request
}

// New returns a Model that answers with steps, one per call.
func New(steps ...Step) *Model { return &Model{steps: steps} }

// Push appends steps to the script.
func (m *Model) Push(steps ...Step) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.steps = append(m.steps, steps...)
}

// Requests returns copies of the requests received so far, in order.
func (m *Model) Requests() []llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]llm.Request, len(m.requests))
	copy(out, m.requests)
	return out
}

// Remaining is how many scripted steps are left; a test that expects its
// agent to use the whole script checks it is 0.
func (m *Model) Remaining() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.steps)
}

// Info names the scripted model.
func (m *Model) Info() llm.Info {
	return llm.Info{Driver: "llmtest", Model: "scripted", Endpoint: "memory"}
}

// Chat answers with the next step.
func (m *Model) Chat(ctx context.Context, req llm.Request) (*llm.Response, error) {
	st, n, err := m.next(ctx, req)
	if err != nil {
		return nil, err
	}
	return answer(st, req, n)
}

// Stream answers with the next step, delivered in deltas: the text in
// ChunkSize pieces, then each tool call in two pieces (ID, name and the
// first half of the arguments; then the rest).
func (m *Model) Stream(ctx context.Context, req llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	st, n, err := m.next(ctx, req)
	if err != nil {
		return nil, err
	}
	resp, err := answer(st, req, n)
	if err != nil && st.CutAfter == 0 {
		return nil, err
	}
	if resp == nil {
		resp = &llm.Response{Message: llm.Message{Role: llm.RoleAssistant}}
	}
	var acc llm.Accumulator
	for _, d := range m.deltas(resp.Message) {
		if st.CutAfter > 0 && acc.Deltas() == st.CutAfter {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		acc.Add(d)
		if err := onDelta(d); err != nil {
			return nil, err
		}
	}
	if st.CutAfter > 0 {
		if err == nil {
			err = llm.ErrIncomplete
		}
		return nil, fmt.Errorf("llmtest: stream cut after %d deltas: %w", acc.Deltas(), err)
	}
	out := *resp
	out.Message = acc.Message()
	return &out, nil
}

func (m *Model) next(ctx context.Context, req llm.Request) (Step, int, error) {
	if err := ctx.Err(); err != nil {
		return Step{}, 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests = append(m.requests, clone(req))
	n := len(m.requests)
	if len(m.steps) == 0 {
		return Step{}, n, fmt.Errorf("llmtest: no scripted answer left for request %d (last message: %q)", n, lastContent(req))
	}
	st := m.steps[0]
	m.steps = m.steps[1:]
	return st, n, nil
}

func answer(st Step, req llm.Request, n int) (*llm.Response, error) {
	if st.Func != nil {
		resp, err := st.Func(req)
		if err != nil {
			return nil, err
		}
		if resp == nil {
			return nil, fmt.Errorf("llmtest: step %d's Func returned neither an answer nor an error", n)
		}
		return resp, nil
	}
	msg := llm.Message{Role: llm.RoleAssistant, Content: st.Text, ToolCalls: st.ToolCalls}
	stop := st.StopReason
	if stop == "" {
		stop = llm.StopEnd
		if len(st.ToolCalls) > 0 {
			stop = llm.StopToolCalls
		}
	}
	resp := &llm.Response{Message: msg, Usage: st.Usage, StopReason: stop}
	if st.Err != nil {
		return resp, st.Err
	}
	return resp, nil
}

func (m *Model) deltas(msg llm.Message) []llm.Delta {
	size := m.ChunkSize
	if size <= 0 {
		size = 4
	}
	var out []llm.Delta
	text := msg.Content
	for text != "" {
		end, runes := 0, 0
		for end < len(text) && runes < size {
			_, w := utf8.DecodeRuneInString(text[end:])
			end += w
			runes++
		}
		out = append(out, llm.Delta{Text: text[:end]})
		text = text[end:]
	}
	for i, c := range msg.ToolCalls {
		half := len(c.Arguments) / 2
		out = append(out,
			llm.Delta{ToolCall: &llm.ToolCallDelta{Index: i, ID: c.ID, Name: c.Name, ArgumentsDelta: string(c.Arguments[:half])}},
			llm.Delta{ToolCall: &llm.ToolCallDelta{Index: i, ArgumentsDelta: string(c.Arguments[half:])}})
	}
	return out
}

// clone copies the slices of a request so that later changes by the
// caller do not alter what was recorded.
func clone(req llm.Request) llm.Request {
	msgs := make([]llm.Message, len(req.Messages))
	for i, m := range req.Messages {
		m.ToolCalls = append([]llm.ToolCall(nil), m.ToolCalls...)
		msgs[i] = m
	}
	req.Messages = msgs
	req.Tools = append([]llm.Tool(nil), req.Tools...)
	if req.Temperature != nil {
		t := *req.Temperature
		req.Temperature = &t
	}
	return req
}

func lastContent(req llm.Request) string {
	if len(req.Messages) == 0 {
		return ""
	}
	s := req.Messages[len(req.Messages)-1].Content
	if len(s) > 80 {
		s = strings.ToValidUTF8(s[:80], "") + "..."
	}
	return s
}

var _ llm.Model = (*Model)(nil)

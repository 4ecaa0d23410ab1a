package llm

import (
	"encoding/json"
	"strings"
)

// Accumulator assembles a streamed answer from its deltas. Drivers and
// llmtest use it so that every Stream assembles its Response the same way.
// The zero value is ready to use.
type Accumulator struct {
	text  strings.Builder
	calls []ToolCall
	args  []*strings.Builder
	index map[int]int // ToolCallDelta.Index -> position in calls
	count int         // deltas added
	sigs  map[int]string
}

// Add appends one delta.
func (a *Accumulator) Add(d Delta) {
	a.count++
	a.text.WriteString(d.Text)
	tc := d.ToolCall
	if tc == nil {
		return
	}
	if a.index == nil {
		a.index = map[int]int{}
	}
	i, ok := a.index[tc.Index]
	if !ok {
		i = len(a.calls)
		a.index[tc.Index] = i
		a.calls = append(a.calls, ToolCall{})
		a.args = append(a.args, &strings.Builder{})
	}
	if tc.ID != "" {
		a.calls[i].ID = tc.ID
	}
	if tc.Name != "" {
		a.calls[i].Name = tc.Name
	}
	a.args[i].WriteString(tc.ArgumentsDelta)
}

// Deltas is how many deltas were added.
func (a *Accumulator) Deltas() int { return a.count }

// Text is the text so far.
func (a *Accumulator) Text() string { return a.text.String() }

// Message returns the assistant message assembled so far, tool calls in
// the order their first piece arrived.
func (a *Accumulator) Message() Message {
	m := Message{Role: RoleAssistant, Content: a.text.String()}
	for i, c := range a.calls {
		c.Arguments = json.RawMessage(a.args[i].String())
		c.Signature = a.sigs[i]
		m.ToolCalls = append(m.ToolCalls, c)
	}
	return m
}

// SetSignature records a tool call's vendor signature (see
// ToolCall.Signature); index is the call's ToolCallDelta.Index.
func (a *Accumulator) SetSignature(index int, sig string) {
	if i, ok := a.index[index]; ok {
		if a.sigs == nil {
			a.sigs = map[int]string{}
		}
		a.sigs[i] = sig
	}
}

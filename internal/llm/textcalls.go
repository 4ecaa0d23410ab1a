package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// callBlock finds where a tool call written as text may sit: a fenced
// block (```json ... ```), or <tool_call> ... </tool_call> tags that the
// server did not parse.
var callBlock = regexp.MustCompile("(?s)```(?:json|JSON|tool_call)?\\s*\\n(\\{.*?\\})\\s*\\n?```|<tool_call>\\s*(\\{.*?\\})\\s*</tool_call>")

// CallsInText reads the tool calls a model wrote as text instead of as
// calls, as small models do even when the server is asked to require one:
// a JSON object {"name": TOOL, "arguments": {...}} ("parameters" is taken
// too) in a code fence, in <tool_call> tags, or as the whole reply, naming
// one of the tools offered. It returns msg with those calls in ToolCalls
// (IDs text-1, text-2, ...) and the rest of the text as Content, and true;
// or msg unchanged and false when msg already has calls or its text holds
// none. Arguments are not checked here: CheckToolCall answers a bad one.
func CallsInText(msg Message, tools []Tool) (Message, bool) {
	if len(msg.ToolCalls) > 0 || len(tools) == 0 {
		return msg, false
	}
	offered := map[string]bool{}
	for _, t := range tools {
		offered[t.Name] = true
	}
	text := msg.Content
	var calls []ToolCall
	rest := text
	for _, m := range callBlock.FindAllStringSubmatch(text, -1) {
		obj := m[1] + m[2]
		if c, ok := textCall(obj, offered); ok {
			c.ID = fmt.Sprintf("text-%d", len(calls)+1)
			calls = append(calls, c)
			rest = strings.Replace(rest, m[0], "", 1)
		}
	}
	if len(calls) == 0 {
		if c, ok := textCall(strings.TrimSpace(text), offered); ok {
			c.ID = "text-1"
			calls, rest = append(calls, c), ""
		}
	}
	if len(calls) == 0 {
		return msg, false
	}
	msg.ToolCalls, msg.Content = calls, strings.TrimSpace(rest)
	return msg, true
}

// textCall reads one {"name", "arguments"} object naming an offered tool.
func textCall(obj string, offered map[string]bool) (ToolCall, bool) {
	var v struct {
		Name       string          `json:"name"`
		Arguments  json.RawMessage `json:"arguments"`
		Parameters json.RawMessage `json:"parameters"`
	}
	if !strings.HasPrefix(obj, "{") || json.Unmarshal([]byte(obj), &v) != nil || !offered[v.Name] {
		return ToolCall{}, false
	}
	args := bytes.TrimSpace(v.Arguments)
	if len(args) == 0 {
		args = bytes.TrimSpace(v.Parameters)
	}
	var s string
	if json.Unmarshal(args, &s) == nil {
		// Arguments sent as a JSON string holding the object.
		args = []byte(s)
	}
	if len(args) == 0 {
		args = []byte("{}")
	}
	return ToolCall{Name: v.Name, Arguments: json.RawMessage(args)}, true
}

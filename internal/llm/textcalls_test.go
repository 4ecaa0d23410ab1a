package llm

import (
	"encoding/json"
	"testing"
)

func TestCallsInText(t *testing.T) {
	tools := []Tool{{Name: "sagasu_query"}, {Name: "sagasu_get"}}
	for _, tc := range []struct {
		name, text string
		want       []ToolCall
		rest       string
	}{
		{"a fenced call (Qwen2.5-Coder-1.5B, measured)", "To enable it, call the function:\n\n```json\n{\n  \"name\": \"sagasu_query\",\n  \"arguments\": {\n    \"query\": \"local search\",\n    \"k\": 5\n  }\n}\n```",
			[]ToolCall{{ID: "text-1", Name: "sagasu_query", Arguments: json.RawMessage("{\n    \"query\": \"local search\",\n    \"k\": 5\n  }")}}, "To enable it, call the function:"},
		{"tags the server did not parse", `<tool_call> {"name": "sagasu_get", "arguments": {"id": 3}} </tool_call>`,
			[]ToolCall{{ID: "text-1", Name: "sagasu_get", Arguments: json.RawMessage(`{"id": 3}`)}}, ""},
		{"the whole reply, parameters as a string", `{"name": "sagasu_query", "parameters": "{\"query\": \"cors\"}"}`,
			[]ToolCall{{ID: "text-1", Name: "sagasu_query", Arguments: json.RawMessage(`{"query": "cors"}`)}}, ""},
	} {
		got, ok := CallsInText(Message{Role: RoleAssistant, Content: tc.text}, tools)
		if !ok || len(got.ToolCalls) != len(tc.want) {
			t.Errorf("%s: %v, calls %+v", tc.name, ok, got.ToolCalls)
			continue
		}
		for i, c := range got.ToolCalls {
			if c.ID != tc.want[i].ID || c.Name != tc.want[i].Name || string(c.Arguments) != string(tc.want[i].Arguments) {
				t.Errorf("%s: call %d = %+v (args %s), want %+v", tc.name, i, c, c.Arguments, tc.want[i])
			}
		}
		if got.Content != tc.rest {
			t.Errorf("%s: text left %q, want %q", tc.name, got.Content, tc.rest)
		}
	}
	for _, text := range []string{
		"Set `search.provider` to 'local' [1].",
		"```json\n{\"name\": \"rm_rf\", \"arguments\": {}}\n```", // not a tool offered
		"```json\n{\"search\": {\"provider\": \"local\"}}\n```",  // config, not a call
	} {
		if got, ok := CallsInText(Message{Role: RoleAssistant, Content: text}, tools); ok {
			t.Errorf("%q read as calls %+v", text, got.ToolCalls)
		}
	}
	if _, ok := CallsInText(Message{Content: `{"name": "sagasu_query", "arguments": {}}`}, nil); ok {
		t.Error("calls read when no tool was offered")
	}
}

package llm_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/llm"
)

var searchTool = llm.Tool{
	Name:        "search",
	Description: "search the knowledge base",
	Parameters: json.RawMessage(`{"type":"object","properties":{
		"query":{"type":"string"},"limit":{"type":"integer"},"score":{"type":"number"},
		"tags":{"type":["array","null"]}},"required":["query"]}`),
}

var listTool = llm.Tool{Name: "list"} // no parameters at all

// closedTool's schema refuses unknown keys, as derived schemas do.
var closedTool = llm.Tool{Name: "get", Parameters: json.RawMessage(`{"type":"object","additionalProperties":false,
	"properties":{"source":{"type":"string"},"k":{"type":"integer","minimum":1,"maximum":10}},"required":["source"]}`)}

func TestCheckToolCall(t *testing.T) {
	tools := []llm.Tool{searchTool, listTool}
	tests := []struct {
		name    string
		tools   []llm.Tool
		call    llm.ToolCall
		wantErr []string // substrings of the observation; nil means valid
	}{
		{"valid", tools, llm.ToolCall{Name: "search", Arguments: json.RawMessage(`{"query":"go","limit":3}`)}, nil},
		{"number accepts integer", tools, llm.ToolCall{Name: "search", Arguments: json.RawMessage(`{"query":"go","score":1}`)}, nil},
		{"type list", tools, llm.ToolCall{Name: "search", Arguments: json.RawMessage(`{"query":"go","tags":null}`)}, nil},
		{"empty arguments for a tool without parameters", tools, llm.ToolCall{Name: "list"}, nil},
		{"unknown tool", tools, llm.ToolCall{Name: "serch", Arguments: json.RawMessage(`{}`)}, []string{`no tool "serch"`, "search, list"}},
		{"no tools at all", nil, llm.ToolCall{Name: "search"}, []string{"no tools are available"}},
		{"invalid JSON", tools, llm.ToolCall{Name: "search", Arguments: json.RawMessage(`{"query": "go"`)}, []string{"not valid JSON", `{"query": "go"`}},
		{"array instead of object", tools, llm.ToolCall{Name: "search", Arguments: json.RawMessage(`["go"]`)}, []string{`arguments: got ["go"]; give an object with`, "call search again"}},
		{"missing required", tools, llm.ToolCall{Name: "search", Arguments: json.RawMessage(`{"limit":3}`)}, []string{"query: missing; it is required"}},
		{"wrong type", tools, llm.ToolCall{Name: "search", Arguments: json.RawMessage(`{"query":"go","limit":"three"}`)}, []string{`limit: got "three"; give a whole number`}},
		{"fraction for integer", tools, llm.ToolCall{Name: "search", Arguments: json.RawMessage(`{"query":"go","limit":2.5}`)}, []string{"limit: got 2.5; give a whole number"}},
		// 3.0 does not decode into an integer field, so it is refused here
		// rather than failing later in the tool.
		{"integer written as 3.0", tools, llm.ToolCall{Name: "search", Arguments: json.RawMessage(`{"query":"go","limit":3.0}`)}, []string{"limit: got 3.0; give a whole number"}},
		{"unknown key of a closed object", []llm.Tool{closedTool}, llm.ToolCall{Name: "get", Arguments: json.RawMessage(`{"source":"a.md","bogus":1}`)},
			[]string{"bogus: unknown argument; get takes k, source"}},
		{"range", []llm.Tool{closedTool}, llm.ToolCall{Name: "get", Arguments: json.RawMessage(`{"source":"a.md","k":11}`)},
			[]string{"k: got 11; give a whole number from 1 to 10"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, err := llm.CheckToolCall(tt.tools, tt.call)
			if tt.wantErr == nil {
				require.NoError(t, err)
				assert.Equal(t, tt.call.Name, tool.Name)
				return
			}
			require.Error(t, err)
			for _, s := range tt.wantErr {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
}

func TestCheckToolCallLongInvalidArgumentsAreClipped(t *testing.T) {
	args := `{"query":"` + strings.Repeat("あ", 300)
	_, err := llm.CheckToolCall([]llm.Tool{searchTool}, llm.ToolCall{Name: "search", Arguments: json.RawMessage(args)})
	require.Error(t, err)
	assert.Less(t, utf8.RuneCountInString(err.Error()), 400)
	assert.True(t, strings.Contains(err.Error(), "…"))
}

func TestParseArgs(t *testing.T) {
	type args struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	got, err := llm.ParseArgs[args](llm.ToolCall{Name: "search", Arguments: json.RawMessage(`{"query":"go","limit":3}`)})
	require.NoError(t, err)
	assert.Equal(t, args{Query: "go", Limit: 3}, got)

	got, err = llm.ParseArgs[args](llm.ToolCall{Name: "search"})
	require.NoError(t, err)
	assert.Equal(t, args{}, got)

	_, err = llm.ParseArgs[args](llm.ToolCall{Name: "search", Arguments: json.RawMessage(`{"limit":"x"}`)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `tool "search"`)
}

func TestToolChoiceTool(t *testing.T) {
	for choice, want := range map[llm.ToolChoice]string{
		"": "", llm.ToolChoiceAuto: "", llm.ToolChoiceNone: "", llm.ToolChoiceRequired: "", "search": "search",
	} {
		assert.Equal(t, want, choice.Tool(), "choice %q", choice)
	}
}

func TestAccumulatorAssemblesInterleavedToolCalls(t *testing.T) {
	var a llm.Accumulator
	for _, d := range []llm.Delta{
		{Text: "Let me "},
		{Text: "look."},
		{ToolCall: &llm.ToolCallDelta{Index: 3, ID: "a", Name: "search", ArgumentsDelta: `{"qu`}},
		{ToolCall: &llm.ToolCallDelta{Index: 5, ID: "b", Name: "list"}},
		{ToolCall: &llm.ToolCallDelta{Index: 3, ArgumentsDelta: `ery":"go"}`}},
		{ToolCall: &llm.ToolCallDelta{Index: 5, ArgumentsDelta: `{}`}},
	} {
		a.Add(d)
	}
	m := a.Message()
	assert.Equal(t, 6, a.Deltas())
	assert.Equal(t, llm.RoleAssistant, m.Role)
	assert.Equal(t, "Let me look.", m.Content)
	require.Len(t, m.ToolCalls, 2)
	assert.Equal(t, llm.ToolCall{ID: "a", Name: "search", Arguments: json.RawMessage(`{"query":"go"}`)}, m.ToolCalls[0])
	assert.Equal(t, llm.ToolCall{ID: "b", Name: "list", Arguments: json.RawMessage(`{}`)}, m.ToolCalls[1])
}

package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/sagasu-dev/sagasu/internal/clip"
)

// CheckToolCall checks a model's tool call against the tools it was
// offered: the tool exists and its arguments fit the tool's parameter
// schema (CheckArgs: required keys, types, ranges, enums, unknown keys of a
// closed object). It returns the tool, or an error whose text is written
// for the model to read as the tool's observation, so an agent can answer
// a bad call instead of failing.
func CheckToolCall(tools []Tool, call ToolCall) (Tool, error) {
	var tool Tool
	found := false
	for _, t := range tools {
		if t.Name == call.Name {
			tool, found = t, true
			break
		}
	}
	if !found {
		names := make([]string, len(tools))
		for i, t := range tools {
			names[i] = t.Name
		}
		if len(names) == 0 {
			return Tool{}, fmt.Errorf("error: there is no tool %q and no tools are available; answer without calling a tool", call.Name)
		}
		return Tool{}, fmt.Errorf("error: there is no tool %q; call one of: %s", call.Name, strings.Join(names, ", "))
	}
	raw := bytes.TrimSpace(call.Arguments)
	if len(raw) > 0 && !json.Valid(raw) {
		return Tool{}, fmt.Errorf("error: the arguments of tool %q are not valid JSON: %s; call it again with a JSON object", call.Name, clip.Runes(string(raw), 200))
	}
	schema, err := ParseSchema(tool.Parameters)
	if err != nil {
		// The schema is the tool's, not the model's: say so plainly.
		return Tool{}, fmt.Errorf("error: tool %q has an unreadable parameter schema (%v); this is not your fault, try another tool", call.Name, err)
	}
	if err := CheckArgs(call.Name, schema, raw); err != nil {
		return Tool{}, fmt.Errorf("error: %w; call %s again with arguments that fit", err, call.Name)
	}
	return tool, nil
}

// ParseSchema reads a tool's parameter schema; empty parameters are an
// object without properties.
func ParseSchema(params json.RawMessage) (*jsonschema.Schema, error) {
	if len(bytes.TrimSpace(params)) == 0 {
		return &jsonschema.Schema{Type: "object"}, nil
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(params, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// ParseArgs decodes a tool call's arguments into T (a struct with json
// tags, usually). Empty arguments decode as {}. The error text is written
// for the model to read, like CheckToolCall's.
func ParseArgs[T any](call ToolCall) (T, error) {
	var v T
	raw := bytes.TrimSpace(call.Arguments)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, fmt.Errorf("error: the arguments of tool %q do not fit its parameters (%v); call it again with a JSON object that matches the schema", call.Name, err)
	}
	return v, nil
}

package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/clip"
)

// CheckToolCall checks a model's tool call against the tools it was
// offered: the tool exists, the arguments are a JSON object (empty
// arguments count as {}), every required key of the schema is present, and
// top-level values have the type the schema names. It returns the tool, or
// an error whose text is written for the model to read as the tool's
// observation, so an agent can answer a bad call instead of failing.
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
	args, err := argsObject(call)
	if err != nil {
		return Tool{}, err
	}
	var schema struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			Type json.RawMessage `json:"type"`
		} `json:"properties"`
	}
	if len(bytes.TrimSpace(tool.Parameters)) > 0 {
		if err := json.Unmarshal(tool.Parameters, &schema); err != nil {
			// The schema is ours, not the model's: say so plainly.
			return Tool{}, fmt.Errorf("error: tool %q has an unreadable parameter schema (%v); this is not your fault, try another tool", call.Name, err)
		}
	}
	var missing []string
	for _, k := range schema.Required {
		if _, ok := args[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return Tool{}, fmt.Errorf("error: tool %q needs the argument(s) %s; call it again with them", call.Name, quoteList(missing))
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p, ok := schema.Properties[k]
		if !ok || len(p.Type) == 0 {
			continue
		}
		if want, got, ok := typeMatches(p.Type, args[k]); !ok {
			return Tool{}, fmt.Errorf("error: argument %q of tool %q must be %s, not %s; call it again with a %s", k, call.Name, want, got, want)
		}
	}
	return tool, nil
}

// ParseArgs decodes a tool call's arguments into T (a struct with json
// tags, usually). Empty arguments decode as {}. The error text is written
// for the model to read, like CheckToolCall's.
func ParseArgs[T any](call ToolCall) (T, error) {
	var v T
	raw := bytes.TrimSpace(call.Arguments)
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, fmt.Errorf("error: the arguments of tool %q do not fit its parameters (%v); call it again with a JSON object that matches the schema", call.Name, err)
	}
	return v, nil
}

func argsObject(call ToolCall) (map[string]json.RawMessage, error) {
	raw := bytes.TrimSpace(call.Arguments)
	if len(raw) == 0 {
		return map[string]json.RawMessage{}, nil
	}
	if !json.Valid(raw) {
		return nil, fmt.Errorf("error: the arguments of tool %q are not valid JSON: %s; call it again with a JSON object", call.Name, clip.Runes(string(raw), 200))
	}
	var args map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &args) != nil {
		return nil, fmt.Errorf("error: the arguments of tool %q must be a JSON object, got %s; call it again with a JSON object", call.Name, clip.Runes(string(raw), 200))
	}
	if args == nil {
		args = map[string]json.RawMessage{}
	}
	return args, nil
}

// typeMatches checks a value against a schema "type" (a name or a list of
// names). It returns the wanted and found type names.
func typeMatches(schemaType, value json.RawMessage) (want, got string, ok bool) {
	var names []string
	var one string
	if json.Unmarshal(schemaType, &one) == nil {
		names = []string{one}
	} else if json.Unmarshal(schemaType, &names) != nil {
		return "", "", true // not a type we can read: do not judge
	}
	got = jsonType(value)
	for _, n := range names {
		if n == got || (n == "number" && got == "integer") {
			return "", "", true
		}
	}
	return strings.Join(names, " or "), got, false
}

func jsonType(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	if bytes.ContainsAny(v, ".eE") {
		var f float64
		if json.Unmarshal(v, &f) == nil && f == float64(int64(f)) {
			return "integer"
		}
		return "number"
	}
	return "integer"
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}

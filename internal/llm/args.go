package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// CheckArgs is sagasu's one check of a tool call's arguments against the
// tool's input schema, for every caller of a tool: an MCP client calling
// sagasu's tools, a model calling the agents' tools or an MCP server's. A
// bad call is answered in the caller's terms: which argument, what was
// given and what is allowed (`options.k: got -1; give a whole number from
// 1 to 10`), rather than in a validator's (`validating
// /properties/options/properties/k: minimum: -1/1 is less than 1.000000`).
// What passes it also decodes into the tool's input struct.

// maxArgDepth bounds how deeply arguments may nest (the SDK refuses 1,000
// levels with a message that names no argument).
const maxArgDepth = 64

// maxArgProblems is how many problems one answer lists.
const maxArgProblems = 8

// ArgError is a tool call's bad arguments, one line per problem.
type ArgError struct {
	Tool     string
	Problems []string
}

func (e *ArgError) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0]
	}
	return fmt.Sprintf("%d problems with the arguments of %s:\n%s", len(e.Problems), e.Tool, strings.Join(e.Problems, "\n"))
}

// CheckArgs checks a tool call's raw arguments against the tool's input
// schema and returns an *ArgError listing the problems, or nil. Empty
// arguments count as {}.
func CheckArgs(tool string, schema *jsonschema.Schema, raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	if d := depth(raw); d > maxArgDepth {
		return &ArgError{Tool: tool, Problems: []string{fmt.Sprintf("arguments: nested %d levels deep; give at most %d", d, maxArgDepth)}}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return &ArgError{Tool: tool, Problems: []string{fmt.Sprintf("arguments: not valid JSON (%v); give a JSON object", err)}}
	}
	if _, err := dec.Token(); err != io.EOF {
		return &ArgError{Tool: tool, Problems: []string{"arguments: more follows the first JSON value; give one JSON object"}}
	}
	c := &checker{}
	if _, ok := v.(map[string]any); !ok {
		c.add("arguments", v, "give an object with "+fieldList(schema, "the fields"))
	} else {
		c.check("", schema, v, tool)
	}
	if len(c.problems) == 0 {
		return nil
	}
	if len(c.problems) > maxArgProblems {
		n := len(c.problems) - maxArgProblems
		c.problems = append(c.problems[:maxArgProblems], fmt.Sprintf("… and %d more", n))
	}
	return &ArgError{Tool: tool, Problems: c.problems}
}

// depth is how deeply raw JSON nests, ignoring brackets inside strings.
func depth(raw []byte) int {
	d, most, inString, escaped := 0, 0, false, false
	for _, b := range raw {
		switch {
		case escaped:
			escaped = false
		case inString && b == '\\':
			escaped = true
		case b == '"':
			inString = !inString
		case inString:
		case b == '{' || b == '[':
			d++
			most = max(most, d)
		case b == '}' || b == ']':
			d--
		}
	}
	return most
}

type checker struct{ problems []string }

// add records that the argument at path got v, and what to do.
func (c *checker) add(path string, v any, what string) {
	c.problems = append(c.problems, fmt.Sprintf("%s: got %s; %s", path, shown(v), what))
}

// check checks v against s; owner names what holds the fields of an object
// (the tool at the top, else the path).
func (c *checker) check(path string, s *jsonschema.Schema, v any, owner string) {
	if s == nil {
		return
	}
	name := path
	if name == "" {
		name = "arguments"
	}
	give := "give " + describe(s)
	if v == nil {
		if !allows(s, "null") {
			c.add(name, v, give+", or leave "+name+" out")
		}
		return
	}
	switch v := v.(type) {
	case map[string]any:
		if !allows(s, "object") {
			c.add(name, v, give)
			return
		}
		c.object(path, s, v, owner)
	case []any:
		if !allows(s, "array") {
			c.add(name, v, give)
			return
		}
		if n := s.MinItems; n != nil && len(v) < *n {
			c.add(name, v, give)
		}
		if n := s.MaxItems; n != nil && len(v) > *n {
			c.add(name, v, give)
		}
		for i, item := range v {
			c.check(fmt.Sprintf("%s[%d]", name, i), s.Items, item, fmt.Sprintf("%s[%d]", name, i))
		}
	case string:
		if !allows(s, "string") {
			c.add(name, v, give)
			return
		}
		n := utf8.RuneCountInString(v)
		if s.MinLength != nil && n < *s.MinLength || s.MaxLength != nil && n > *s.MaxLength || !inEnum(s, v) {
			c.add(name, v, give)
		}
	case bool:
		if !allows(s, "boolean") || !inEnum(s, v) {
			c.add(name, v, give)
		}
	case json.Number:
		c.number(name, s, v, give)
	}
}

// object checks an object's fields: required ones present, unknown ones
// refused, each one against its schema.
func (c *checker) object(path string, s *jsonschema.Schema, v map[string]any, owner string) {
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	for _, k := range s.Required {
		if _, ok := v[k]; !ok {
			ps := s.Properties[k]
			what := "it is required: give " + describe(ps)
			if ps != nil && ps.Description != "" {
				what += " (" + ps.Description + ")"
			}
			c.problems = append(c.problems, fmt.Sprintf("%s: missing; %s", join(k), what))
		}
	}
	closed := s.AdditionalProperties != nil && s.AdditionalProperties.Not != nil
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		ps, ok := s.Properties[k]
		if !ok {
			if closed {
				what := "unknown field"
				if path == "" {
					what = "unknown argument"
				}
				c.problems = append(c.problems, fmt.Sprintf("%s: %s; %s takes %s", join(k), what, owner, fieldList(s, "no fields")))
			}
			continue
		}
		c.check(join(k), ps, v[k], join(k))
	}
}

// number checks a JSON number: a whole number where one is asked for,
// within the schema's range and small enough to decode.
func (c *checker) number(name string, s *jsonschema.Schema, n json.Number, give string) {
	f, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || math.IsInf(f, 0) {
		c.add(name, n, give)
		return
	}
	switch {
	case allows(s, "integer") && !allows(s, "number"):
		// Go decodes only plain integer literals that fit 64 bits.
		if _, err := strconv.ParseInt(n.String(), 10, 64); err != nil {
			c.add(name, n, give)
			return
		}
	case !allows(s, "number"):
		c.add(name, n, give)
		return
	}
	if s.Minimum != nil && f < *s.Minimum || s.Maximum != nil && f > *s.Maximum || !inEnum(s, f) {
		c.add(name, n, give)
	}
}

// allows reports whether s admits JSON values of type t.
func allows(s *jsonschema.Schema, t string) bool {
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	if len(types) == 0 {
		return true
	}
	return slices.Contains(types, t) || t == "integer" && slices.Contains(types, "number")
}

func inEnum(s *jsonschema.Schema, v any) bool {
	if len(s.Enum) == 0 {
		return true
	}
	for _, e := range s.Enum {
		if e == v {
			return true
		}
		if f, ok := v.(float64); ok {
			if g, ok := e.(float64); ok && f == g {
				return true
			}
		}
	}
	return false
}

// describe says in words what a schema allows: "a whole number from 1 to
// 10", `one of "summary", "detailed", "full"`, "a list of strings".
func describe(s *jsonschema.Schema) string {
	if s == nil {
		return "any value"
	}
	if len(s.Enum) > 0 {
		var vs []string
		for _, e := range s.Enum {
			raw, _ := json.Marshal(e)
			vs = append(vs, string(raw))
		}
		return "one of " + strings.Join(vs, ", ")
	}
	var kinds []string
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	for _, t := range types {
		if t == "null" {
			continue
		}
		kinds = append(kinds, kind(s, t))
	}
	if len(kinds) == 0 {
		return "any value"
	}
	return strings.Join(kinds, " or ")
}

func kind(s *jsonschema.Schema, t string) string {
	switch t {
	case "integer":
		return "a whole number" + bounds(s)
	case "number":
		return "a number" + bounds(s)
	case "string":
		if s.MinLength != nil && *s.MinLength > 0 {
			return "a non-empty string"
		}
		return "a string"
	case "boolean":
		return "true or false"
	case "array":
		item := "values"
		if s.Items != nil {
			item = plural(describe(s.Items))
		}
		return "a list of " + item
	case "object":
		if len(s.Properties) == 0 {
			return "an object"
		}
		return "an object with " + fieldList(s, "no fields")
	}
	return t
}

// plural turns "a string" into "strings", "a whole number from 1 to 2"
// into "whole numbers from 1 to 2", "an object with a, b" into "objects
// with a, b".
func plural(desc string) string {
	for _, art := range []string{"a ", "an "} {
		if rest, ok := strings.CutPrefix(desc, art); ok {
			noun, tail, _ := strings.Cut(rest, " from ")
			if tail != "" {
				return noun + "s from " + tail
			}
			noun, tail, found := strings.Cut(rest, " with ")
			if found {
				return noun + "s with " + tail
			}
			noun, tail, found = strings.Cut(rest, " of ")
			if found {
				return noun + "s of " + tail
			}
			return rest + "s"
		}
	}
	return desc
}

// bounds says a number's range.
func bounds(s *jsonschema.Schema) string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	switch {
	case s.Minimum != nil && s.Maximum != nil:
		return " from " + f(*s.Minimum) + " to " + f(*s.Maximum)
	case s.Minimum != nil:
		return " of at least " + f(*s.Minimum)
	case s.Maximum != nil:
		return " of at most " + f(*s.Maximum)
	}
	return ""
}

// fieldList lists an object schema's fields in their declared order.
func fieldList(s *jsonschema.Schema, none string) string {
	names := slices.Clone(s.PropertyOrder)
	for k := range s.Properties {
		if !slices.Contains(names, k) {
			names = append(names, k)
		}
	}
	if len(names) == 0 {
		return none
	}
	slices.Sort(names[len(s.PropertyOrder):])
	return strings.Join(names, ", ")
}

// shown renders a value given for an argument, shortened.
func shown(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	const most = 60
	if utf8.RuneCount(raw) > most {
		r := []rune(string(raw))
		return string(r[:most]) + "…"
	}
	return string(raw)
}

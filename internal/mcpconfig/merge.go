package mcpconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Action says what a merge did to the server's entry.
type Action string

// Actions of a merge.
const (
	Added     Action = "added"
	Updated   Action = "updated"
	Unchanged Action = "unchanged"
)

// Result is a merged file.
type Result struct {
	Data   []byte
	Action Action
	// Lossy is set when the file had comments or trailing commas (JSON with
	// comments, as VS Code allows) that the rewritten file no longer has:
	// the caller keeps a backup of the original.
	Lossy bool
}

// ParseError is a client file sagasu cannot read; nothing is written.
type ParseError struct{ Err error }

func (e *ParseError) Error() string { return e.Err.Error() }
func (e *ParseError) Unwrap() error { return e.Err }

// Merge puts s into a client's file whose current content is existing (nil
// or empty for a new file). Every other server and setting is kept: JSON
// keys keep their order and values, TOML text outside the server's own
// table is kept byte for byte. Fields of an existing entry that sagasu does
// not set (env, timeouts) are kept too.
func Merge(c Client, existing []byte, s Server) (Result, error) {
	if err := s.Check(); err != nil {
		return Result{}, err
	}
	if c.Format == TOML {
		return mergeTOML(c, existing, s)
	}
	return mergeJSON(c, existing, s)
}

// member is one key of a JSON object, with its value as written.
type member struct {
	key string
	val json.RawMessage
}

func decodeObject(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("it is not a JSON object")
	}
	var ms []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		ms = append(ms, member{key: tok.(string), val: raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("it has more than one JSON value")
	}
	return ms, nil
}

// encodeObject writes ms as an indented object; nested values keep their
// key order.
func encodeObject(ms []member, prefix string) ([]byte, error) {
	if len(ms) == 0 {
		return []byte("{}"), nil
	}
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, m := range ms {
		k, err := marshalJSON(m.key)
		if err != nil {
			return nil, err
		}
		b.WriteString(prefix + "  ")
		b.Write(k)
		b.WriteString(": ")
		if err := json.Indent(&b, m.val, prefix+"  ", "  "); err != nil {
			return nil, err
		}
		if i < len(ms)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(prefix + "}")
	return b.Bytes(), nil
}

func find(ms []member, key string) int {
	for i, m := range ms {
		if m.key == key {
			return i
		}
	}
	return -1
}

func mergeJSON(c Client, existing []byte, s Server) (Result, error) {
	data := existing
	lossy := false
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}")
	} else if !json.Valid(data) {
		stripped := stripJSONC(data)
		if !json.Valid(stripped) {
			var v any
			err := json.Unmarshal(data, &v)
			return Result{}, &ParseError{fmt.Errorf("it is not valid JSON (%v)", err)}
		}
		data, lossy = stripped, true
	}
	top, err := decodeObject(data)
	if err != nil {
		return Result{}, &ParseError{err}
	}
	entry, err := c.entryJSON(s)
	if err != nil {
		return Result{}, err
	}
	ti := find(top, c.Key)
	if ti < 0 {
		top = append(top, member{key: c.Key, val: json.RawMessage("{}")})
		ti = len(top) - 1
	}
	servers, err := decodeObject(top[ti].val)
	if err != nil {
		return Result{}, &ParseError{fmt.Errorf("%q: %w", c.Key, err)}
	}
	action := Added
	if si := find(servers, s.Name); si >= 0 {
		old, err := decodeObject(servers[si].val)
		if err != nil {
			return Result{}, &ParseError{fmt.Errorf("%s.%s: %w", c.Key, s.Name, err)}
		}
		// Keep the fields sagasu does not own (env, cwd, ...), in place.
		fields, _ := decodeObject(entry)
		for _, f := range fields {
			if i := find(old, f.key); i >= 0 {
				old[i].val = f.val
			} else {
				old = append(old, f)
			}
		}
		merged, err := encodeObject(old, "")
		if err != nil {
			return Result{}, err
		}
		action = Updated
		if sameJSON(servers[si].val, merged) {
			action = Unchanged
		}
		servers[si].val = merged
	} else {
		servers = append(servers, member{key: s.Name, val: entry})
	}
	if action == Unchanged && !lossy && len(existing) > 0 {
		return Result{Data: existing, Action: Unchanged}, nil
	}
	if top[ti].val, err = encodeObject(servers, ""); err != nil {
		return Result{}, err
	}
	out, err := encodeObject(top, "")
	if err != nil {
		return Result{}, err
	}
	out = append(out, '\n')
	if err := checkJSONKept(c, data, out, s.Name); err != nil {
		return Result{}, err
	}
	return Result{Data: out, Action: action, Lossy: lossy}, nil
}

func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// checkJSONKept confirms that out holds everything before held except the
// server's own entry: the last guard before a user's file is replaced.
func checkJSONKept(c Client, before, out []byte, name string) error {
	var b, a map[string]any
	if err := json.Unmarshal(before, &b); err != nil {
		return err
	}
	if err := json.Unmarshal(out, &a); err != nil {
		return fmt.Errorf("merged file does not parse (a bug; nothing written): %w", err)
	}
	for _, m := range []map[string]any{a, b} {
		if sv, ok := m[c.Key].(map[string]any); ok {
			delete(sv, name)
			if len(sv) == 0 {
				delete(m, c.Key)
			}
		}
	}
	if !reflect.DeepEqual(a, b) {
		return errors.New("merged file would not keep the other settings (a bug; nothing written)")
	}
	return nil
}

// stripJSONC removes // and /* */ comments and trailing commas outside
// strings, the JSON-with-comments VS Code and Cursor accept.
func stripJSONC(data []byte) []byte {
	out := make([]byte, 0, len(data))
	inString := false
	for i := 0; i < len(data); i++ {
		ch := data[i]
		switch {
		case inString:
			out = append(out, ch)
			if ch == '\\' && i+1 < len(data) {
				i++
				out = append(out, data[i])
			} else if ch == '"' {
				inString = false
			}
		case ch == '"':
			inString = true
			out = append(out, ch)
		case ch == '/' && i+1 < len(data) && data[i+1] == '/':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			if i < len(data) {
				out = append(out, '\n')
			}
		case ch == '/' && i+1 < len(data) && data[i+1] == '*':
			end := bytes.Index(data[i+2:], []byte("*/"))
			if end < 0 {
				return data // an unclosed comment: leave it for the parser to report
			}
			i += 2 + end + 1
			out = append(out, ' ')
		default:
			out = append(out, ch)
		}
	}
	// Trailing commas: a ',' whose next non-space byte closes an object or
	// array (strings cannot hold a raw newline, so a scan is safe once we
	// skip them).
	res := make([]byte, 0, len(out))
	inString = false
	for i := 0; i < len(out); i++ {
		ch := out[i]
		if inString {
			res = append(res, ch)
			if ch == '\\' && i+1 < len(out) {
				i++
				res = append(res, out[i])
			} else if ch == '"' {
				inString = false
			}
			continue
		}
		if ch == '"' {
			inString = true
		}
		if ch == ',' {
			j := i + 1
			for j < len(out) && strings.ContainsRune(" \t\r\n", rune(out[j])) {
				j++
			}
			if j < len(out) && (out[j] == '}' || out[j] == ']') {
				continue
			}
		}
		res = append(res, ch)
	}
	return res
}

func mergeTOML(c Client, existing []byte, s Server) (Result, error) {
	var before map[string]any
	if err := toml.Unmarshal(existing, &before); err != nil {
		return Result{}, &ParseError{fmt.Errorf("it is not valid TOML (%v)", err)}
	}
	want := map[string]any{"command": s.Command, "args": toAny(s.Args)}
	servers, _ := before[c.Key].(map[string]any)
	if _, ok := before[c.Key]; ok && servers == nil {
		return Result{}, &ParseError{fmt.Errorf("%s is not a table", c.Key)}
	}
	old, had := servers[s.Name].(map[string]any)
	if _, ok := servers[s.Name]; ok && !had {
		return Result{}, &ParseError{fmt.Errorf("%s.%s is not a table", c.Key, s.Name)}
	}
	var out []byte
	action := Added
	if had {
		merged := make(map[string]any, len(old))
		for k, v := range old {
			merged[k] = v
		}
		for k, v := range want {
			merged[k] = v
		}
		if reflect.DeepEqual(normalize(merged), normalize(old)) {
			return Result{Data: existing, Action: Unchanged}, nil
		}
		table, err := toml.Marshal(map[string]any{c.Key: map[string]any{s.Name: merged}})
		if err != nil {
			return Result{}, err
		}
		var ok bool
		out, ok = replaceTable(existing, c.Key, s.Name, table)
		if !ok {
			return Result{}, &ParseError{fmt.Errorf("%s.%s is not written as a [%s.%s] table, so sagasu cannot replace it safely; edit it by hand", c.Key, s.Name, c.Key, s.Name)}
		}
		action = Updated
	} else {
		table, err := tomlTable(c.Key, s)
		if err != nil {
			return Result{}, err
		}
		out = bytes.Clone(existing)
		if len(bytes.TrimSpace(out)) > 0 {
			if !bytes.HasSuffix(out, []byte("\n")) {
				out = append(out, '\n')
			}
			out = append(out, '\n')
		} else {
			out = nil
		}
		out = append(out, table...)
	}
	var after map[string]any
	if err := toml.Unmarshal(out, &after); err != nil {
		return Result{}, &ParseError{fmt.Errorf("the merged file would not parse (%v); edit it by hand", err)}
	}
	got, _ := after[c.Key].(map[string]any)
	gotEntry, _ := got[s.Name].(map[string]any)
	if gotEntry["command"] != s.Command || !reflect.DeepEqual(gotEntry["args"], toAny(s.Args)) {
		return Result{}, &ParseError{fmt.Errorf("%s.%s is spread over the file in a way sagasu cannot replace safely; edit it by hand", c.Key, s.Name)}
	}
	for _, m := range []map[string]any{before, after} {
		if sv, ok := m[c.Key].(map[string]any); ok {
			delete(sv, s.Name)
			if len(sv) == 0 {
				delete(m, c.Key)
			}
		}
	}
	if before == nil {
		before = map[string]any{}
	}
	if !reflect.DeepEqual(normalize(before), normalize(after)) {
		return Result{}, errors.New("merged file would not keep the other settings (a bug; nothing written)")
	}
	return Result{Data: out, Action: action}, nil
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// normalize makes decoded TOML comparable (nil and empty maps alike).
func normalize(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// replaceTable swaps the text of [key.name] and its sub-tables for table,
// leaving every other byte of data as it was. It reports false when the
// header is not found.
func replaceTable(data []byte, key, name string, table []byte) ([]byte, bool) {
	own := regexp.MustCompile(`^\s*\[\[?\s*` + regexp.QuoteMeta(key) + `\s*\.\s*("?)` + regexp.QuoteMeta(name) + `("?)\s*(\]|\.)`)
	lines := strings.SplitAfter(string(data), "\n")
	start, end := -1, len(lines)
	for i, ln := range lines {
		header := strings.HasPrefix(strings.TrimSpace(ln), "[")
		if start < 0 {
			if own.MatchString(ln) {
				start = i
			}
			continue
		}
		if header && !own.MatchString(ln) {
			end = i
			break
		}
	}
	if start < 0 {
		return nil, false
	}
	// Comments and blank lines just above the next header belong to it.
	for end > start+1 && end <= len(lines) {
		prev := strings.TrimSpace(lines[end-1])
		if prev != "" && !strings.HasPrefix(prev, "#") {
			break
		}
		end--
	}
	// toml.Marshal writes the parent table header too; keep only ours.
	body := string(table)
	if i := strings.Index(body, "["+key+"."); i >= 0 {
		body = body[i:]
	}
	body = strings.TrimRight(body, "\n") + "\n"
	if end < len(lines) {
		body += "\n"
	}
	return []byte(strings.Join(lines[:start], "") + body + strings.Join(lines[end:], "")), true
}

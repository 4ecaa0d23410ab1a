package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/loop"
)

// The registry: every operation is an Op — its Def (name, description,
// input schema derived from a Go struct whose every field is described), a
// group, and Call, which checks the arguments against the schema (the one
// check every face passes), decodes them and runs the operation. Call
// answers a Reply: the output (one JSON shape on every face), how it reads
// as text, and the resources behind it, measured once. The CLI, the MCP
// server, the page's API and the agents' functions are adapters over Ops.

// Groups of operations: a face offers some of them (`sagasu mcp --tools`).
const (
	GroupSearch = "search" // search, query, get, list
	GroupLoop   = "loop"   // evaluate, refine, plan stage, loop, read cache
	GroupIndex  = "index"  // index, delete
	GroupAgents = "agents" // ask, agent runs
	GroupRuns   = "runs"   // run lifecycle: list, delete, prune, export
)

// Groups are every group, in the order faces list them.
var Groups = []string{GroupSearch, GroupLoop, GroupIndex, GroupAgents, GroupRuns}

// DefaultGroups are what `sagasu mcp` offers unless told otherwise: what an
// agent needs to search in the loop, at a small cost in context.
var DefaultGroups = []string{GroupSearch, GroupLoop}

// SelectGroups reads a comma-separated list of groups ("all" for every
// one, "" for the default) and returns it checked.
func SelectGroups(spec string) ([]string, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" || spec == "default" {
		return slices.Clone(DefaultGroups), nil
	}
	var out []string
	for _, g := range strings.Split(spec, ",") {
		g = strings.TrimSpace(g)
		switch {
		case g == "all":
			return slices.Clone(Groups), nil
		case g == "default":
			for _, d := range DefaultGroups {
				if !slices.Contains(out, d) {
					out = append(out, d)
				}
			}
		case slices.Contains(Groups, g):
			if !slices.Contains(out, g) {
				out = append(out, g)
			}
		case g != "":
			return nil, fmt.Errorf("tool group %q: give a comma-separated list of %s, default or all", g, strings.Join(Groups, ", "))
		}
	}
	return out, nil
}

// Op is one operation of the registry.
type Op struct {
	Def
	// Group is the group a face offers it in.
	Group string
	// Output is the output's schema; a face lists it only when Typed.
	Output *jsonschema.Schema
	// Typed says the output schema pays for itself: clients that read
	// structured results by field (rather than a model reading the text)
	// need it. See docs/mcp.md.
	Typed bool
	call  func(ctx context.Context, env *Env, raw json.RawMessage) (Reply, error)
}

// Env is what a face brings to a call: how replies are measured and
// bounded, how cursors are signed, which session a step belongs to, and
// where progress goes. The zero Env measures as `sagasu mcp` does by
// default (cl100k_base with budget.DefaultMargin) under the default limits,
// and uses the toolset's own cursors: so every face answers alike.
type Env struct {
	Counter *budget.Counter
	Limits  budget.Limits
	Cursors *Cursors
	// Session names the agent-cache session of a goal-directed step when
	// the caller named none (the MCP server: one per connection and goal).
	Session func(given, goal string) string
	// Progress receives an index run's progress.
	Progress func(IndexProgress)
	// Trace receives a loop's steps as they happen (a face's live trace).
	Trace func(loop.Event)
	// Offers says whether the face offers the operation called name (nil:
	// every one). A next step names a tool only when the caller can call
	// it; otherwise it says the step in words.
	Offers func(name string) bool
}

// offered drops the tool call from a next step the face does not offer.
func (e *Env) offered(a Action) Action {
	if a.Tool != "" && e.Offers != nil && !e.Offers(a.Tool) {
		a.Tool, a.Arguments = "", nil
	}
	return a
}

// Reply is an operation's answer as every face gets it.
type Reply struct {
	// Out is the output: `sagasu X --json`, MCP structuredContent and the
	// page's API are its JSON (JSON).
	Out  any
	JSON json.RawMessage
	// Text is how it reads: the MCP text content, and what the CLI prints.
	Text string
	// Links are the resources behind it.
	Links []Link
	// Tokens is its measured size (Out's estimatedTokens).
	Tokens int
}

// Link is a resource a reply points to.
type Link struct {
	URI  string `json:"uri"`
	Name string `json:"name"`
	MIME string `json:"mimeType,omitempty"`
}

// Callable reports whether the operation can run here (a listed one may
// lack what it runs on, such as a language model for sagasu_ask).
func (o Op) Callable() bool { return o.call != nil }

// Call checks raw against the operation's input schema, decodes it and
// runs the operation. An argument the schema refuses is ErrInvalidArgument,
// in words that name it.
func (o Op) Call(ctx context.Context, env *Env, raw json.RawMessage) (Reply, error) {
	if o.call == nil {
		return Reply{}, fmt.Errorf("%s is not available here", o.Name)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = json.RawMessage("{}")
	}
	if err := llm.CheckArgs(o.Name, o.Input, raw); err != nil {
		return Reply{}, &argError{msg: err.Error(), cause: err}
	}
	if env == nil {
		env = &Env{}
	}
	return o.call(ctx, env, raw)
}

// CallWith runs the operation with a typed input (a face that builds the
// input itself, such as the CLI from its flags): the input goes through the
// same check as a client's JSON.
func (o Op) CallWith(ctx context.Context, env *Env, in any) (Reply, error) {
	raw, err := json.Marshal(in)
	if err != nil {
		return Reply{}, fmt.Errorf("encode the input of %s: %w", o.Name, err)
	}
	return o.Call(ctx, env, raw)
}

// Bind makes an operation of def whose runner takes the decoded input.
// run may be nil: the operation is listed but not callable (a face that
// only lists it, such as `sagasu tools`).
func Bind[In any](def Def, group string, out *jsonschema.Schema, run func(ctx context.Context, env *Env, in In) (Reply, error)) Op {
	op := Op{Def: def, Group: group, Output: out}
	if run != nil {
		op.call = func(ctx context.Context, env *Env, raw json.RawMessage) (Reply, error) {
			var in In
			if err := json.Unmarshal(raw, &in); err != nil {
				return Reply{}, invalidf("arguments of %s: %v", def.Name, err)
			}
			return run(ctx, env, in)
		}
	}
	return op
}

// OutputOf derives the schema of an output type.
func OutputOf[Out any]() *jsonschema.Schema {
	s, err := jsonschema.For[Out](nil)
	if err != nil {
		panic(fmt.Sprintf("output schema of %T: %v", *new(Out), err)) // a programming error, found by any test
	}
	return s
}

// Registry is a list of operations.
type Registry []Op

// Find returns the operation called name.
func (r Registry) Find(name string) (Op, bool) {
	for _, o := range r {
		if o.Name == name {
			return o, true
		}
	}
	return Op{}, false
}

// In returns the operations of the given groups, in the registry's order.
func (r Registry) In(groups []string) Registry {
	var out Registry
	for _, o := range r {
		if slices.Contains(groups, o.Group) {
			out = append(out, o)
		}
	}
	return out
}

// Call runs the operation called name.
func (r Registry) Call(ctx context.Context, env *Env, name string, raw json.RawMessage) (Reply, error) {
	o, ok := r.Find(name)
	if !ok {
		return Reply{}, invalidf("no operation %q: `sagasu tools` lists them", name)
	}
	return o.Call(ctx, env, raw)
}

// counter returns the env's counter, or the default one.
func (e *Env) counter() *budget.Counter {
	if e.Counter != nil {
		return e.Counter
	}
	e.Counter = budget.Default()
	return e.Counter
}

// Budget returns the env's limits, or the defaults.
func (e *Env) Budget() budget.Limits { return e.limits() }

// limits returns the env's limits, or the defaults.
func (e *Env) limits() budget.Limits {
	if e.Limits == (budget.Limits{}) {
		return budget.DefaultLimits()
	}
	return e.Limits
}

// session returns the session a goal-directed step is recorded in.
func (e *Env) session(given, goal string) string {
	if given != "" || e.Session == nil {
		return given
	}
	return e.Session(given, goal)
}

// MaxAskTurns bounds a question's model calls on every face (sagasu ask
// --max-turns, sagasu_ask's maxTurns, the page).
const MaxAskTurns = 20

// Envelope is what the wire adds around a reply, in tokens: the JSON-RPC
// envelope and the protocol's fields around the content. Every budget keeps
// it free.
const Envelope = 64

// View is one rendering of a reply, in one shape.
type View[T any] struct {
	Out   T
	Text  string
	Links []Link
}

// measured is what a rendering weighs: its JSON, its text and its links,
// as a tool result carries them (MCP's content and structuredContent; the
// other faces carry less). It returns the JSON and the bytes to count.
func measured[T any](v View[T]) (json.RawMessage, []byte, error) {
	out, err := json.Marshal(v.Out)
	if err != nil {
		return nil, nil, fmt.Errorf("encode the result: %w", err)
	}
	type item struct {
		Type string `json:"type"`
		Text string `json:"text,omitempty"`
		Link
	}
	content := []item{{Type: "text", Text: v.Text}}
	for _, l := range v.Links {
		content = append(content, item{Type: "resource_link", Link: l})
	}
	all, err := json.Marshal(struct {
		Content    []item          `json:"content"`
		Structured json.RawMessage `json:"structuredContent"`
	}{content, out})
	return out, all, err
}

// Fit renders a reply in the largest shape whose measured size is within
// limit tokens (less the Envelope) and writes that size into it
// (estimatedTokens). build renders one shape with the given size; minText
// is the shortest a text may become before items are dropped. Each shape
// tried is measured once; the chosen one is not measured again.
func Fit[T any](env *Env, limit int, full budget.Shape, minText int, build func(sh budget.Shape, tokens int) View[T]) (Reply, error) {
	type rendered struct {
		v    View[T]
		json json.RawMessage
	}
	f, err := budget.Fit(env.counter(), limit-Envelope, full, minText, func(sh budget.Shape, est int) (rendered, []byte, error) {
		v := build(sh, est)
		out, all, err := measured(v)
		return rendered{v, out}, all, err
	})
	if errors.Is(err, budget.ErrTooLarge) {
		return Reply{}, fmt.Errorf("even the smallest form of this response (%d tokens) exceeds its %d-token budget: shorten the text you passed in", f.Tokens, limit)
	}
	if err != nil {
		return Reply{}, err
	}
	v := f.Value.v
	return Reply{Out: v.Out, JSON: f.Value.json, Text: v.Text, Links: v.Links, Tokens: f.Tokens}, nil
}

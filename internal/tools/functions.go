package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/loop"
	"github.com/sagasu-dev/sagasu/internal/search"
)

// AgentFunctions are the operations the agents offer their models: find
// passages, read a document or a section of it as passages, and judge the
// passages found against a goal.
var AgentFunctions = []string{NameQuery, NameGet, NameEvaluate}

// Functions offer toolset operations to a language model as functions it
// may call, an adapter over the registry like every face: a tool's
// parameters are exactly the operation's input schema (its Op, as the MCP
// server lists it), a call's arguments are checked with llm.CheckToolCall
// (the check Op.Call makes) and decoded into the operation's input struct,
// and the operation runs as it does for every other face. What a call returns
// is passages (for the agent to number and cite) and text for the model.
type Functions struct {
	t     *Toolset
	tools []llm.Tool
}

// Functions returns the named operations as model functions (none named:
// AgentFunctions).
func (t *Toolset) Functions(names ...string) (*Functions, error) {
	tools, err := FunctionTools(names...)
	if err != nil {
		return nil, err
	}
	return &Functions{t: t, tools: tools}, nil
}

// FunctionTools are the named operations (none named: AgentFunctions) as a
// model is offered them: each its Def's name, description and input
// schema. Functions offers these; a test's stand-in offers them too.
func FunctionTools(names ...string) ([]llm.Tool, error) {
	if len(names) == 0 {
		names = AgentFunctions
	}
	var out []llm.Tool
	for _, n := range names {
		if !slices.Contains(AgentFunctions, n) {
			return nil, fmt.Errorf("tools: %s is not offered to models (they may call %s)", n, strings.Join(AgentFunctions, ", "))
		}
		d, ok := Ops(DefOptions{}).Find(n)
		if !ok {
			return nil, fmt.Errorf("tools: no operation %q", n)
		}
		raw, err := json.Marshal(d.Input)
		if err != nil {
			return nil, fmt.Errorf("tools: encode the schema of %s: %w", n, err)
		}
		out = append(out, llm.Tool{Name: d.Name, Description: d.Description, Parameters: raw})
	}
	return out, nil
}

// Tools are the functions as the model is offered them.
func (f *Functions) Tools() []llm.Tool { return slices.Clone(f.tools) }

// Has reports whether name is one of the functions.
func (f *Functions) Has(name string) bool {
	return slices.ContainsFunc(f.tools, func(t llm.Tool) bool { return t.Name == name })
}

// List returns the functions one by one (llm.Function), for an agent
// that keeps them in one list with other tools (an MCP server's).
func (f *Functions) List() []llm.Function {
	out := make([]llm.Function, len(f.tools))
	for i, t := range f.tools {
		out[i] = function{f: f, t: t}
	}
	return out
}

// function is one of the knowledge base's operations as an llm.Function.
type function struct {
	f *Functions
	t llm.Tool
}

func (fn function) Tool() llm.Tool { return fn.t }

func (fn function) Call(ctx context.Context, args json.RawMessage, found []doc.Hit) (llm.Outcome, error) {
	return fn.f.Call(ctx, llm.ToolCall{Name: fn.t.Name, Arguments: args}, found)
}

// Passages reads chunks by ID as the index holds them now, leaving out
// those it no longer holds (cite.Loader: what an agent's resumed run
// reads its passages back with).
func (f *Functions) Passages(ctx context.Context, ids []int64) ([]doc.Hit, error) {
	return f.t.store.Hits(ctx, ids)
}

// Outcome is what a function call returned (llm.Outcome: the same for
// the knowledge base's functions and an MCP server's tools).
type Outcome = llm.Outcome

// PassageRunes is how much of a passage's text a model reads in an
// observation.
const PassageRunes = 1200

// Observation renders an outcome for the model, its hits numbered ns[i]
// (the numbers the model cites them by). A search or a read that found
// nothing says so; any other tool's outcome reads as its text.
func Observation(o Outcome, ns []int) string {
	var b strings.Builder
	if o.Text != "" {
		b.WriteString(o.Text)
	}
	if len(o.Hits) > 0 && b.Len() > 0 {
		b.WriteString("\n\n")
	}
	if len(o.Hits) == 0 && (o.Tool == NameQuery || o.Tool == NameGet) {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString("no results")
	}
	for i, h := range o.Hits {
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "[%d] %s", ns[i], h.Source.URI)
		if hp := h.Chunk.HeadingPath(); hp != "" {
			fmt.Fprintf(&b, " — %s", hp)
		}
		text, _ := budget.Truncate(strings.TrimSpace(h.Chunk.Text), PassageRunes)
		fmt.Fprintf(&b, " (lines %d-%d)\n%s", h.Chunk.StartLine, h.Chunk.EndLine, text)
	}
	if o.NextCursor != "" {
		fmt.Fprintf(&b, "\n\nMore: call %s again with the same arguments and cursor %q.", o.Tool, o.NextCursor)
	}
	return b.String()
}

// ErrBadCall marks a call refused before it ran: an unknown function, or
// arguments that do not fit its schema (errors.Is).
var ErrBadCall = errors.New("the call does not fit the functions offered")

// badCall is a refused call: its text is the check's, for the model.
type badCall struct{ err error }

func (e badCall) Error() string   { return e.err.Error() }
func (e badCall) Unwrap() []error { return []error{e.err, ErrBadCall} }

// Call checks a model's call against the functions, runs it and returns
// what it found. found are the passages the agent's run has found so far:
// sagasu_evaluate given neither results nor chunkIds judges them. The
// error's text is written for the model to read as the observation; a call
// refused before it ran is also ErrBadCall.
func (f *Functions) Call(ctx context.Context, call llm.ToolCall, found []doc.Hit) (Outcome, error) {
	out := Outcome{Tool: call.Name}
	if _, err := llm.CheckToolCall(f.tools, call); err != nil {
		return out, badCall{err}
	}
	var err error
	switch call.Name {
	case NameQuery:
		var in QueryInput
		if in, err = llm.ParseArgs[QueryInput](call); err != nil {
			return out, badCall{err}
		}
		out, err = f.query(ctx, in)
	case NameGet:
		var in GetInput
		if in, err = llm.ParseArgs[GetInput](call); err != nil {
			return out, badCall{err}
		}
		out, err = f.get(ctx, in)
	case NameEvaluate:
		var in EvaluateInput
		if in, err = llm.ParseArgs[EvaluateInput](call); err != nil {
			return out, badCall{err}
		}
		out, err = f.evaluate(ctx, in, found)
	}
	out.Tool = call.Name
	return out, err
}

// Empty reports whether the index holds no sources: an agent that found
// nothing says so differently then.
func (f *Functions) Empty(ctx context.Context) (bool, error) {
	st, err := f.t.stats(ctx)
	return st.Sources == 0, err
}

// query runs sagasu_query: one page of the ranking, paged by cursor.
func (f *Functions) query(ctx context.Context, in QueryInput) (Outcome, error) {
	args := in.PageArgs()
	res, err := Ranked(f.t.cursors, NameQuery, in.Cursor, args, func(offset int) (QueryResult, error) {
		in.Offset = offset
		return f.t.Query(ctx, in)
	}, func(r QueryResult) Ranking { return r.Ranking })
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{NextCursor: f.t.cursors.Next(res.Ranking, NameQuery, args, len(res.Hits), f.t.cursors.Now())}
	var b strings.Builder
	for _, h := range res.Hits {
		out.Hits = append(out.Hits, h.Hit)
		if o := h.Original; o != nil {
			text, cut := budget.Truncate(o.Content, 4*PassageRunes)
			fmt.Fprintf(&b, "%s of %s %s (lines %d-%d):\n%s\n", h.Scope, o.Source.URI, o.Section, o.StartLine, o.EndLine, text)
			if cut {
				fmt.Fprintf(&b, "[shortened: call %s with source %q for all of it]\n", NameGet, o.Source.URI)
			}
		}
	}
	out.Text = strings.TrimSpace(b.String())
	return out, nil
}

// getPassages is how many passages one sagasu_get call hands a model.
const getPassages = 8

// get runs sagasu_get for a model: the source (or section) is resolved as
// sagasu_get resolves it, and its chunks come back as passages, a page of
// at most getPassages (and of at most maxTokens tokens when given).
func (f *Functions) get(ctx context.Context, in GetInput) (Outcome, error) {
	g, err := f.t.Get(ctx, GetInput{Source: in.Source, Section: in.Section})
	if err != nil {
		return Outcome{}, err
	}
	args := HashOf(NameGet, in.Source, in.Section)
	offset := 0
	if in.Cursor != "" {
		st, err := f.t.cursors.Open(in.Cursor, NameGet, args)
		if err != nil {
			return Outcome{}, err
		}
		if st.Seen != g.Version {
			return Outcome{}, ErrCursorStale
		}
		offset = st.Offset
	}
	chunks, err := f.t.store.Chunks(ctx, g.Source.ID)
	if err != nil {
		return Outcome{}, fmt.Errorf("read the passages of %s: %w", g.Source.URI, err)
	}
	var span []doc.Chunk
	for _, c := range chunks {
		if c.EndLine >= g.StartLine && c.StartLine <= g.EndLine {
			span = append(span, c)
		}
	}
	if offset > len(span) {
		return Outcome{}, ErrCursorStale
	}
	out := Outcome{}
	tokens := 0
	end := offset
	for end < len(span) && end-offset < getPassages && (in.MaxTokens == 0 || end == offset || tokens+span[end].Tokens <= in.MaxTokens) {
		tokens += span[end].Tokens
		out.Hits = append(out.Hits, doc.Hit{Chunk: span[end], Source: g.Source})
		end++
	}
	where := g.Source.URI
	if g.Section != "" {
		where += " § " + g.Section
	}
	out.Text = fmt.Sprintf("%s (lines %d-%d): passages %d-%d of %d", where, g.StartLine, g.EndLine, offset+1, end, len(span))
	if end < len(span) {
		out.NextCursor = f.t.cursors.Issue(CursorState{Tool: NameGet, Args: args, Offset: end, Seen: g.Version}, f.t.cursors.Now())
	}
	return out, nil
}

// evaluate runs sagasu_evaluate: the results and chunks given, or else the
// passages found, judged against the goal.
func (f *Functions) evaluate(ctx context.Context, in EvaluateInput, found []doc.Hit) (Outcome, error) {
	if len(in.Results) == 0 && len(in.ChunkIDs) == 0 {
		in.Hits = found
	}
	ev, err := f.t.Evaluate(ctx, in)
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Text: DescribeEvaluation(ev)}, nil
}

// DescribeEvaluation is an evaluation as a model reads it.
func DescribeEvaluation(e loop.Evaluation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "confidence %.2f, coverage %.2f of the goal's aspects\n", e.Confidence, e.Coverage)
	if len(e.FoundAspects) > 0 {
		fmt.Fprintf(&b, "found: %s\n", strings.Join(e.FoundAspects, "; "))
	}
	if len(e.MissingAspects) > 0 {
		fmt.Fprintf(&b, "missing: %s\n", strings.Join(e.MissingAspects, "; "))
	}
	fmt.Fprintf(&b, "next: %s (%s)", e.Recommendation.Action, e.Recommendation.Reason)
	return b.String()
}

// Analyzer is the index's own analyzer: an agent splits questions and
// passages into words as the index does.
func (f *Functions) Analyzer() *analyze.Analyzer { return f.t.engine.Analyzer() }

// DefaultMode is the retrieval mode sagasu_query searches in when no mode
// is given (hybrid when the index has an embedder pinned).
func (f *Functions) DefaultMode() search.Mode { return f.t.engine.DefaultMode() }

// ComparesMeaning reports whether the index can compare texts with its
// chunks by meaning (it has an embedder and stored vectors).
func (f *Functions) ComparesMeaning() bool { return f.t.engine.ComparesMeaning() }

// Relatedness is how close text is by meaning to each of the chunks ids
// (search.Engine.Relatedness).
func (f *Functions) Relatedness(ctx context.Context, text string, ids []int64) (map[int64]float64, error) {
	return f.t.engine.Relatedness(ctx, text, ids)
}

// DocFreq gives how many chunks of the index hold each term (analysed as
// the index analyses text) and how many chunks there are: how rare a word
// of a question is in the whole knowledge base.
func (f *Functions) DocFreq(ctx context.Context, terms []string) (map[string]int, int, error) {
	return f.t.engine.DocFreq(ctx, terms)
}

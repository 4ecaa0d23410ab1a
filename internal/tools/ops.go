package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sagasu-dev/sagasu/internal/budget"
)

// The toolset's operations: each runs the toolset, fits its output to the
// budget of the face's Env, and says how it reads as text.

// Snippet lengths of detailed mode, in runes: the least a snippet is cut to
// before results are dropped, and the least a whole chunk is cut to in full.
const (
	minSnippetRunes = 160
	minFullRunes    = 400
)

// DefaultGetTokens is how many tokens sagasu_get returns when not told: a
// section of a page, not a whole book; nextCursor reaches the rest.
const DefaultGetTokens = 4000

// Registry returns the toolset's operations, bound to t (nil: listed, not
// callable), in the order faces list them.
func (t *Toolset) Registry(opt DefOptions) Registry {
	defs := map[string]Def{}
	for _, d := range Defs(opt) {
		defs[d.Name] = d
	}
	return Registry{
		bind[SearchInput, SearchOutput](t, defs[NameSearch], GroupSearch, false, (*Toolset).searchOp),
		bind[QueryInput, QueryOutput](t, defs[NameQuery], GroupSearch, false, (*Toolset).queryOp),
		bind[GetInput, GetOutput](t, defs[NameGet], GroupSearch, false, (*Toolset).getOp),
		bind[ListInput, ListOutput](t, defs[NameList], GroupSearch, false, (*Toolset).listOp),
		bind[EvaluateInput, EvaluateOutput](t, defs[NameEvaluate], GroupLoop, false, (*Toolset).evaluateOp),
		bind[RefineInput, RefineOutput](t, defs[NameRefine], GroupLoop, false, (*Toolset).refineOp),
		bind[StageInput, StageOutput](t, defs[NameExecuteStage], GroupLoop, false, (*Toolset).stageOp),
		bind[LoopInput, LoopOutput](t, defs[NameLoop], GroupLoop, false, (*Toolset).loopOp),
		bind[ReadCacheInput, ReadCacheOutput](t, defs[NameReadCache], GroupLoop, false, (*Toolset).readCacheOp),
		bind[IndexInput, IndexOutput](t, defs[NameIndex], GroupIndex, true, (*Toolset).indexOp),
		bind[DeleteInput, DeleteOutput](t, defs[NameDelete], GroupIndex, true, (*Toolset).deleteOp),
	}
}

// Ops lists the toolset's operations without a toolset to run them (for
// faces that only describe them).
func Ops(opt DefOptions) Registry { return (*Toolset)(nil).Registry(opt) }

// bind makes the operation of def run by method run of t; its output schema
// is derived from Out, listed when typed.
func bind[In, Out any](t *Toolset, def Def, group string, typed bool, run func(*Toolset, context.Context, *Env, In) (Reply, error)) Op {
	if def.Name == "" {
		panic("tools: an operation without a definition") // a programming error, found by any test
	}
	var r func(context.Context, *Env, In) (Reply, error)
	if t != nil {
		r = func(ctx context.Context, env *Env, in In) (Reply, error) { return run(t, ctx, env, in) }
	}
	op := Bind(def, group, outputSchema[Out](), r)
	op.Typed = typed
	return op
}

// outputSchema derives the schema of an operation's output (checked by the
// tests against what the operation returns).
func outputSchema[Out any]() *jsonschema.Schema { return OutputOf[Out]() }

func (t *Toolset) cursorsOf(env *Env) *Cursors {
	if env.Cursors != nil {
		return env.Cursors
	}
	return t.cursors
}

func (t *Toolset) searchOp(ctx context.Context, env *Env, in SearchInput) (Reply, error) {
	if strings.TrimSpace(in.Goal) == "" {
		in.Goal = in.Query
	}
	st, err := in.Settings()
	if err != nil {
		return Reply{}, err
	}
	in.SessionID = env.session(in.SessionID, in.Goal)
	cur := t.cursorsOf(env)
	args := HashOf(NameSearch, in.Goal, in.Query, st.Context, st.K, st.Mode)
	res, err := Ranked(cur, NameSearch, in.Cursor, args, func(offset int) (SearchResult, error) {
		in.Offset = offset
		return t.Search(ctx, in)
	}, func(r SearchResult) Ranking { return r.Ranking })
	if err != nil {
		return Reply{}, err
	}
	limit := env.limits().Mode(st.Detail)
	full := budget.Shape{Items: len(res.Hits)}
	minText := 0
	switch st.Detail {
	case ModeDetailed:
		full.Text, minText = SnippetRunes, minSnippetRunes
	case ModeFull:
		full.Text, minText = budget.TextBound(TextLengths(res.Hits), limit), minFullRunes
	}
	at := cur.Now()
	return Fit(env, limit, full, minText, func(sh budget.Shape, est int) View[SearchOutput] {
		out := res.Output(sh.Items, sh.Text, cur.Next(res.Ranking, NameSearch, args, sh.Items, at))
		out.Next = env.offered(out.Next)
		if out.Debug != nil {
			out.Debug.Tokenizer, out.Debug.Margin = env.counter().Encoding(), env.counter().Margin()
		}
		out.EstimatedTokens = est
		return View[SearchOutput]{Out: out, Text: SearchText(out), Links: ResultLinks(out.Results)}
	})
}

// SearchText is how a sagasu_search answer reads to a model.
func SearchText(o SearchOutput) string { return SearchTextWith(o, NextText) }

// SearchTextWith is how a sagasu_search answer reads, its next step said by
// next (a face for people names its own commands rather than tools).
func SearchTextWith(o SearchOutput, next func(Action) string) string {
	var b strings.Builder
	c := o.Summary.CoverageStatus
	if o.Goal != o.Query {
		fmt.Fprintf(&b, "Goal: %s\n", o.Goal)
	}
	fmt.Fprintf(&b, "Query: %s — %s (%s)\n", o.Query, Count(len(o.Results)+o.OmittedResults, "result"), o.Detail)
	fmt.Fprintf(&b, "coverage %s (%.2f), confidence %.2f", c.Status, c.Coverage, c.Confidence)
	if len(c.FoundAspects) > 0 {
		fmt.Fprintf(&b, "; found: %s", strings.Join(c.FoundAspects, "; "))
	}
	if len(c.MissingAspects) > 0 {
		fmt.Fprintf(&b, "; missing: %s", strings.Join(c.MissingAspects, "; "))
	}
	b.WriteByte('\n')
	if len(o.Summary.TopTopics) > 0 {
		fmt.Fprintf(&b, "topics: %s\n", strings.Join(o.Summary.TopTopics, "; "))
	}
	b.WriteString(next(o.Next))
	for _, n := range o.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	WriteResults(&b, o.Results, NoLimit)
	Footer(&b, o.OmittedResults, o.Truncated, o.NextCursor)
	return b.String()
}

// NextText is the one next step as a line: what to do and why, and the
// call that does it.
func NextText(a Action) string {
	if a.Action == "" {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "next: %s", a.Action)
	if a.Reason != "" {
		fmt.Fprintf(&b, " — %s", a.Reason)
	}
	if a.Tool != "" {
		args, _ := json.Marshal(a.Arguments)
		if len(a.Arguments) == 0 {
			args = []byte("{}")
		}
		fmt.Fprintf(&b, "\n  call %s %s", a.Tool, args)
	}
	b.WriteByte('\n')
	return b.String()
}

// Count says how many of a thing, in words: "1 result", "2 results".
func Count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

func (t *Toolset) queryOp(ctx context.Context, env *Env, in QueryInput) (Reply, error) {
	cur := t.cursorsOf(env)
	args := in.PageArgs()
	res, err := Ranked(cur, NameQuery, in.Cursor, args, func(offset int) (QueryResult, error) {
		in.Offset = offset
		return t.Query(ctx, in)
	}, func(r QueryResult) Ranking { return r.Ranking })
	if err != nil {
		return Reply{}, err
	}
	limit := env.limits().Cap
	full := budget.Shape{Items: len(res.Hits), Text: budget.TextBound(TextLengths(res.Hits), limit)}
	at := cur.Now()
	return Fit(env, limit, full, 300, func(sh budget.Shape, est int) View[QueryOutput] {
		out := res.Output(sh.Items, sh.Text, cur.Next(res.Ranking, NameQuery, args, sh.Items, at))
		out.EstimatedTokens = est
		return View[QueryOutput]{Out: out, Text: QueryText(out), Links: ResultLinks(out.Results)}
	})
}

// QueryText is how a sagasu_query answer reads.
func QueryText(o QueryOutput) string {
	var b strings.Builder
	if len(o.Results) == 0 && o.OmittedResults == 0 {
		fmt.Fprintf(&b, "No results for %q (%s).\n", o.Query, o.Mode)
	} else {
		fmt.Fprintf(&b, "Results %d-%d for %q (%s)\n", o.Offset+1, o.Offset+len(o.Results), o.Query, o.Mode)
	}
	WriteResults(&b, o.Results, NoLimit)
	Footer(&b, o.OmittedResults, o.Truncated, o.NextCursor)
	return b.String()
}

// WriteResults renders results as Markdown, each text cut to at most text
// runes: the one rendering of a hit, for models and people alike.
func WriteResults(b *strings.Builder, rs []Result, text int) {
	for i, r := range rs {
		if i == 0 || r.Text != "" || r.Original != nil {
			b.WriteByte('\n') // a blank line between results with text
		}
		fmt.Fprintf(b, "%d. %s:%d-%d", r.Rank, r.Source.URI, r.Lines[0], r.Lines[1])
		if r.Heading != "" {
			fmt.Fprintf(b, " — %s", r.Heading)
		}
		fmt.Fprintf(b, " (relevance %.2f, chunk %d)\n", r.Relevance, r.ChunkID)
		if r.Text != "" {
			// A snippet a face asked for ends in "…"; a text the budget
			// cut says where the rest is.
			body, _ := budget.Truncate(strings.TrimRight(r.Text, "\n"), text)
			b.WriteString(body)
			b.WriteByte('\n')
			if r.Truncated {
				fmt.Fprintf(b, "[shortened: read %s for the whole chunk]\n", ChunkURI(r.ChunkID))
			}
		}
		if o := r.Original; o != nil {
			fmt.Fprintf(b, "\n%s %s, lines %d-%d:\n%s\n", o.Scope, o.Heading, o.Lines[0], o.Lines[1], o.Content)
			if o.Truncated {
				fmt.Fprintf(b, "[shortened: read %s for all of it]\n", SourceURI(r.Source.ID))
			}
		}
	}
}

// ResultLinks link every result's chunk.
func ResultLinks(rs []Result) []Link {
	links := make([]Link, 0, len(rs))
	for _, r := range rs {
		name := r.Source.URI
		if r.Heading != "" {
			name += " — " + r.Heading
		}
		links = append(links, Link{URI: ChunkURI(r.ChunkID), Name: name, MIME: "text/plain"})
	}
	return links
}

// Footer says what was left out and how to get it.
func Footer(b *strings.Builder, omitted int, truncated bool, cursor string) {
	if omitted > 0 {
		fmt.Fprintf(b, "\n%s of this page did not fit the budget.", Count(omitted, "more result"))
	}
	if truncated {
		b.WriteString("\nSome texts were shortened to fit; their resources hold them whole.")
	}
	if cursor != "" {
		fmt.Fprintf(b, "\nNext page: call again with the same arguments and cursor %q.\n", cursor)
	}
}

func (t *Toolset) getOp(ctx context.Context, env *Env, in GetInput) (Reply, error) {
	limit := min(DefaultGetTokens, env.limits().Cap)
	if in.MaxTokens != 0 {
		limit = min(in.MaxTokens, env.limits().Cap)
	}
	cur := t.cursorsOf(env)
	args := HashOf(NameGet, in.Source, in.Section)
	version := ""
	if in.Cursor != "" {
		st, err := cur.Open(in.Cursor, NameGet, args)
		if err != nil {
			return Reply{}, err
		}
		in.Offset, version = st.Offset, st.Seen
	}
	g, err := t.Get(ctx, in)
	if in.Cursor != "" && (errors.Is(err, ErrPastEnd) || err == nil && g.Version != version) {
		return Reply{}, ErrCursorStale
	}
	if err != nil {
		return Reply{}, err
	}
	full := budget.Shape{Items: 1, Text: budget.TextBound([]int{Runes(g.Rest())}, limit)}
	at := cur.Now()
	return Fit(env, limit, full, 1, func(sh budget.Shape, est int) View[GetOutput] {
		body := ""
		if sh.Items > 0 {
			body = g.Page(sh.Text)
		}
		cursor := ""
		if len(body) < len(g.Rest()) {
			cursor = cur.Issue(CursorState{Tool: NameGet, Args: args, Offset: g.Offset + len(body), Seen: g.Version}, at)
		}
		out := g.Output(body, cursor)
		out.EstimatedTokens = est
		var b strings.Builder
		fmt.Fprintf(&b, "%s", g.Source.URI)
		if g.Section != "" {
			fmt.Fprintf(&b, " § %s", g.Section)
		}
		fmt.Fprintf(&b, " (lines %d-%d, bytes %d-%d of %d)\n\n%s", out.Lines[0], out.Lines[1], g.Offset, g.Offset+len(body), len(g.Content), body)
		if !out.Complete {
			fmt.Fprintf(&b, "\n[continues: call %s again with the same source and section and cursor %q]\n", NameGet, out.NextCursor)
		}
		return View[GetOutput]{Out: out, Text: b.String(), Links: []Link{{URI: out.Resource, Name: g.Source.URI, MIME: MIME(g.Source.Format)}}}
	})
}

func (t *Toolset) listOp(ctx context.Context, env *Env, in ListInput) (Reply, error) {
	limit := in.Limit
	if limit == 0 {
		limit = 50
	}
	cur := t.cursorsOf(env)
	args := HashOf(NameList, in.Type, in.Glob, limit)
	in.Unbounded = false
	if in.Cursor != "" {
		st, err := cur.Open(in.Cursor, NameList, args)
		if err != nil {
			return Reply{}, err
		}
		in.Offset = st.Offset
	}
	res, err := t.List(ctx, in)
	if err != nil {
		return Reply{}, err
	}
	at := cur.Now()
	return Fit(env, env.limits().Cap, budget.Shape{Items: len(res.Sources)}, 0, func(sh budget.Shape, est int) View[ListOutput] {
		cursor := ""
		if res.More || sh.Items < len(res.Sources) {
			cursor = cur.Issue(CursorState{Tool: NameList, Args: args, Offset: res.Offset + sh.Items}, at)
		}
		out := res.Output(sh.Items, cursor)
		out.EstimatedTokens = est
		return View[ListOutput]{Out: out, Text: ListText(out)}
	})
}

// ListText is how a page of sources reads.
func ListText(out ListOutput) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %s in the index", Count(out.Index.Sources, "source"), Count(out.Index.Chunks, "chunk"))
	if out.Index.Sources == 0 {
		fmt.Fprintf(&b, ": index documents with %s", NameIndex)
	}
	b.WriteString("\n")
	for _, r := range out.Roots {
		b.WriteString(DescribeRoot(r) + "\n")
	}
	for _, src := range out.Sources {
		fmt.Fprintf(&b, "%s  %s  %s (%s)\n", src.ID, src.URI, src.Title, Count(src.Chunks, "chunk"))
	}
	if out.NextCursor != "" {
		fmt.Fprintf(&b, "More: call again with cursor %q\n", out.NextCursor)
	}
	return b.String()
}

func (t *Toolset) evaluateOp(ctx context.Context, env *Env, in EvaluateInput) (Reply, error) {
	in.SessionID = env.session(in.SessionID, in.Goal)
	ev, err := t.Evaluate(ctx, in)
	if err != nil {
		return Reply{}, err
	}
	return Fit(env, env.limits().Cap, budget.Shape{Items: len(ev.Aspects)}, 0, func(sh budget.Shape, est int) View[EvaluateOutput] {
		out := EvaluateOutputOf(ev, sh.Items)
		out.Next = env.offered(out.Next)
		out.SessionID = in.SessionID
		out.EstimatedTokens = est
		return View[EvaluateOutput]{Out: out, Text: EvaluateText(out)}
	})
}

// EvaluateText is how an evaluation reads.
func EvaluateText(out EvaluateOutput) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Evaluation of %q for goal %q (iteration %d)\nconfidence %.2f · coverage %.2f · relevance %.2f\n",
		out.Query, out.Goal, out.Iteration, out.Confidence, out.Coverage, out.Relevance)
	if len(out.FoundAspects) > 0 {
		fmt.Fprintf(&b, "found: %s\n", strings.Join(out.FoundAspects, "; "))
	}
	if len(out.MissingAspects) > 0 {
		fmt.Fprintf(&b, "missing: %s\n", strings.Join(out.MissingAspects, "; "))
	}
	for _, a := range out.Aspects {
		if a.Evidence != nil {
			fmt.Fprintf(&b, "- %s (%.2f): %s — %s\n", a.Name, a.Score, a.Evidence.URI, a.Evidence.Line)
		}
	}
	b.WriteString(NextText(out.Next))
	return b.String()
}

func (t *Toolset) refineOp(ctx context.Context, env *Env, in RefineInput) (Reply, error) {
	in.SessionID = env.session(in.SessionID, in.Goal)
	r, err := t.Refine(ctx, in)
	if err != nil {
		return Reply{}, err
	}
	return Fit(env, env.limits().Cap, budget.Shape{Items: len(r.Alternatives)}, 0, func(sh budget.Shape, est int) View[RefineOutput] {
		out := RefineOutputOf(in, r, sh.Items)
		out.Next = env.offered(out.Next)
		out.EstimatedTokens = est
		var b strings.Builder
		fmt.Fprintf(&b, "Refined query (%s): %s\nreasoning: %s\n", out.Strategy, out.RefinedQuery, out.Reasoning)
		for _, a := range out.Alternatives {
			fmt.Fprintf(&b, "- alternative: %s (%s)\n", a.Query, a.Purpose)
		}
		b.WriteString(NextText(out.Next))
		return View[RefineOutput]{Out: out, Text: b.String()}
	})
}

func (t *Toolset) stageOp(ctx context.Context, env *Env, in StageInput) (Reply, error) {
	res, err := t.PlanStage(ctx, in)
	if err != nil {
		return Reply{}, err
	}
	var lengths []int
	for _, r := range res.Hits {
		lengths = append(lengths, Runes(r.Chunk.Text))
	}
	limit := env.limits().Cap
	full := budget.Shape{Items: len(res.Hits), Text: budget.TextBound(lengths, limit)}
	shown := res.Plan
	return Fit(env, limit, full, minFullRunes, func(sh budget.Shape, est int) View[StageOutput] {
		out := res.Output(sh.Items, sh.Text)
		out.Next = env.offered(out.Next)
		out.EstimatedTokens = est
		var b strings.Builder
		fmt.Fprintf(&b, "Plan %s, stage %d (index %d): %s\nquery %q · score %.2f · successful %t\nfound: %s\nmissing: %s\n",
			out.PlanID, out.StageNumber, out.StageIndex, out.Description, out.Query, out.Evaluation.Score, out.Evaluation.IsSuccessful,
			strings.Join(out.Evaluation.FoundKeywords, ", "), strings.Join(out.Evaluation.MissingKeywords, ", "))
		b.WriteString(NextText(out.Next))
		if shown != nil {
			for i, st := range shown.Stages {
				fmt.Fprintf(&b, "plan stage %d (index %d): %s — query %q\n", st.StageNumber, i, st.Description, st.Query)
			}
		}
		WriteResults(&b, out.Results, NoLimit)
		Footer(&b, out.OmittedResults, out.Truncated, "")
		return View[StageOutput]{Out: out, Text: b.String(), Links: ResultLinks(out.Results)}
	})
}

func (t *Toolset) loopOp(ctx context.Context, env *Env, in LoopInput) (Reply, error) {
	in.SessionID = env.session(in.SessionID, in.Goal)
	in.OnEvent = env.Trace
	res, err := t.RunLoop(ctx, in)
	if err != nil {
		return Reply{}, err
	}
	limit := env.limits().Cap
	full := budget.Shape{Items: len(res.Hits), Text: budget.TextBound(res.TextLengths(), limit)}
	return Fit(env, limit, full, minFullRunes, func(sh budget.Shape, est int) View[LoopOutput] {
		out := res.Output(sh.Items, sh.Text)
		out.EstimatedTokens = est
		return View[LoopOutput]{Out: out, Text: LoopText(out, NoLimit), Links: ResultLinks(out.Results)}
	})
}

// LoopText is how a loop's answer reads, to a model and on the command
// line alike; results' texts are cut to at most text runes.
func LoopText(out LoopOutput, text int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "goal     %s\naspects  %s\n", out.Goal, strings.Join(out.Aspects, " · "))
	for i, it := range out.Iterations {
		fmt.Fprintf(&b, "%d. query %q: %d new, confidence %.2f, coverage %.2f → %s", i+1, it.Query, it.NewResults, it.Confidence, it.Coverage, it.Action)
		if it.RefinedQuery != "" {
			fmt.Fprintf(&b, " (%s → %q)", it.Strategy, it.RefinedQuery)
		}
		b.WriteByte('\n')
	}
	if len(out.FoundAspects) > 0 {
		fmt.Fprintf(&b, "found    %s\n", strings.Join(out.FoundAspects, " · "))
	}
	if len(out.Missing) > 0 {
		fmt.Fprintf(&b, "missing  %s\n", strings.Join(out.Missing, " · "))
	}
	fmt.Fprintf(&b, "stopped  %s\n", out.Stopped)
	fmt.Fprintf(&b, "session  %s", out.SessionID)
	if out.SessionRecord != "" {
		fmt.Fprintf(&b, " (record %s)", out.SessionRecord)
	}
	// Merged from every search: each relevance is within the search that
	// found it, never a raw score of one query beside another's.
	fmt.Fprintf(&b, "\n\nresults, merged from %s (confidence %.2f)\n", Count(len(out.Iterations), "search"), out.Confidence)
	WriteResults(&b, out.Results, text)
	Footer(&b, out.OmittedResults, out.Truncated, "")
	return b.String()
}

func (t *Toolset) readCacheOp(ctx context.Context, env *Env, in ReadCacheInput) (Reply, error) {
	c, err := t.ReadCache(ctx, in)
	if err != nil {
		return Reply{}, err
	}
	lim := env.limits().Cap
	return Fit(env, lim, budget.Shape{Items: len(c.Records), Text: budget.TextBound(c.TextLengths(), lim)}, 200, func(sh budget.Shape, est int) View[ReadCacheOutput] {
		out := c.Output(sh.Items, sh.Text)
		out.EstimatedTokens = est
		var b strings.Builder
		fmt.Fprintf(&b, "Agent cache %s: %s\n", c.Dir, Count(len(c.Records), "record"))
		for i, cr := range out.Records {
			score := ""
			if c.Records[i].Score != nil {
				score = fmt.Sprintf(" score %.2f", *c.Records[i].Score)
			}
			fmt.Fprintf(&b, "- %s %s%s: %s | %s | %s\n", cr.Timestamp, cr.ID, score, cr.Goal, cr.Query, cr.Summary)
			if cr.Data != nil {
				raw, _ := json.Marshal(cr.Data)
				fmt.Fprintf(&b, "  data: %s\n", raw)
			}
		}
		if out.SummaryMarkdown != "" {
			b.WriteString("\n" + out.SummaryMarkdown + "\n")
		}
		if out.OmittedRecords > 0 {
			fmt.Fprintf(&b, "%s did not fit: ask with a smaller limit, or one by id.\n", Count(out.OmittedRecords, "more record"))
		}
		return View[ReadCacheOutput]{Out: out, Text: b.String()}
	})
}

func (t *Toolset) indexOp(ctx context.Context, env *Env, in IndexInput) (Reply, error) {
	res, err := t.Index(ctx, in, env.Progress)
	if err != nil {
		return Reply{}, err
	}
	return Fit(env, env.limits().Cap, budget.Shape{Items: len(res.Skipped)}, 0, func(sh budget.Shape, est int) View[IndexOutput] {
		out := res.Output(sh.Items)
		out.EstimatedTokens = est
		var b strings.Builder
		fmt.Fprintf(&b, "Indexed %s: %d added, %d updated, %d unchanged; %s written, %.1f MB read in %.0f ms.\n",
			Count(res.Added+res.Updated+res.Unchanged, "source"), res.Added, res.Updated, res.Unchanged, Count(res.Chunks, "chunk"), float64(res.Bytes)/1e6, out.TookMs)
		fmt.Fprintf(&b, "The index holds %s, %s.\n", Count(res.Index.Sources, "source"), Count(res.Index.Chunks, "chunk"))
		for _, sk := range out.Skipped {
			fmt.Fprintf(&b, "skipped %s (%s) %s\n", sk.Path, sk.Reason, sk.Error)
		}
		if out.OmittedSkipped > 0 {
			fmt.Fprintf(&b, "… and %s.\n", Count(out.OmittedSkipped, "more skipped file"))
		}
		return View[IndexOutput]{Out: out, Text: b.String()}
	})
}

func (t *Toolset) deleteOp(ctx context.Context, env *Env, in DeleteInput) (Reply, error) {
	in.InsideRoots = true
	res, err := t.Delete(ctx, in)
	if err != nil {
		return Reply{}, err
	}
	return Fit(env, env.limits().Cap, budget.Shape{Items: len(res.Sources)}, 0, func(sh budget.Shape, est int) View[DeleteOutput] {
		out := res.Page(sh.Items)
		out.EstimatedTokens = est
		var b strings.Builder
		if out.DryRun {
			fmt.Fprintf(&b, "Dry run: %s would be deleted; nothing was.\n", Count(len(res.Sources), "source"))
		} else {
			fmt.Fprintf(&b, "Deleted %s.\n", Count(out.Deleted, "source"))
		}
		for _, src := range out.Sources {
			fmt.Fprintf(&b, "%s  %s  %s\n", src.ID, src.URI, src.Title)
		}
		if out.OmittedSources > 0 {
			fmt.Fprintf(&b, "… and %d more (left out to fit the budget).\n", out.OmittedSources)
		}
		fmt.Fprintf(&b, "The index holds %s, %s.\n", Count(out.Index.Sources, "source"), Count(out.Index.Chunks, "chunk"))
		return View[DeleteOutput]{Out: out, Text: b.String()}
	})
}

package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/loop"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// Detail levels of sagasu_search: "full" means whole chunks.
const (
	ModeSummary  = "summary"
	ModeDetailed = "detailed"
	ModeFull     = "full"
)

// MaxSearchK bounds sagasu_search's k.
const MaxSearchK = 10

// SnippetRunes is how long a detailed-mode snippet starts, in runes.
const SnippetRunes = 600

// SearchInput is sagasu_search's input: the goal-aware agent query.
type SearchInput struct {
	Query   string         `json:"query" jsonschema:"the words to search for"`
	Goal    string         `json:"goal,omitempty" jsonschema:"what the search should find out, e.g. how to configure the sidebar; the results are judged against it (default: the query)"`
	Context *SearchContext `json:"context,omitempty" jsonschema:"what the agent already did"`
	Options *SearchOptions `json:"options,omitempty" jsonschema:"k, detail, mode"`
	Cursor  string         `json:"cursor,omitempty" jsonschema:"nextCursor of the previous page; pass the same other arguments"`
	// SessionID names the agent-cache session the search is recorded in.
	SessionID string `json:"sessionId,omitempty" jsonschema:"agent-cache session to record this step in (default: one per connection and goal)"`

	// Offset is where the page starts in the ranking; a face sets it (the
	// MCP server from a cursor), agents do not.
	Offset int `json:"-"`
}

// SearchContext is what the agent already did.
type SearchContext struct {
	PreviousQueries []string `json:"previousQueries,omitempty" jsonschema:"queries already issued for this goal; suggestions avoid them"`
	ExcludeResults  []int64  `json:"excludeResults,omitempty" jsonschema:"chunk IDs already seen; not returned again"`
	FocusAreas      []string `json:"focusAreas,omitempty" jsonschema:"aspects the results must cover (default: derived from the goal)"`
}

// SearchOptions tune sagasu_search.
type SearchOptions struct {
	K            int    `json:"k,omitempty" jsonschema:"results per page, 1 to 10 (default 5)"`
	Detail       string `json:"detail,omitempty" jsonschema:"summary (default: results without text), detailed (with snippets) or full (whole chunks)"`
	Mode         string `json:"mode,omitempty" jsonschema:"retrieval: keyword, semantic or hybrid (default: the index's)"`
	IncludeDebug bool   `json:"includeDebug,omitempty" jsonschema:"add timings and retrieval details"`
}

// SearchOutput is sagasu_search's result: the page of results (with their
// text in detailed and full), how well it covers the goal, and the one next
// step.
type SearchOutput struct {
	Goal     string        `json:"goal"`
	Query    string        `json:"query"`
	Detail   string        `json:"detail" jsonschema:"summary, detailed or full"`
	Summary  SearchSummary `json:"summary"`
	Next     Action        `json:"next" jsonschema:"the recommended next step"`
	Results  []Result      `json:"results" jsonschema:"best first; without their text in summary"`
	Analysis *Analysis     `json:"analysis,omitempty"`
	Notes    []string      `json:"notes,omitempty"`
	Debug    *Debug        `json:"debug,omitempty"`
	Offset   int           `json:"offset" jsonschema:"how many results of the ranking come before this page"`
	// SessionID is the agent-cache session the step was recorded in.
	SessionID string `json:"sessionId,omitempty"`
	Paging
}

// SearchSummary condenses a page of results.
type SearchSummary struct {
	TotalResults   int      `json:"totalResults" jsonschema:"results on this page"`
	HasMore        bool     `json:"hasMore" jsonschema:"the ranking goes on after this page"`
	TopTopics      []string `json:"topTopics" jsonschema:"the headings the results are about, most frequent first"`
	CoverageStatus Coverage `json:"coverageStatus"`
}

// Coverage is how well the results cover the goal.
type Coverage struct {
	Status         string   `json:"status" jsonschema:"complete, partial or none"`
	Coverage       float64  `json:"coverage" jsonschema:"fraction of the goal's aspects found"`
	Confidence     float64  `json:"confidence" jsonschema:"0..1; at 0.7 or more the results can be used"`
	FoundAspects   []string `json:"foundAspects"`
	MissingAspects []string `json:"missingAspects"`
}

// Action is the one recommended next step: what to do, why, and the tool
// call that does it.
type Action struct {
	Action    string         `json:"action" jsonschema:"use_results, refine, broaden, narrow, pivot, index_more, stop, search, next_stage or read"`
	Reason    string         `json:"reason"`
	Tool      string         `json:"tool,omitempty" jsonschema:"the tool that takes the step"`
	Arguments map[string]any `json:"arguments,omitempty" jsonschema:"its arguments"`
}

// Analysis is the evaluation behind the summary.
type Analysis struct {
	Relevance      float64            `json:"relevance" jsonschema:"fraction of results that cover some aspect"`
	Aspects        []loop.AspectScore `json:"aspects"`
	Stagnating     bool               `json:"stagnating,omitempty"`
	UnindexedWords []string           `json:"unindexedWords,omitempty" jsonschema:"words of the goal no document in the index contains"`
	Alternatives   []loop.Alternative `json:"alternatives,omitempty" jsonschema:"other queries worth trying"`
}

// Debug is what includeDebug adds.
type Debug struct {
	RetrievalMode string  `json:"retrievalMode"`
	SearchMs      float64 `json:"searchMs"`
	AnalysisMs    float64 `json:"analysisMs"`
	Requested     int     `json:"requested" jsonschema:"results asked of the engine (offset + k + 1)"`
	Excluded      int     `json:"excluded"`
	Tokenizer     string  `json:"tokenizer"`
	Margin        float64 `json:"margin"`
}

// SearchSettings are a search's options with their defaults filled in.
type SearchSettings struct {
	Detail  string
	K       int
	Mode    string
	Debug   bool
	Context SearchContext
}

// Settings fills the defaults of in's options (the schema has checked them).
func (in SearchInput) Settings() (SearchSettings, error) {
	var st SearchSettings
	var opt SearchOptions
	if in.Options != nil {
		opt = *in.Options
	}
	if in.Context != nil {
		st.Context = *in.Context
	}
	st.Detail, st.K, st.Mode, st.Debug = opt.Detail, opt.K, opt.Mode, opt.IncludeDebug
	if st.Detail == "" {
		st.Detail = ModeSummary
	}
	if st.K == 0 {
		st.K = 5
	}
	return st, nil
}

// SearchResult is a sagasu_search answer before it is shaped: one page of
// the ranking, judged against the goal, with the next step decided.
type SearchResult struct {
	Input    SearchInput
	Settings SearchSettings
	Ranking
	analysed
	Notes        []string
	SearchTook   time.Duration
	AnalysisTook time.Duration
}

// Search ranks one page of results, evaluates it against the goal (the
// query when no goal is given), decides the next step and, when it is to
// search again, proposes the query.
func (t *Toolset) Search(ctx context.Context, in SearchInput) (SearchResult, error) {
	if strings.TrimSpace(in.Goal) == "" {
		in.Goal = in.Query
	}
	st, err := in.Settings()
	if err != nil {
		return SearchResult{}, err
	}
	retrieval, notes := t.retrieval(st.Mode)
	start := time.Now()
	p, err := t.rank(ctx, search.Request{
		Query: in.Query, Mode: retrieval, Filter: store.Filter{ExcludeChunks: st.Context.ExcludeResults}}, in.Offset, st.K)
	if err != nil {
		return SearchResult{}, err
	}
	res := SearchResult{Input: in, Settings: st, Ranking: p, Notes: notes, SearchTook: time.Since(start)}
	start = time.Now()
	if res.analysed, err = t.analyse(ctx, in, st.Context, p.Hits); err != nil {
		return SearchResult{}, err
	}
	res.AnalysisTook = time.Since(start)
	ev := res.eval
	t.recordStep(in.SessionID, in.Goal, SessionStep{Tool: NameSearch, Query: in.Query, Results: len(p.Hits), Confidence: &ev.Confidence,
		FoundAspects: ev.FoundAspects, MissingAspects: ev.MissingAspects, Action: res.next.Action})
	return res, nil
}

// Evaluation is the judgement of the page against the goal.
func (r SearchResult) Evaluation() loop.Evaluation { return r.eval }

// Refinement is the query proposed for the next search; nil when the next
// step is not to search again.
func (r SearchResult) Refinement() *loop.Refinement { return r.refinement }

// Output renders the answer with the first items results, their texts cut
// to at most text runes (detailed and full; summary has none); cursor
// continues the ranking ("" at its end). Debug's tokenizer fields are the
// face's to fill.
func (r SearchResult) Output(items, text int, cursor string) SearchOutput {
	in, detail := r.Input, r.Settings.Detail
	out := SearchOutput{
		Goal: echo(in.Goal), Query: echo(in.Query), Detail: detail, Summary: r.summary,
		Next: r.next, Offset: r.Offset, Notes: r.Notes, SessionID: in.SessionID, Results: []Result{},
	}
	if detail == ModeSummary {
		text = 0
	}
	for _, h := range r.Hits[:items] {
		res, cut := h.Result(text)
		res.Truncated = false // summary leaves every text out; detailed cuts them to snippets
		out.Results = append(out.Results, res)
		out.Truncated = out.Truncated || cut && detail != ModeSummary
	}
	if detail != ModeSummary {
		an := r.analysis
		out.Analysis = &an
	}
	out.OmittedResults = len(r.Hits) - items
	out.NextCursor = cursor
	out.Summary.HasMore = cursor != ""
	if r.Settings.Debug {
		out.Debug = &Debug{RetrievalMode: string(r.Mode), SearchMs: ms(r.SearchTook), AnalysisMs: ms(r.AnalysisTook),
			Requested: r.Offset + r.Settings.K + 1, Excluded: len(r.Settings.Context.ExcludeResults)}
	}
	return out
}

// analysed is the detail-independent part of a sagasu_search answer.
type analysed struct {
	eval       loop.Evaluation
	summary    SearchSummary
	next       Action
	analysis   Analysis
	refinement *loop.Refinement
}

// analyse evaluates a page against the goal and decides the one next step.
func (t *Toolset) analyse(ctx context.Context, in SearchInput, sc SearchContext, hits []Hit) (analysed, error) {
	var a analysed
	found := make([]doc.Hit, 0, len(hits))
	for _, h := range hits {
		found = append(found, h.Hit)
	}
	ev, err := t.analyst.Evaluate(ctx, loop.EvaluateInput{
		Goal: in.Goal, Query: in.Query, Results: found, Aspects: sc.FocusAreas, Iteration: len(sc.PreviousQueries) + 1,
	})
	if err != nil {
		return a, fmt.Errorf("evaluate the results against the goal: %w", err)
	}
	a.eval = ev
	a.summary = SearchSummary{TotalResults: len(hits), TopTopics: topics(hits), CoverageStatus: coverageOf(ev)}
	a.analysis = Analysis{Relevance: ev.Relevance, Aspects: ev.Aspects, Stagnating: ev.Stagnating, UnindexedWords: ev.UnindexedWords}

	act := ev.Recommendation.Action
	a.next = Action{Action: act, Reason: ev.Recommendation.Reason}
	switch act {
	case loop.ActionUseResults:
		if len(hits) > 0 {
			a.next.Tool = NameGet
			a.next.Arguments = map[string]any{"source": hits[0].Source.ID}
			if hp := hits[0].Chunk.HeadingPath(); hp != "" {
				a.next.Arguments["section"] = hp
			}
		}
	case loop.ActionIndexMore:
		a.next.Tool = NameIndex
	case loop.ActionStop:
	default: // refine, broaden, narrow, pivot: propose the query
		r, err := t.analyst.Refine(ctx, loop.RefineInput{
			CurrentQuery: in.Query, Goal: in.Goal, MissingAspects: ev.MissingAspects, FoundAspects: ev.FoundAspects,
			Strategy: strategyFor(act), Results: found, Avoid: sc.PreviousQueries,
		})
		if err != nil {
			// The evaluation stands without a proposal: refining is the step.
			t.log.Debug("no refinement for sagasu_search", "err", err)
			a.next.Tool = NameRefine
			a.next.Arguments = map[string]any{"goal": echo(in.Goal), "currentQuery": echo(in.Query), "missingAspects": ev.MissingAspects}
			break
		}
		a.refinement = &r
		a.analysis.Alternatives = r.Alternatives
		a.next.Tool = NameSearch
		a.next.Arguments = map[string]any{"goal": echo(in.Goal), "query": r.RefinedQuery,
			"context": nextContext(append(slices.Clone(sc.PreviousQueries), in.Query), ev.MissingAspects)}
	}
	return a, nil
}

// nextContext is the context of the search a step proposes: the queries
// issued, and the aspects still missing as its focus, so that it is judged
// on what is left to find rather than sent back for what was found.
func nextContext(previous, missing []string) map[string]any {
	c := map[string]any{"previousQueries": previous}
	if len(missing) > 0 {
		c["focusAreas"] = missing
	}
	return c
}

// coverageOf condenses an evaluation.
func coverageOf(ev loop.Evaluation) Coverage {
	status := "partial"
	switch {
	case len(ev.MissingAspects) == 0 && len(ev.FoundAspects) > 0:
		status = "complete"
	case len(ev.FoundAspects) == 0:
		status = "none"
	}
	return Coverage{Status: status, Coverage: ev.Coverage, Confidence: ev.Confidence,
		FoundAspects: ev.FoundAspects, MissingAspects: ev.MissingAspects}
}

// topics are the headings (else titles) the hits are about, most frequent
// first.
func topics(hs []Hit) []string {
	count := map[string]int{}
	var order []string
	for _, h := range hs {
		t := h.Source.Title
		if len(h.Chunk.Heading) > 0 {
			t = h.Chunk.Heading[len(h.Chunk.Heading)-1]
		}
		t = echo(strings.TrimSpace(t))
		if t == "" {
			continue
		}
		if count[t] == 0 {
			order = append(order, t)
		}
		count[t]++
	}
	slices.SortStableFunc(order, func(a, b string) int { return count[b] - count[a] })
	if len(order) > 5 {
		order = order[:5]
	}
	if order == nil {
		order = []string{}
	}
	return order
}

package tools

import (
	"context"
	"fmt"
	"math"
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
	Goal    string         `json:"goal" jsonschema:"what the search should find out, e.g. understand how to configure the sidebar"`
	Query   string         `json:"query" jsonschema:"the words to search for"`
	Context *SearchContext `json:"context,omitempty" jsonschema:"what the agent already did"`
	Options *SearchOptions `json:"options,omitempty"`
	Cursor  string         `json:"cursor,omitempty" jsonschema:"nextCursor of the previous page; pass the same goal, query, context and k"`
	// SessionID names the agent-cache session the search is recorded in.
	SessionID string `json:"sessionId,omitempty" jsonschema:"the agent-cache session this step belongs to (default over MCP: one per MCP session and goal)"`

	// Offset is where the page starts in the ranking; a face sets it (the
	// MCP server from a cursor), agents do not.
	Offset int `json:"-"`
}

// SearchContext is what the agent already did.
type SearchContext struct {
	PreviousQueries []string `json:"previousQueries,omitempty" jsonschema:"queries already issued for this goal; suggestions avoid them"`
	ExcludeResults  []int64  `json:"excludeResults,omitempty" jsonschema:"chunk IDs already seen; they are not returned again"`
	FocusAreas      []string `json:"focusAreas,omitempty" jsonschema:"aspects the results must cover; derived from the goal when empty"`
}

// SearchOptions tune sagasu_search.
type SearchOptions struct {
	K            int    `json:"k,omitempty" jsonschema:"results per page, 1 to 10 (default 5)"`
	Mode         string `json:"mode,omitempty" jsonschema:"summary (default, at most 5,000 tokens), detailed (results with snippets, at most 15,000) or full (whole chunks, up to the cap)"`
	Hybrid       *bool  `json:"hybrid,omitempty" jsonschema:"true: keyword and vector search fused (needs an index with embeddings); false: keyword only; default: the index's default"`
	IncludeDebug bool   `json:"includeDebug,omitempty" jsonschema:"add timings and retrieval details"`
}

// SearchOutput is sagasu_search's result. summary mode fills summary,
// primaryAction, recommendation and topResults; detailed adds results with
// snippets, analysis and hints; full has whole chunks and every hint.
type SearchOutput struct {
	Goal           string         `json:"goal"`
	Query          string         `json:"query"`
	Mode           string         `json:"mode" jsonschema:"summary, detailed or full"`
	Summary        SearchSummary  `json:"summary"`
	PrimaryAction  Action         `json:"primaryAction" jsonschema:"the most useful next step"`
	Recommendation Recommendation `json:"recommendation"`
	TopResults     []ResultRef    `json:"topResults,omitempty" jsonschema:"summary mode: the results without their text"`
	Results        []Result       `json:"results,omitempty" jsonschema:"detailed and full modes: the results with their text"`
	Analysis       *Analysis      `json:"analysis,omitempty"`
	Hints          []Action       `json:"hints,omitempty" jsonschema:"other useful next steps"`
	Notes          []string       `json:"notes,omitempty"`
	Debug          *Debug         `json:"debug,omitempty"`
	Offset         int            `json:"offset" jsonschema:"how many results of the ranking come before this page"`
	SessionID      string         `json:"sessionId,omitempty" jsonschema:"the agent-cache session this step was recorded in"`
	Paging
}

// SearchSummary condenses a page of results.
type SearchSummary struct {
	TotalResults   int      `json:"totalResults" jsonschema:"results on this page"`
	HasMore        bool     `json:"hasMore" jsonschema:"the ranking goes on after this page"`
	AvgScore       float64  `json:"avgScore"`
	MaxScore       float64  `json:"maxScore"`
	MinScore       float64  `json:"minScore"`
	TopTopics      []string `json:"topTopics" jsonschema:"the headings and titles the results are about, most frequent first"`
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

// Action is a next step, with the tool and arguments to take it.
type Action struct {
	Action        string         `json:"action" jsonschema:"use_results, refine, broaden, narrow, pivot, index_more, stop, next_page, get_more_details or read_source"`
	Reason        string         `json:"reason"`
	SuggestedTool string         `json:"suggestedTool,omitempty"`
	Parameters    map[string]any `json:"parameters,omitempty" jsonschema:"arguments for suggestedTool"`
}

// Recommendation says whether more detail would help.
type Recommendation struct {
	NeedsMoreDetail bool   `json:"needsMoreDetail"`
	SuggestedMode   string `json:"suggestedMode,omitempty"`
}

// ResultRef is a result without its text.
type ResultRef struct {
	Rank     int     `json:"rank"`
	ChunkID  int64   `json:"chunkId"`
	Score    float64 `json:"score"`
	URI      string  `json:"uri"`
	Heading  string  `json:"heading"`
	Resource string  `json:"resource"`
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
	Mode    string
	K       int
	Hybrid  *bool
	Debug   bool
	Context SearchContext
}

// Settings checks in's options and fills their defaults.
func (in SearchInput) Settings() (SearchSettings, error) {
	var st SearchSettings
	var opt SearchOptions
	if in.Options != nil {
		opt = *in.Options
	}
	if in.Context != nil {
		st.Context = *in.Context
	}
	st.Mode, st.K, st.Hybrid, st.Debug = opt.Mode, opt.K, opt.Hybrid, opt.IncludeDebug
	if st.Mode == "" {
		st.Mode = ModeSummary
	}
	if st.Mode != ModeSummary && st.Mode != ModeDetailed && st.Mode != ModeFull {
		return st, badArg("options.mode", st.Mode, "summary, detailed or full")
	}
	if st.K == 0 {
		st.K = 5
	}
	if st.K < 1 || st.K > MaxSearchK {
		return st, badArg("options.k", st.K, fmt.Sprintf("a whole number from 1 to %d (page with nextCursor for more)", MaxSearchK))
	}
	if strings.TrimSpace(in.Goal) == "" {
		return st, loop.ErrEmptyGoal
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

// Search ranks one page of results, evaluates it against the goal, decides
// the primary next action and, when it is to refine, proposes the query.
func (t *Toolset) Search(ctx context.Context, in SearchInput) (SearchResult, error) {
	st, err := in.Settings()
	if err != nil {
		return SearchResult{}, err
	}
	retrieval, notes := t.retrieval(st.Hybrid)
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
		FoundAspects: ev.FoundAspects, MissingAspects: ev.MissingAspects, Action: res.primary.Action})
	return res, nil
}

// Evaluation is the judgement of the page against the goal.
func (r SearchResult) Evaluation() loop.Evaluation { return r.eval }

// Refinement is the query proposed for the next search; nil when the next
// step is not to refine.
func (r SearchResult) Refinement() *loop.Refinement { return r.refinement }

// Output renders the answer with the first items results, their texts cut
// to at most text runes (detailed and full modes); cursor continues the
// ranking ("" at its end). Debug's tokenizer fields are the face's to fill.
func (r SearchResult) Output(items, text int, cursor string) SearchOutput {
	in, mode := r.Input, r.Settings.Mode
	out := SearchOutput{
		Goal: echo(in.Goal), Query: echo(in.Query), Mode: mode, Summary: r.summary,
		PrimaryAction: r.primary, Offset: r.Offset, Notes: r.Notes, SessionID: in.SessionID,
	}
	kept := r.Hits[:items]
	if mode == ModeSummary {
		for _, h := range kept {
			out.TopResults = append(out.TopResults, ResultRef{Rank: h.Rank, ChunkID: h.Chunk.ID, Score: round(h.Score),
				URI: h.Source.URI, Heading: h.Chunk.HeadingPath(), Resource: ChunkURI(h.Chunk.ID)})
		}
		out.Recommendation = Recommendation{NeedsMoreDetail: len(r.Hits) > 0 && r.eval.Confidence < loop.DefaultMinConfidence}
		if len(r.Hits) > 0 {
			out.Recommendation.SuggestedMode = ModeDetailed
		}
	} else {
		out.Results = []Result{}
		for _, h := range kept {
			res, cut := h.Result(text)
			out.Results = append(out.Results, res)
			out.Truncated = out.Truncated || cut
		}
		an := r.analysis
		out.Analysis = &an
		if mode == ModeDetailed {
			out.Recommendation = Recommendation{NeedsMoreDetail: out.Truncated, SuggestedMode: ifThen(out.Truncated, ModeFull)}
		}
	}
	out.OmittedResults = len(r.Hits) - items
	out.NextCursor = cursor
	out.Summary.HasMore = cursor != ""
	if mode != ModeSummary {
		out.Hints = r.hints(in, mode, cursor)
	}
	if r.Settings.Debug {
		out.Debug = &Debug{RetrievalMode: string(r.Mode), SearchMs: ms(r.SearchTook), AnalysisMs: ms(r.AnalysisTook),
			Requested: r.Offset + r.Settings.K + 1, Excluded: len(r.Settings.Context.ExcludeResults)}
	}
	return out
}

// analysed is the mode-independent part of a sagasu_search answer.
type analysed struct {
	eval       loop.Evaluation
	summary    SearchSummary
	primary    Action
	analysis   Analysis
	refinement *loop.Refinement
}

// analyse evaluates a page against the goal and decides the next step.
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
	sum := SearchSummary{TotalResults: len(hits), TopTopics: topics(hits)}
	if len(hits) > 0 {
		sum.MinScore = math.Inf(1)
		total := 0.0
		for _, h := range hits {
			total += h.Score
			sum.MaxScore = max(sum.MaxScore, h.Score)
			sum.MinScore = min(sum.MinScore, h.Score)
		}
		sum.AvgScore = round(total / float64(len(hits)))
		sum.MaxScore, sum.MinScore = round(sum.MaxScore), round(sum.MinScore)
	}
	status := "partial"
	switch {
	case len(ev.MissingAspects) == 0 && len(ev.FoundAspects) > 0:
		status = "complete"
	case len(ev.FoundAspects) == 0:
		status = "none"
	}
	sum.CoverageStatus = Coverage{Status: status, Coverage: ev.Coverage, Confidence: ev.Confidence,
		FoundAspects: ev.FoundAspects, MissingAspects: ev.MissingAspects}
	a.summary = sum
	a.analysis = Analysis{Relevance: ev.Relevance, Aspects: ev.Aspects, Stagnating: ev.Stagnating, UnindexedWords: ev.UnindexedWords}

	act := ev.Recommendation.Action
	a.primary = Action{Action: act, Reason: ev.Recommendation.Reason}
	switch act {
	case loop.ActionUseResults:
		if len(hits) > 0 {
			a.primary.SuggestedTool = NameGet
			a.primary.Parameters = map[string]any{"source": hits[0].Source.ID}
			if hp := hits[0].Chunk.HeadingPath(); hp != "" {
				a.primary.Parameters["section"] = hp
			}
		}
	case loop.ActionIndexMore:
		a.primary.SuggestedTool = NameIndex
	case loop.ActionStop:
	default: // refine, broaden, narrow, pivot: propose the query
		strategy := ""
		switch act {
		case loop.ActionBroaden:
			strategy = loop.StrategyBroaden
		case loop.ActionNarrow:
			strategy = loop.StrategyNarrow
		case loop.ActionPivot:
			strategy = loop.StrategyPivot
		}
		r, err := t.analyst.Refine(ctx, loop.RefineInput{
			CurrentQuery: in.Query, Goal: in.Goal, MissingAspects: ev.MissingAspects, FoundAspects: ev.FoundAspects,
			Strategy: strategy, Results: found, Avoid: sc.PreviousQueries,
		})
		if err != nil {
			// The evaluation stands without a proposal.
			t.log.Debug("no refinement for sagasu_search", "err", err)
			break
		}
		a.refinement = &r
		a.analysis.Alternatives = r.Alternatives
		a.primary.SuggestedTool = NameSearch
		prev := append(slices.Clone(sc.PreviousQueries), in.Query)
		a.primary.Parameters = map[string]any{"goal": echo(in.Goal), "query": r.RefinedQuery,
			"context": map[string]any{"previousQueries": prev}}
		a.primary.Reason += "; try: " + r.RefinedQuery
	}
	return a, nil
}

// hints lists next steps besides the primary one.
func (a analysed) hints(in SearchInput, mode, cursor string) []Action {
	var hs []Action
	if cursor != "" {
		hs = append(hs, Action{Action: "next_page", Reason: "more results follow", SuggestedTool: NameSearch,
			Parameters: map[string]any{"cursor": cursor}})
	}
	if a.eval.ShouldContinue && a.refinement == nil && len(a.eval.MissingAspects) > 0 {
		hs = append(hs, Action{Action: "refine", Reason: "aspects are missing: ask for a better query", SuggestedTool: NameRefine,
			Parameters: map[string]any{"currentQuery": echo(in.Query), "goal": echo(in.Goal), "missingAspects": a.eval.MissingAspects, "foundAspects": a.eval.FoundAspects}})
	}
	if mode == ModeFull && a.refinement != nil {
		for _, alt := range a.refinement.Alternatives {
			hs = append(hs, Action{Action: "alternative_query", Reason: alt.Purpose, SuggestedTool: NameSearch,
				Parameters: map[string]any{"goal": echo(in.Goal), "query": alt.Query}})
		}
	}
	if mode == ModeDetailed && len(hs) > 3 {
		hs = hs[:3]
	}
	return hs
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

func ifThen(cond bool, s string) string {
	if cond {
		return s
	}
	return ""
}

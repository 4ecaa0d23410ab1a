package mcpserver

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/loop"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// Detail levels of sagasu_search.
const (
	ModeSummary  = "summary"
	ModeDetailed = "detailed"
	ModeFull     = "full"
)

// MaxSearchK bounds sagasu_search's k.
const MaxSearchK = 10

// Snippet lengths of detailed mode, in runes: what a result starts with,
// and the least it is cut to before results are dropped.
const (
	snippetRunes    = 600
	minSnippetRunes = 160
	minFullRunes    = 400
)

// SearchInput is sagasu_search's input: the goal-aware agent query.
type SearchInput struct {
	Goal    string         `json:"goal" jsonschema:"what the search should find out, e.g. understand how to configure the sidebar"`
	Query   string         `json:"query" jsonschema:"the words to search for"`
	Context *SearchContext `json:"context,omitempty" jsonschema:"what the agent already did"`
	Options *SearchOptions `json:"options,omitempty"`
	Cursor  string         `json:"cursor,omitempty" jsonschema:"nextCursor of the previous page; pass the same goal, query, context and k"`
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

func (s *Server) addSearchTool() {
	addTool(s, &mcp.Tool{
		Name: ToolSearch,
		Description: "Goal-aware search for agents: searches, judges the results against your goal and says what to do next. " +
			"Modes: summary (default, <5K tokens: counts, scores, topics, coverage of the goal, the primary next action), " +
			"detailed (<15K: top results with snippets and the analysis), full (whole chunks, up to the 25K cap). " +
			"Start with summary; use detailed when you need the text. k is at most 10; page with nextCursor.",
		Annotations: ro("Search toward a goal"),
	}, func(in *jsonschema.Schema) {
		notEmpty(prop(in, "goal"))
		notEmpty(prop(in, "query"))
		between(prop(in, "options", "k"), 1, MaxSearchK)
		oneOf(prop(in, "options", "mode"), ModeSummary, ModeDetailed, ModeFull)
	}, s.agentQuery)
}

func (s *Server) agentQuery(ctx context.Context, req *mcp.CallToolRequest, in SearchInput) (*mcp.CallToolResult, SearchOutput, error) {
	var opt SearchOptions
	if in.Options != nil {
		opt = *in.Options
	}
	var sc SearchContext
	if in.Context != nil {
		sc = *in.Context
	}
	mode := opt.Mode
	if mode == "" {
		mode = ModeSummary
	}
	if mode != ModeSummary && mode != ModeDetailed && mode != ModeFull {
		return nil, SearchOutput{}, fmt.Errorf("mode %q: use summary, detailed or full", mode)
	}
	k := opt.K
	if k == 0 {
		k = 5
	}
	if k < 1 || k > MaxSearchK {
		return nil, SearchOutput{}, fmt.Errorf("k = %d is out of range: use 1 to %d (page with nextCursor for more)", k, MaxSearchK)
	}
	if strings.TrimSpace(in.Goal) == "" {
		return nil, SearchOutput{}, loop.ErrEmptyGoal
	}
	retrieval, notes := s.retrieval(opt.Hybrid)
	args := hashOf(ToolSearch, in.Goal, in.Query, sc, k, opt.Hybrid)
	start := time.Now()
	p, err := s.rank(ctx, ToolSearch, in.Cursor, args, search.Request{
		Query: in.Query, Mode: retrieval, Filter: store.Filter{ExcludeChunks: sc.ExcludeResults}}, k)
	if err != nil {
		return nil, SearchOutput{}, err
	}
	searchTook := time.Since(start)

	start = time.Now()
	a, err := s.analyse(ctx, in, sc, p)
	if err != nil {
		return nil, SearchOutput{}, err
	}
	analysisTook := time.Since(start)

	limit := s.limits.Mode(mode)
	full := budget.Shape{Items: len(p.hits)}
	minText := 0
	switch mode {
	case ModeDetailed:
		full.Text, minText = snippetRunes, minSnippetRunes
	case ModeFull:
		full.Text, minText = budget.TextBound(textLengths(p.hits), limit), minFullRunes
	}
	return fit(s, req, limit, full, minText, func(sh budget.Shape, est int) view[SearchOutput] {
		out := SearchOutput{
			Goal: echo(in.Goal), Query: echo(in.Query), Mode: mode, Summary: a.summary,
			PrimaryAction: a.primary, Offset: p.offset, Notes: notes,
		}
		kept := p.hits[:sh.Items]
		if mode == ModeSummary {
			for _, h := range kept {
				out.TopResults = append(out.TopResults, ResultRef{Rank: h.rank, ChunkID: h.Chunk.ID, Score: round(h.Score),
					URI: h.Source.URI, Heading: h.Chunk.HeadingPath(), Resource: chunkURI(h.Chunk.ID)})
			}
			out.Recommendation = Recommendation{NeedsMoreDetail: len(p.hits) > 0 && a.eval.Confidence < loop.DefaultMinConfidence}
			if len(p.hits) > 0 {
				out.Recommendation.SuggestedMode = ModeDetailed
			}
		} else {
			out.Results = []Result{}
			for _, h := range kept {
				r, cut := h.result(sh.Text)
				out.Results = append(out.Results, r)
				out.Truncated = out.Truncated || cut
			}
			an := a.analysis
			out.Analysis = &an
			if mode == ModeDetailed {
				out.Recommendation = Recommendation{NeedsMoreDetail: out.Truncated, SuggestedMode: ifThen(out.Truncated, ModeFull)}
			}
		}
		out.OmittedResults = len(p.hits) - sh.Items
		out.NextCursor = s.next(p, ToolSearch, args, sh.Items)
		out.Summary.HasMore = out.NextCursor != ""
		if mode != ModeSummary {
			out.Hints = a.hints(in, mode, out.NextCursor)
		}
		if opt.IncludeDebug {
			out.Debug = &Debug{RetrievalMode: string(p.resp.Mode), SearchMs: ms(searchTook), AnalysisMs: ms(analysisTook),
				Requested: p.offset + k + 1, Excluded: len(sc.ExcludeResults), Tokenizer: s.counter.Encoding(), Margin: s.counter.Margin()}
		}
		out.EstimatedTokens, out.Budget = est, limit
		return view[SearchOutput]{Out: out, Text: out.text(), Links: resultLinks(out.Results)}
	})
}

// retrieval maps the agent's hybrid switch to a retrieval mode, with a
// note when hybrid search was asked of an index without embeddings.
func (s *Server) retrieval(hybrid *bool) (search.Mode, []string) {
	switch {
	case hybrid == nil:
		return "", nil
	case !*hybrid:
		return search.ModeKeyword, nil
	case s.engine.Embedder() != nil:
		return search.ModeHybrid, nil
	}
	return search.ModeKeyword, []string{"hybrid search needs an index with embeddings and this one has none: keyword search was used"}
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
func (s *Server) analyse(ctx context.Context, in SearchInput, sc SearchContext, p page) (analysed, error) {
	var a analysed
	views := make([]search.ResultView, 0, len(p.hits))
	for _, h := range p.hits {
		views = append(views, search.View(h.Hit))
	}
	ev, err := s.analyst.Evaluate(ctx, loop.EvaluateInput{
		Goal: in.Goal, Query: in.Query, Results: views, Aspects: sc.FocusAreas, Iteration: len(sc.PreviousQueries) + 1,
	})
	if err != nil {
		return a, fmt.Errorf("evaluate the results against the goal: %w", err)
	}
	a.eval = ev
	sum := SearchSummary{TotalResults: len(p.hits), TopTopics: topics(p.hits)}
	if len(p.hits) > 0 {
		sum.MinScore = math.Inf(1)
		total := 0.0
		for _, h := range p.hits {
			total += h.Score
			sum.MaxScore = max(sum.MaxScore, h.Score)
			sum.MinScore = min(sum.MinScore, h.Score)
		}
		sum.AvgScore = round(total / float64(len(p.hits)))
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
		if len(p.hits) > 0 {
			a.primary.SuggestedTool = ToolGet
			a.primary.Parameters = map[string]any{"source": p.hits[0].Source.ID}
			if hp := p.hits[0].Chunk.HeadingPath(); hp != "" {
				a.primary.Parameters["section"] = hp
			}
		}
	case loop.ActionIndexMore:
		a.primary.SuggestedTool = ToolIndex
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
		r, err := s.analyst.Refine(ctx, loop.RefineInput{
			CurrentQuery: in.Query, Goal: in.Goal, MissingAspects: ev.MissingAspects, FoundAspects: ev.FoundAspects,
			Strategy: strategy, Results: views, Avoid: sc.PreviousQueries,
		})
		if err != nil {
			// The evaluation stands without a proposal.
			s.log.Debug("no refinement for sagasu_search", "err", err)
			break
		}
		a.refinement = &r
		a.analysis.Alternatives = r.Alternatives
		a.primary.SuggestedTool = ToolSearch
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
		hs = append(hs, Action{Action: "next_page", Reason: "more results follow", SuggestedTool: ToolSearch,
			Parameters: map[string]any{"cursor": cursor}})
	}
	if a.eval.ShouldContinue && a.refinement == nil && len(a.eval.MissingAspects) > 0 {
		hs = append(hs, Action{Action: "refine", Reason: "aspects are missing: ask for a better query", SuggestedTool: ToolRefine,
			Parameters: map[string]any{"currentQuery": echo(in.Query), "goal": echo(in.Goal), "missingAspects": a.eval.MissingAspects, "foundAspects": a.eval.FoundAspects}})
	}
	if mode == ModeFull && a.refinement != nil {
		for _, alt := range a.refinement.Alternatives {
			hs = append(hs, Action{Action: "alternative_query", Reason: alt.Purpose, SuggestedTool: ToolSearch,
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
func topics(hs []hit) []string {
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

// text renders a sagasu_search answer.
func (o SearchOutput) text() string {
	var b strings.Builder
	c := o.Summary.CoverageStatus
	fmt.Fprintf(&b, "Goal: %s\nQuery: %s (%s mode)\n", o.Goal, o.Query, o.Mode)
	fmt.Fprintf(&b, "%d result(s), scores %g-%g (avg %g); coverage %s: %.2f, confidence %.2f\n",
		o.Summary.TotalResults, o.Summary.MinScore, o.Summary.MaxScore, o.Summary.AvgScore, c.Status, c.Coverage, c.Confidence)
	if len(c.FoundAspects) > 0 {
		fmt.Fprintf(&b, "found: %s\n", strings.Join(c.FoundAspects, "; "))
	}
	if len(c.MissingAspects) > 0 {
		fmt.Fprintf(&b, "missing: %s\n", strings.Join(c.MissingAspects, "; "))
	}
	if len(o.Summary.TopTopics) > 0 {
		fmt.Fprintf(&b, "topics: %s\n", strings.Join(o.Summary.TopTopics, "; "))
	}
	fmt.Fprintf(&b, "next: %s — %s", o.PrimaryAction.Action, o.PrimaryAction.Reason)
	if o.PrimaryAction.SuggestedTool != "" {
		fmt.Fprintf(&b, " (%s)", o.PrimaryAction.SuggestedTool)
	}
	b.WriteByte('\n')
	for _, n := range o.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	for _, r := range o.TopResults {
		fmt.Fprintf(&b, "%d. %s — %s (score %g, %s)\n", r.Rank, r.URI, r.Heading, r.Score, r.Resource)
	}
	writeResults(&b, o.Results)
	for _, h := range o.Hints {
		fmt.Fprintf(&b, "hint: %s — %s\n", h.Action, h.Reason)
	}
	footer(&b, o.OmittedResults, o.Truncated, o.NextCursor)
	return b.String()
}

func ifThen(cond bool, s string) string {
	if cond {
		return s
	}
	return ""
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

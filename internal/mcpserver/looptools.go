package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/agentcache"
	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/loop"
	"github.com/sagasu-dev/sagasu/internal/search"
)

// EvaluateInput is sagasu_evaluate's input.
type EvaluateInput struct {
	Goal          string       `json:"goal" jsonschema:"what the search should find out"`
	Query         string       `json:"query,omitempty" jsonschema:"the query that produced the results"`
	Results       []EvalResult `json:"results,omitempty" jsonschema:"the results to judge; or give chunkIds"`
	ChunkIDs      []int64      `json:"chunkIds,omitempty" jsonschema:"chunk IDs of results from a previous search, read from the index"`
	Aspects       []string     `json:"aspects,omitempty" jsonschema:"the aspects the results must cover; derived from the goal when empty"`
	Iteration     int          `json:"iteration,omitempty" jsonschema:"1 for the first search of a goal"`
	PreviousScore *float64     `json:"previousScore,omitempty" jsonschema:"confidence of the previous iteration"`
	MinConfidence float64      `json:"minConfidence,omitempty" jsonschema:"confidence at which the results are enough (default 0.7)"`
}

// EvalResult is one result handed to sagasu_evaluate.
type EvalResult struct {
	Content  string         `json:"content" jsonschema:"the result's text"`
	Score    float64        `json:"score,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty" jsonschema:"chunkId, heading, uri, title, ... as the search returned them"`
}

// EvaluateOutput is the judgement, in the seed's field names.
type EvaluateOutput struct {
	Goal            string              `json:"goal"`
	Query           string              `json:"query,omitempty"`
	Iteration       int                 `json:"iteration"`
	Confidence      float64             `json:"confidence" jsonschema:"0..1; at minConfidence (0.7) the results can be used"`
	Coverage        float64             `json:"coverage" jsonschema:"fraction of the goal's aspects found"`
	Relevance       float64             `json:"relevance" jsonschema:"fraction of the results that cover some aspect"`
	FoundAspects    []string            `json:"foundAspects"`
	MissingAspects  []string            `json:"missingAspects"`
	Aspects         []loop.AspectScore  `json:"aspects"`
	ShouldContinue  bool                `json:"shouldContinue"`
	Stagnating      bool                `json:"stagnating"`
	Recommendations loop.Recommendation `json:"recommendations" jsonschema:"action (use_results, refine, broaden, narrow, pivot, index_more, stop) and why"`
	UnindexedWords  []string            `json:"unindexedWords,omitempty"`
	Results         int                 `json:"results" jsonschema:"results judged"`
	SkippedResults  int                 `json:"skippedResults,omitempty" jsonschema:"results without text"`
	NextStep        *Action             `json:"nextStep,omitempty"`
	OmittedAspects  int                 `json:"omittedAspects,omitempty"`
	Measured
}

// RefineInput is sagasu_refine_query's input.
type RefineInput struct {
	CurrentQuery    string   `json:"currentQuery"`
	Goal            string   `json:"goal"`
	MissingAspects  []string `json:"missingAspects,omitempty"`
	FoundAspects    []string `json:"foundAspects,omitempty"`
	Strategy        string   `json:"strategy,omitempty" jsonschema:"broaden, narrow, pivot or combine (default: combine when aspects are missing, else narrow)"`
	PreviousQueries []string `json:"previousQueries,omitempty" jsonschema:"queries already issued; the refined query is none of them"`
	ChunkIDs        []int64  `json:"chunkIds,omitempty" jsonschema:"results to mine for words; without them the server searches itself"`
}

// RefineOutput is a better query, in the seed's field names.
type RefineOutput struct {
	CurrentQuery string             `json:"currentQuery"`
	RefinedQuery string             `json:"refinedQuery"`
	Strategy     string             `json:"strategy"`
	Target       string             `json:"target,omitempty" jsonschema:"the aspect the refined query aims at"`
	Origin       string             `json:"origin" jsonschema:"where its words came from: aspect, heading, feedback or cache"`
	Reasoning    string             `json:"reasoning"`
	Alternatives []loop.Alternative `json:"alternatives"`
	NextStep     Action             `json:"nextStep"`
	Measured
}

// StageInput is sagasu_plan_execute_stage's input.
type StageInput struct {
	PlanID       string             `json:"planId,omitempty" jsonschema:"the plan's ID; alone, the plan is read from the agent cache"`
	StageIndex   int                `json:"stageIndex,omitempty" jsonschema:"0-based index of the stage to run (default 0)"`
	Plan         *PlanSpec          `json:"plan,omitempty" jsonschema:"the plan; omit it and give goal to have one made"`
	Goal         string             `json:"goal,omitempty" jsonschema:"without a plan: make a plan for this goal (one stage per aspect) and run the stage"`
	Aspects      []string           `json:"aspects,omitempty" jsonschema:"with goal: the aspects to plan a stage for each"`
	QueryOptions *StageQueryOptions `json:"queryOptions,omitempty"`
}

// PlanSpec is a plan as an agent passes it.
type PlanSpec struct {
	ID     string      `json:"id,omitempty"`
	Goal   string      `json:"goal"`
	Stages []StageSpec `json:"stages"`
}

// StageSpec is one stage of a plan.
type StageSpec struct {
	StageNumber     int           `json:"stageNumber" jsonschema:"1, 2, ... in order"`
	Description     string        `json:"description,omitempty"`
	Query           string        `json:"query"`
	ExpectedResults *ExpectedSpec `json:"expectedResults,omitempty"`
}

// ExpectedSpec is what a stage's results should contain.
type ExpectedSpec struct {
	Keywords      []string `json:"keywords,omitempty"`
	MinConfidence float64  `json:"minConfidence,omitempty" jsonschema:"share of keywords that must be found, 0..1 (default 0.7)"`
}

// StageQueryOptions tune a stage's search.
type StageQueryOptions struct {
	K      int   `json:"k,omitempty" jsonschema:"results, 1 to 20 (default 10)"`
	Hybrid *bool `json:"hybrid,omitempty"`
}

// StageOutput is the outcome of one stage, in the seed's field names.
type StageOutput struct {
	PlanID         string               `json:"planId"`
	StageIndex     int                  `json:"stageIndex"`
	StageNumber    int                  `json:"stageNumber"`
	Description    string               `json:"description"`
	Query          string               `json:"query"`
	Success        bool                 `json:"success"`
	Evaluation     loop.StageEvaluation `json:"evaluation"`
	ShouldContinue bool                 `json:"shouldContinue"`
	AgentGuidance  loop.Guidance        `json:"agentGuidance"`
	Results        []Result             `json:"results"`
	Plan           *loop.Plan           `json:"plan,omitempty" jsonschema:"the plan, when it was made or read from the cache by this call"`
	Notes          []string             `json:"notes,omitempty"`
	TookMs         float64              `json:"tookMs"`
	Paging
}

// ReadCacheInput is sagasu_read_cache's input.
type ReadCacheInput struct {
	Kind        string `json:"kind,omitempty" jsonschema:"evaluations, refinements, stages or sessions; all when empty"`
	ID          string `json:"id,omitempty" jsonschema:"one record, with its data"`
	Goal        string `json:"goal,omitempty" jsonschema:"only records whose goal contains this text"`
	Limit       int    `json:"limit,omitempty" jsonschema:"newest records to return, 1 to 100 (default 10)"`
	IncludeData bool   `json:"includeData,omitempty" jsonschema:"include each record's full data"`
	Summary     bool   `json:"summary,omitempty" jsonschema:"include agent-cache.md, the Markdown summary of the cache"`
}

// ReadCacheOutput lists agent cache records.
type ReadCacheOutput struct {
	Dir             string        `json:"dir"`
	Records         []CacheRecord `json:"records"`
	SummaryMarkdown string        `json:"summaryMarkdown,omitempty"`
	OmittedRecords  int           `json:"omittedRecords" jsonschema:"records left out to fit the budget; ask with a smaller limit or by id"`
	Truncated       bool          `json:"truncated" jsonschema:"the summary was shortened, or some data left out, to fit the budget"`
	Measured
}

// CacheRecord is one recorded step.
type CacheRecord struct {
	ID          string   `json:"id"`
	Kind        string   `json:"kind"`
	Timestamp   string   `json:"timestamp"`
	Goal        string   `json:"goal"`
	Query       string   `json:"query,omitempty"`
	Score       *float64 `json:"score,omitempty"`
	Summary     string   `json:"summary,omitempty"`
	Data        any      `json:"data,omitempty"`
	DataOmitted bool     `json:"dataOmitted,omitempty" jsonschema:"the data did not fit: read this record alone by id"`
}

func (s *Server) addLoopTools() {
	addTool(s, &mcp.Tool{
		Name:        ToolEvaluate,
		Description: "Judge search results against a goal: which aspects they cover (foundAspects, missingAspects), confidence and coverage, and whether to go on (shouldContinue, recommendations). Pass results (content, score, metadata) or the chunkIds of a search. Recorded in the agent cache.",
		Annotations: rw("Evaluate results", false),
	}, func(in *jsonschema.Schema) {
		notEmpty(prop(in, "goal"))
		between(prop(in, "iteration"), 0, 100)
		between(prop(in, "minConfidence"), 0, 1)
	}, s.evaluate)
	addTool(s, &mcp.Tool{
		Name:        ToolRefine,
		Description: "Propose a better query for a goal from what is missing: strategies broaden, narrow, pivot, combine. Returns refinedQuery, reasoning and alternatives, built from the index's own words and headings. Recorded in the agent cache.",
		Annotations: rw("Refine a query", false),
	}, func(in *jsonschema.Schema) {
		notEmpty(prop(in, "goal"))
		oneOf(prop(in, "strategy"), loop.Strategies()...)
	}, s.refine)
	addTool(s, &mcp.Tool{
		Name:        ToolExecuteStage,
		Description: "Run one stage of a search plan and judge its results against the stage's expected keywords. Pass planId, stageIndex and plan; or only goal to have a plan made (returned in plan) and its first stage run; or planId alone to reuse a plan from the agent cache. agentGuidance says what to do next.",
		Annotations: rw("Run a plan stage", false),
	}, func(in *jsonschema.Schema) {
		between(prop(in, "stageIndex"), 0, 100)
		between(prop(in, "queryOptions", "k"), 1, 20)
	}, s.executeStage)
	addTool(s, &mcp.Tool{
		Name:        ToolReadCache,
		Description: "Read the agent cache: recorded evaluations, refinements, plan stages and sessions (newest first), one record by id, or the Markdown summary agent-cache.md.",
		Annotations: ro("Read the agent cache"),
	}, func(in *jsonschema.Schema) {
		oneOf(prop(in, "kind"), "evaluations", "refinements", "stages", "sessions")
		between(prop(in, "limit"), 1, 100)
	}, s.readCache)
}

// chunkViews loads chunks by ID in the CLI's result shape.
func (s *Server) chunkViews(ctx context.Context, ids []int64) ([]search.ResultView, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	hits, err := s.store.Hits(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("read chunks: %w", err)
	}
	if len(hits) < len(ids) {
		return nil, fmt.Errorf("%d of the %d chunkIds are not in the index (it may have been re-indexed): search again", len(ids)-len(hits), len(ids))
	}
	return loop.Views(hits), nil
}

func (s *Server) evaluate(ctx context.Context, req *mcp.CallToolRequest, in EvaluateInput) (*mcp.CallToolResult, EvaluateOutput, error) {
	views, err := s.chunkViews(ctx, in.ChunkIDs)
	if err != nil {
		return nil, EvaluateOutput{}, err
	}
	for _, r := range in.Results {
		views = append(views, fromEvalResult(r))
	}
	ev, err := s.steps.Evaluate(ctx, loop.EvaluateInput{
		Goal: in.Goal, Query: in.Query, Results: views, Aspects: in.Aspects, Iteration: in.Iteration,
		PreviousScore: in.PreviousScore, MinConfidence: in.MinConfidence,
	})
	if err != nil {
		return nil, EvaluateOutput{}, err
	}
	limit := s.limits.Cap
	return fit(s, req, limit, budget.Shape{Items: len(ev.Aspects)}, 0, func(sh budget.Shape, est int) view[EvaluateOutput] {
		out := EvaluateOutput{
			Goal: echo(ev.Goal), Query: echo(ev.Query), Iteration: ev.Iteration, Confidence: ev.Confidence, Coverage: ev.Coverage,
			Relevance: ev.Relevance, FoundAspects: ev.FoundAspects, MissingAspects: ev.MissingAspects, Aspects: ev.Aspects[:sh.Items],
			ShouldContinue: ev.ShouldContinue, Stagnating: ev.Stagnating, Recommendations: ev.Recommendation,
			UnindexedWords: ev.UnindexedWords, Results: ev.Results, SkippedResults: ev.SkippedResults,
			OmittedAspects: len(ev.Aspects) - sh.Items, Measured: Measured{EstimatedTokens: est, Budget: limit},
		}
		if ev.ShouldContinue && len(ev.MissingAspects) > 0 {
			out.NextStep = &Action{Action: ev.Recommendation.Action, Reason: "ask for a query aimed at what is missing", SuggestedTool: ToolRefine,
				Parameters: map[string]any{"currentQuery": out.Query, "goal": out.Goal, "missingAspects": ev.MissingAspects,
					"foundAspects": ev.FoundAspects, "strategy": strategyFor(ev.Recommendation.Action)}}
		}
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
		fmt.Fprintf(&b, "shouldContinue: %t → %s: %s\n", out.ShouldContinue, out.Recommendations.Action, out.Recommendations.Reason)
		return view[EvaluateOutput]{Out: out, Text: b.String()}
	})
}

// fromEvalResult reads a result an agent passed in, in the seed's shape.
func fromEvalResult(r EvalResult) search.ResultView {
	v := search.ResultView{Text: r.Content, Score: r.Score}
	str := func(keys ...string) string {
		for _, k := range keys {
			if s, ok := r.Metadata[k].(string); ok && s != "" {
				return s
			}
		}
		return ""
	}
	if id, ok := r.Metadata["chunkId"].(float64); ok {
		v.ChunkID = int64(id)
	}
	v.Heading = str("heading", "section", "headingPath")
	v.Source.URI = str("uri", "path", "sourceUri", "source")
	v.Source.Title = str("title", "sourceTitle")
	return v
}

// strategyFor maps an evaluation's action to the refinement strategy that
// serves it ("" lets refine choose).
func strategyFor(action string) string {
	switch action {
	case loop.ActionBroaden:
		return loop.StrategyBroaden
	case loop.ActionNarrow:
		return loop.StrategyNarrow
	case loop.ActionPivot:
		return loop.StrategyPivot
	}
	return ""
}

func (s *Server) refine(ctx context.Context, req *mcp.CallToolRequest, in RefineInput) (*mcp.CallToolResult, RefineOutput, error) {
	views, err := s.chunkViews(ctx, in.ChunkIDs)
	if err != nil {
		return nil, RefineOutput{}, err
	}
	r, err := s.steps.Refine(ctx, loop.RefineInput{
		CurrentQuery: in.CurrentQuery, Goal: in.Goal, MissingAspects: in.MissingAspects, FoundAspects: in.FoundAspects,
		Strategy: in.Strategy, Results: views, Avoid: in.PreviousQueries,
	})
	if err != nil {
		return nil, RefineOutput{}, err
	}
	limit := s.limits.Cap
	return fit(s, req, limit, budget.Shape{Items: len(r.Alternatives)}, 0, func(sh budget.Shape, est int) view[RefineOutput] {
		out := RefineOutput{
			CurrentQuery: echo(r.CurrentQuery), RefinedQuery: r.RefinedQuery, Strategy: r.Strategy, Target: r.Target, Origin: r.Origin,
			Reasoning: r.Reasoning, Alternatives: r.Alternatives[:sh.Items], Measured: Measured{EstimatedTokens: est, Budget: limit},
			NextStep: Action{Action: "search", Reason: "run the refined query and evaluate its results", SuggestedTool: ToolSearch,
				Parameters: map[string]any{"goal": echo(in.Goal), "query": r.RefinedQuery,
					"context": map[string]any{"previousQueries": append(append([]string{}, in.PreviousQueries...), echo(in.CurrentQuery))}}},
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Refined query (%s): %s\nreasoning: %s\n", out.Strategy, out.RefinedQuery, out.Reasoning)
		for _, a := range out.Alternatives {
			fmt.Fprintf(&b, "- alternative: %s (%s)\n", a.Query, a.Purpose)
		}
		return view[RefineOutput]{Out: out, Text: b.String()}
	})
}

func (s *Server) executeStage(ctx context.Context, req *mcp.CallToolRequest, in StageInput) (*mcp.CallToolResult, StageOutput, error) {
	var plan loop.Plan
	var shown *loop.Plan
	var err error
	switch {
	case in.Plan != nil:
		plan = in.Plan.plan()
		if in.PlanID != "" && plan.ID != "" && in.PlanID != plan.ID {
			return nil, StageOutput{}, fmt.Errorf("planId %q does not match the plan's id %q: pass one or make them agree", in.PlanID, plan.ID)
		}
		if plan.ID == "" {
			plan.ID = in.PlanID
		}
		if plan.ID == "" {
			plan.ID = "plan-" + hashOf(plan)[:12]
		}
	case in.PlanID != "":
		if plan, err = s.findPlan(in.PlanID); err != nil {
			return nil, StageOutput{}, err
		}
		shown = &plan
	case strings.TrimSpace(in.Goal) != "":
		if plan, err = s.steps.Plan(ctx, in.Goal, loop.PlanOptions{Aspects: in.Aspects}); err != nil {
			return nil, StageOutput{}, err
		}
		shown = &plan
	default:
		return nil, StageOutput{}, errors.New("no plan: pass plan (with planId and stageIndex), planId alone for a plan in the agent cache, or goal to have a plan made")
	}
	var qo StageQueryOptions
	if in.QueryOptions != nil {
		qo = *in.QueryOptions
	}
	k := qo.K
	if k == 0 {
		k = search.DefaultK
	}
	if k < 1 || k > 20 {
		return nil, StageOutput{}, fmt.Errorf("queryOptions.k = %d is out of range: use 1 to 20", k)
	}
	mode, notes := s.retrieval(qo.Hybrid)
	res, err := s.steps.ExecuteStage(ctx, plan, in.StageIndex, loop.QueryOptions{K: k, Mode: mode})
	if err != nil {
		return nil, StageOutput{}, err
	}
	var lengths []int
	for _, r := range res.Results {
		lengths = append(lengths, runes(r.Text))
	}
	limit := s.limits.Cap
	full := budget.Shape{Items: len(res.Results), Text: budget.TextBound(lengths, limit)}
	return fit(s, req, limit, full, minFullRunes, func(sh budget.Shape, est int) view[StageOutput] {
		out := StageOutput{
			PlanID: res.PlanID, StageIndex: res.StageIndex, StageNumber: res.StageNumber, Description: res.Description, Query: res.Query,
			Success: res.Success, Evaluation: res.Evaluation, ShouldContinue: res.ShouldContinue, AgentGuidance: res.AgentGuidance,
			Results: []Result{}, Plan: shown, Notes: notes, TookMs: res.TookMs,
		}
		for i, v := range res.Results[:sh.Items] {
			r, cut := viewResult(v, i+1, sh.Text)
			out.Results = append(out.Results, r)
			out.Truncated = out.Truncated || cut
		}
		out.OmittedResults = len(res.Results) - sh.Items
		out.EstimatedTokens, out.Budget = est, limit
		var b strings.Builder
		fmt.Fprintf(&b, "Plan %s, stage %d (index %d): %s\nquery %q · score %.2f · successful %t\nfound: %s\nmissing: %s\nnext: %s (%s)\n",
			out.PlanID, out.StageNumber, out.StageIndex, out.Description, out.Query, out.Evaluation.Score, out.Evaluation.IsSuccessful,
			strings.Join(out.Evaluation.FoundKeywords, ", "), strings.Join(out.Evaluation.MissingKeywords, ", "),
			out.AgentGuidance.NextAction, strings.Join(out.AgentGuidance.SuggestedTools, ", "))
		if shown != nil {
			for i, st := range shown.Stages {
				fmt.Fprintf(&b, "plan stage %d (index %d): %s — query %q\n", st.StageNumber, i, st.Description, st.Query)
			}
		}
		writeResults(&b, out.Results)
		footer(&b, out.OmittedResults, out.Truncated, "")
		return view[StageOutput]{Out: out, Text: b.String(), Links: resultLinks(out.Results)}
	})
}

// plan converts an agent's plan, filling the defaults.
func (p PlanSpec) plan() loop.Plan {
	out := loop.Plan{ID: p.ID, Goal: p.Goal}
	for _, st := range p.Stages {
		s := loop.Stage{StageNumber: st.StageNumber, Description: st.Description, Query: st.Query,
			ExpectedResults: loop.Expected{Keywords: []string{}, MinConfidence: loop.DefaultMinConfidence}}
		if e := st.ExpectedResults; e != nil {
			if e.Keywords != nil {
				s.ExpectedResults.Keywords = e.Keywords
			}
			if e.MinConfidence != 0 {
				s.ExpectedResults.MinConfidence = e.MinConfidence
			}
		}
		out.Stages = append(out.Stages, s)
	}
	return out
}

// findPlan reads a plan from the stages recorded in the agent cache.
func (s *Server) findPlan(id string) (loop.Plan, error) {
	if s.opt.Cache == nil {
		return loop.Plan{}, fmt.Errorf("plan %q: this server keeps no agent cache, so pass the plan itself", id)
	}
	recs, err := s.opt.Cache.List(agentcache.ListOptions{Kind: agentcache.Stages, Limit: 500})
	if err != nil {
		return loop.Plan{}, err
	}
	for _, r := range recs {
		var rec struct {
			Plan loop.Plan `json:"plan"`
		}
		if json.Unmarshal(r.Data, &rec) == nil && rec.Plan.ID == id {
			return rec.Plan, nil
		}
	}
	return loop.Plan{}, fmt.Errorf("plan %q is not in the agent cache: pass the plan itself, or goal to make a new one", id)
}

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/agentcache"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/loop"
	"github.com/sagasu-dev/sagasu/internal/search"
)

// EvaluateInput is sagasu_evaluate's input.
type EvaluateInput struct {
	Goal          string       `json:"goal" jsonschema:"what the search should find out"`
	Query         string       `json:"query,omitempty" jsonschema:"the query that produced the results"`
	Results       []EvalResult `json:"results,omitempty" jsonschema:"the results to judge as a search returned them, or {content, score, metadata}"`
	ChunkIDs      []int64      `json:"chunkIds,omitempty" jsonschema:"or the chunk IDs of a search's results"`
	Aspects       []string     `json:"aspects,omitempty" jsonschema:"the aspects the results must cover; derived from the goal when empty"`
	Iteration     int          `json:"iteration,omitempty" jsonschema:"1 for the first search of a goal"`
	PreviousScore *float64     `json:"previousScore,omitempty" jsonschema:"confidence of the previous iteration"`
	MinConfidence float64      `json:"minConfidence,omitempty" jsonschema:"confidence at which the results are enough (default 0.7)"`
	SessionID     string       `json:"sessionId,omitempty" jsonschema:"agent-cache session to record this step in (default: one per connection and goal)"`

	// Hits are more results to judge, handed over by an agent (the
	// passages its run found), not by a client.
	Hits []doc.Hit `json:"-"`
}

// EvalResult is one result handed to sagasu_evaluate: a result of
// sagasu_query or sagasu_search as it came back (detailed and full modes'
// results, summary mode's topResults), or the seed's {content, score,
// metadata}.
type EvalResult struct {
	Content  string         `json:"content,omitempty" jsonschema:"the result's text (or text)"`
	Score    float64        `json:"score,omitempty" jsonschema:"its score"`
	Metadata map[string]any `json:"metadata,omitempty" jsonschema:"chunkId, heading, uri, title"`

	Rank      int        `json:"rank,omitempty"`
	ChunkID   int64      `json:"chunkId,omitempty" jsonschema:"the chunk, read from the index when the result has no text"`
	Heading   string     `json:"heading,omitempty" jsonschema:"its heading path"`
	Lines     *[2]int    `json:"lines,omitempty"`
	Text      string     `json:"text,omitempty" jsonschema:"the result's text"`
	Truncated bool       `json:"truncated,omitempty"`
	Source    *SourceRef `json:"source,omitempty"`
	URI       string     `json:"uri,omitempty" jsonschema:"its source's URI"`
	Original  *Original  `json:"original,omitempty"`
}

// EvaluateOutput is the judgement, in the seed's field names.
type EvaluateOutput struct {
	Goal           string             `json:"goal"`
	Query          string             `json:"query,omitempty"`
	Iteration      int                `json:"iteration"`
	Confidence     float64            `json:"confidence" jsonschema:"0..1; at minConfidence (0.7) the results can be used"`
	Coverage       float64            `json:"coverage" jsonschema:"fraction of the goal's aspects found"`
	Relevance      float64            `json:"relevance" jsonschema:"fraction of the results that cover some aspect"`
	FoundAspects   []string           `json:"foundAspects"`
	MissingAspects []string           `json:"missingAspects"`
	Aspects        []loop.AspectScore `json:"aspects"`
	ShouldContinue bool               `json:"shouldContinue"`
	Stagnating     bool               `json:"stagnating"`
	Next           Action             `json:"next" jsonschema:"the recommended next step"`
	UnindexedWords []string           `json:"unindexedWords,omitempty"`
	Results        int                `json:"results" jsonschema:"results judged"`
	SkippedResults int                `json:"skippedResults,omitempty" jsonschema:"results without text"`
	OmittedAspects int                `json:"omittedAspects,omitempty"`
	SessionID      string             `json:"sessionId,omitempty" jsonschema:"the agent-cache session this step was recorded in"`
	Measured
}

// RefineInput is sagasu_refine_query's input.
type RefineInput struct {
	CurrentQuery    string   `json:"currentQuery" jsonschema:"the query to improve"`
	Goal            string   `json:"goal" jsonschema:"what the search should find out"`
	MissingAspects  []string `json:"missingAspects,omitempty" jsonschema:"aspects of the goal the results lack (an evaluation's)"`
	FoundAspects    []string `json:"foundAspects,omitempty" jsonschema:"aspects already covered"`
	Strategy        string   `json:"strategy,omitempty" jsonschema:"broaden, narrow, pivot or combine (default: combine when aspects are missing, else narrow)"`
	PreviousQueries []string `json:"previousQueries,omitempty" jsonschema:"queries already issued; the refined query is none of them"`
	ChunkIDs        []int64  `json:"chunkIds,omitempty" jsonschema:"results to mine for words; without them the server searches itself"`
	SessionID       string   `json:"sessionId,omitempty" jsonschema:"agent-cache session to record this step in (default: one per connection and goal)"`
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
	Next         Action             `json:"next" jsonschema:"the recommended next step"`
	SessionID    string             `json:"sessionId,omitempty" jsonschema:"the agent-cache session this step was recorded in"`
	Measured
}

// StageInput is sagasu_plan_execute_stage's input.
type StageInput struct {
	PlanID       string             `json:"planId,omitempty" jsonschema:"the plan's ID; alone, the plan is read from the agent cache"`
	StageIndex   int                `json:"stageIndex,omitempty" jsonschema:"0-based index of the stage to run (default 0)"`
	Plan         *PlanSpec          `json:"plan,omitempty" jsonschema:"the plan; omit it and give goal to have one made"`
	Goal         string             `json:"goal,omitempty" jsonschema:"without a plan: make a plan for this goal (one stage per aspect) and run the stage"`
	Aspects      []string           `json:"aspects,omitempty" jsonschema:"with goal: the aspects to plan a stage for each"`
	QueryOptions *StageQueryOptions `json:"queryOptions,omitempty" jsonschema:"k and mode of the stage's search"`
}

// PlanSpec is a plan as an agent passes it.
type PlanSpec struct {
	ID     string      `json:"id,omitempty" jsonschema:"the plan's ID"`
	Goal   string      `json:"goal" jsonschema:"the plan's goal"`
	Stages []StageSpec `json:"stages" jsonschema:"the stages, in order"`
}

// StageSpec is one stage of a plan.
type StageSpec struct {
	StageNumber     int           `json:"stageNumber" jsonschema:"1, 2, ... in order"`
	Description     string        `json:"description,omitempty" jsonschema:"what the stage finds out"`
	Query           string        `json:"query" jsonschema:"the stage's query"`
	ExpectedResults *ExpectedSpec `json:"expectedResults,omitempty" jsonschema:"what its results should contain"`
}

// ExpectedSpec is what a stage's results should contain.
type ExpectedSpec struct {
	Keywords      []string `json:"keywords,omitempty" jsonschema:"words the results should contain"`
	MinConfidence float64  `json:"minConfidence,omitempty" jsonschema:"share of keywords that must be found, 0..1 (default 0.7)"`
}

// StageQueryOptions tune a stage's search.
type StageQueryOptions struct {
	K    int    `json:"k,omitempty" jsonschema:"results, 1 to 20 (default 10)"`
	Mode string `json:"mode,omitempty" jsonschema:"retrieval: keyword, semantic or hybrid (default: the index's)"`
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
	Next           Action               `json:"next" jsonschema:"the recommended next step"`
	Results        []Result             `json:"results"`
	Plan           *loop.Plan           `json:"plan,omitempty" jsonschema:"the plan, when it was made or read from the cache by this call"`
	Notes          []string             `json:"notes,omitempty"`
	TookMs         float64              `json:"tookMs"`
	Paging
}

// chunkHits loads chunks by ID.
func (t *Toolset) chunkHits(ctx context.Context, ids []int64) ([]doc.Hit, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	hits, err := t.store.Hits(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("read chunks: %w", err)
	}
	if len(hits) < len(ids) {
		return nil, missingf("%d of the %d chunkIds are not in the index (it may have been re-indexed): search again", len(ids)-len(hits), len(ids))
	}
	return hits, nil
}

// Evaluate judges results (given, or read by chunk ID) against a goal and
// records the judgement in the agent cache.
func (t *Toolset) Evaluate(ctx context.Context, in EvaluateInput) (loop.Evaluation, error) {
	hits, err := t.chunkHits(ctx, in.ChunkIDs)
	if err != nil {
		return loop.Evaluation{}, err
	}
	given, err := t.evalResults(ctx, in.Results)
	if err != nil {
		return loop.Evaluation{}, err
	}
	hits = append(hits, given...)
	hits = append(hits, in.Hits...)
	ev, err := t.steps.Evaluate(ctx, loop.EvaluateInput{
		Goal: in.Goal, Query: in.Query, Results: hits, Aspects: in.Aspects, Iteration: in.Iteration,
		PreviousScore: in.PreviousScore, MinConfidence: in.MinConfidence,
	})
	if err == nil {
		t.recordStep(in.SessionID, in.Goal, SessionStep{Tool: NameEvaluate, Query: in.Query, Iteration: ev.Iteration, Results: ev.Results,
			Confidence: &ev.Confidence, FoundAspects: ev.FoundAspects, MissingAspects: ev.MissingAspects, Action: ev.Recommendation.Action})
	}
	return ev, err
}

// EvaluateOutputOf renders an evaluation with its first items aspects, and
// the next step: a refinement aimed at what is missing.
func EvaluateOutputOf(ev loop.Evaluation, items int) EvaluateOutput {
	out := EvaluateOutput{
		Goal: echo(ev.Goal), Query: echo(ev.Query), Iteration: ev.Iteration, Confidence: ev.Confidence, Coverage: ev.Coverage,
		Relevance: ev.Relevance, FoundAspects: ev.FoundAspects, MissingAspects: ev.MissingAspects, Aspects: ev.Aspects[:items],
		ShouldContinue: ev.ShouldContinue, Stagnating: ev.Stagnating,
		UnindexedWords: ev.UnindexedWords, Results: ev.Results, SkippedResults: ev.SkippedResults,
		OmittedAspects: len(ev.Aspects) - items,
		Next:           Action{Action: ev.Recommendation.Action, Reason: ev.Recommendation.Reason},
	}
	switch {
	case ev.Recommendation.Action == loop.ActionIndexMore:
		out.Next.Tool = NameIndex
	case ev.ShouldContinue && len(ev.MissingAspects) > 0:
		args := map[string]any{"currentQuery": out.Query, "goal": out.Goal, "missingAspects": ev.MissingAspects, "foundAspects": ev.FoundAspects}
		if st := strategyFor(ev.Recommendation.Action); st != "" {
			args["strategy"] = st
		}
		out.Next.Tool, out.Next.Arguments = NameRefine, args
	}
	return out
}

// evalResults reads the results an agent passed in. A result that carries
// no text, or a shortened one, but names its chunk is read from the index,
// so what a summary or a budget cut short is judged whole.
func (t *Toolset) evalResults(ctx context.Context, rs []EvalResult) ([]doc.Hit, error) {
	out := make([]doc.Hit, len(rs))
	var read []int64
	at := map[int64][]int{}
	for i, r := range rs {
		h := fromEvalResult(r)
		if h.Chunk.Text == "" || r.Truncated {
			if h.Chunk.ID == 0 {
				return nil, invalidf("results[%d]: no text: give content (or text), or the chunkId of a search result", i)
			}
			if len(at[h.Chunk.ID]) == 0 {
				read = append(read, h.Chunk.ID)
			}
			at[h.Chunk.ID] = append(at[h.Chunk.ID], i)
		}
		out[i] = h
	}
	if len(read) > 0 {
		hits, err := t.store.Hits(ctx, read)
		if err != nil {
			return nil, fmt.Errorf("read chunks: %w", err)
		}
		for _, h := range hits {
			for _, i := range at[h.Chunk.ID] {
				score := out[i].Score
				out[i] = h
				out[i].Score = score
			}
			delete(at, h.Chunk.ID)
		}
		for _, id := range read {
			if is, ok := at[id]; ok {
				return nil, missingf("results[%d]: chunk %d is not in the index (it may have been re-indexed): search again", is[0], id)
			}
		}
	}
	return out, nil
}

// fromEvalResult reads a result an agent passed in, in sagasu's shapes or
// the seed's. A heading path comes as users read it ("Guide > Routing").
func fromEvalResult(r EvalResult) doc.Hit {
	h := doc.Hit{Chunk: doc.Chunk{ID: r.ChunkID, Text: r.Content}, Score: r.Score}
	if h.Chunk.Text == "" {
		h.Chunk.Text = r.Text
	}
	str := func(keys ...string) string {
		for _, k := range keys {
			if s, ok := r.Metadata[k].(string); ok && s != "" {
				return s
			}
		}
		return ""
	}
	if id, ok := r.Metadata["chunkId"].(float64); ok && h.Chunk.ID == 0 {
		h.Chunk.ID = int64(id)
	}
	hp := r.Heading
	if hp == "" {
		hp = str("heading", "section", "headingPath")
	}
	if hp != "" {
		h.Chunk.Heading = strings.Split(hp, " > ")
	}
	if r.Lines != nil {
		h.Chunk.StartLine, h.Chunk.EndLine = r.Lines[0], r.Lines[1]
	}
	h.Source.URI = firstOf(r.URI, str("uri", "path", "sourceUri", "source"))
	h.Source.Title = str("title", "sourceTitle")
	if s := r.Source; s != nil {
		h.Source = doc.Source{ID: s.ID, URI: firstOf(s.URI, h.Source.URI), Title: firstOf(s.Title, h.Source.Title), Type: doc.SourceType(s.Type)}
	}
	return h
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
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

// Refine proposes a better query and records it in the agent cache.
func (t *Toolset) Refine(ctx context.Context, in RefineInput) (loop.Refinement, error) {
	hits, err := t.chunkHits(ctx, in.ChunkIDs)
	if err != nil {
		return loop.Refinement{}, err
	}
	r, err := t.steps.Refine(ctx, loop.RefineInput{
		CurrentQuery: in.CurrentQuery, Goal: in.Goal, MissingAspects: in.MissingAspects, FoundAspects: in.FoundAspects,
		Strategy: in.Strategy, Results: hits, Avoid: in.PreviousQueries,
	})
	if err == nil {
		t.recordStep(in.SessionID, in.Goal, SessionStep{Tool: NameRefine, Query: in.CurrentQuery, MissingAspects: in.MissingAspects,
			RefinedQuery: r.RefinedQuery, Strategy: r.Strategy, Action: "search"})
	}
	return r, err
}

// RefineOutputOf renders a refinement with its first items alternatives
// and the next step: searching with it.
func RefineOutputOf(in RefineInput, r loop.Refinement, items int) RefineOutput {
	out := RefineOutput{
		CurrentQuery: echo(r.CurrentQuery), RefinedQuery: r.RefinedQuery, Strategy: r.Strategy, Target: r.Target, Origin: string(r.Origin),
		Reasoning: r.Reasoning, Alternatives: r.Alternatives[:items], SessionID: in.SessionID,
		Next: Action{Action: "search", Reason: "run the refined query and judge its results", Tool: NameSearch,
			Arguments: map[string]any{"goal": echo(in.Goal), "query": r.RefinedQuery,
				"context": nextContext(append(slices.Clone(in.PreviousQueries), echo(in.CurrentQuery)), in.MissingAspects)}},
	}
	if in.SessionID != "" {
		out.Next.Arguments["sessionId"] = in.SessionID
	}
	return out
}

// StageNext is a stage's one next step, in plain words, with the tool call
// that takes it.
func StageNext(r loop.StageResult) Action {
	ev := r.Evaluation
	switch r.Next.Step {
	case loop.StepRetry:
		missing := make([]string, len(ev.MissingKeywords))
		for i, k := range ev.MissingKeywords {
			missing[i] = fmt.Sprintf("%q", k)
		}
		return Action{Action: loop.ActionRefine,
			Reason: fmt.Sprintf("stage %d found %d of %d of its keywords (missing %s): refine its query and run the stage again, or go on",
				r.StageNumber, len(ev.FoundKeywords), len(ev.FoundKeywords)+len(ev.MissingKeywords), strings.Join(missing, ", ")),
			Tool:      NameRefine,
			Arguments: map[string]any{"currentQuery": r.Query, "goal": firstOf(r.Description, r.Query), "missingAspects": ev.MissingKeywords},
		}
	case loop.StepNextStage:
		desc := ""
		number := r.Next.Index + 1
		if st := r.Next.Stage; st != nil {
			desc, number = st.Description, st.StageNumber
		}
		return Action{Action: "next_stage", Reason: fmt.Sprintf("go on to stage %d: %s", number, desc),
			Tool: NameExecuteStage, Arguments: map[string]any{"planId": r.PlanID, "stageIndex": r.Next.Index}}
	}
	return Action{Action: loop.ActionUseResults, Reason: "all stages are done: answer from the results, reading whole sections where needed"}
}

// StageReport is a stage's outcome with its next step, as `sagasu plan
// --json` prints it; its results in the shape of sagasu query --json.
type StageReport struct {
	loop.StageResult
	Results []Result `json:"results"`
	Next    Action   `json:"next"`
}

// RunStage runs stage index of plan with the CLI's options (any k, a
// retrieval mode, a timeout) and says what to do next.
func (t *Toolset) RunStage(ctx context.Context, plan loop.Plan, index int, opt loop.QueryOptions) (StageReport, error) {
	r, err := t.steps.ExecuteStage(ctx, plan, index, opt)
	if err != nil {
		return StageReport{}, err
	}
	rs, _, _ := rankedResults(r.Hits, Relevances(r.Hits), len(r.Hits), NoLimit)
	return StageReport{StageResult: r, Results: rs, Next: StageNext(r)}, nil
}

// StageResult is a stage's outcome before it is shaped.
type StageResult struct {
	loop.StageResult
	// Plan is the plan when this call made it or read it from the cache.
	Plan  *loop.Plan
	Notes []string
}

// PlanStage runs one stage of a plan: the one given, one read from the
// agent cache by ID, or one made for a goal.
func (t *Toolset) PlanStage(ctx context.Context, in StageInput) (StageResult, error) {
	var plan loop.Plan
	var shown *loop.Plan
	var err error
	switch {
	case in.Plan != nil:
		plan = in.Plan.plan()
		if in.PlanID != "" && plan.ID != "" && in.PlanID != plan.ID {
			return StageResult{}, fmt.Errorf("planId %q does not match the plan's id %q: pass one or make them agree", in.PlanID, plan.ID)
		}
		if plan.ID == "" {
			plan.ID = in.PlanID
		}
		if plan.ID == "" {
			plan.ID = "plan-" + HashOf(plan)[:12]
		}
	case in.PlanID != "":
		if plan, err = t.findPlan(in.PlanID); err != nil {
			return StageResult{}, err
		}
		shown = &plan
	case strings.TrimSpace(in.Goal) != "":
		if plan, err = t.steps.Plan(ctx, in.Goal, loop.PlanOptions{Aspects: in.Aspects}); err != nil {
			return StageResult{}, err
		}
		shown = &plan
	default:
		return StageResult{}, errors.New("no plan: pass plan (with planId and stageIndex), planId alone for a plan in the agent cache, or goal to have a plan made")
	}
	var qo StageQueryOptions
	if in.QueryOptions != nil {
		qo = *in.QueryOptions
	}
	k := qo.K
	if k == 0 {
		k = search.DefaultK
	}
	mode, notes := t.retrieval(qo.Mode)
	res, err := t.steps.ExecuteStage(ctx, plan, in.StageIndex, loop.QueryOptions{K: k, Mode: mode})
	if err != nil {
		return StageResult{}, err
	}
	return StageResult{StageResult: res, Plan: shown, Notes: notes}, nil
}

// Output renders the stage with its first items results, their texts cut
// to at most text runes.
func (r StageResult) Output(items, text int) StageOutput {
	res := r.StageResult
	out := StageOutput{
		PlanID: res.PlanID, StageIndex: res.StageIndex, StageNumber: res.StageNumber, Description: res.Description, Query: res.Query,
		Success: res.Success, Evaluation: res.Evaluation, ShouldContinue: res.ShouldContinue, Next: StageNext(res),
		Plan: r.Plan, Notes: r.Notes, TookMs: res.TookMs,
	}
	out.Results, out.Truncated, out.OmittedResults = rankedResults(res.Hits, Relevances(res.Hits), items, text)
	return out
}

// rankedResults renders the first items of hits, ranked from 1, with their
// relevances and their texts cut to at most text runes; it says whether a
// text was cut and how many hits were left out.
func rankedResults(hits []doc.Hit, rel []float64, items, text int) (out []Result, truncated bool, omitted int) {
	out = []Result{}
	for i, h := range hits[:items] {
		rr, cut := Hit{Hit: h, Rank: i + 1, Relevance: rel[i]}.Result(text)
		out = append(out, rr)
		truncated = truncated || cut
	}
	return out, truncated, len(hits) - items
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
func (t *Toolset) findPlan(id string) (loop.Plan, error) {
	if t.opt.Cache == nil {
		return loop.Plan{}, fmt.Errorf("plan %q: this server keeps no agent cache, so pass the plan itself", id)
	}
	recs, err := t.opt.Cache.List(agentcache.ListOptions{Kind: agentcache.Stages, Limit: 500})
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

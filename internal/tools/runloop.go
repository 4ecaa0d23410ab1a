package tools

import (
	"context"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/loop"
)

// NameLoop is the autonomous loop's tool name.
const NameLoop = "sagasu_loop"

// The bounds of a loop's iterations: every face (MCP, agents, the CLI)
// runs at most MaxLoopIterations searches in one call, DefaultLoopIterations
// when not told.
const (
	MaxLoopIterations     = 10
	DefaultLoopIterations = loop.DefaultMaxIterations
)

// LoopInput is sagasu_loop's input: the seed's agent query with
// maxIterations, run by the server itself.
type LoopInput struct {
	Goal          string   `json:"goal" jsonschema:"what the search should find out"`
	Query         string   `json:"query,omitempty" jsonschema:"the first query (default: the goal's own words)"`
	Aspects       []string `json:"aspects,omitempty" jsonschema:"the aspects the results must cover; derived from the goal when empty"`
	K             int      `json:"k,omitempty" jsonschema:"merged results to return, 1 to 10 (default 5)"`
	MaxIterations int      `json:"maxIterations,omitempty" jsonschema:"most searches to run, 1 to 10 (default 5); the loop stops earlier when the results are enough"`
	MinConfidence float64  `json:"minConfidence,omitempty" jsonschema:"confidence at which the results are enough (default 0.7)"`
	Mode          string   `json:"mode,omitempty" jsonschema:"retrieval: keyword, semantic or hybrid (default: the index's)"`
	Glob          string   `json:"glob,omitempty" jsonschema:"only sources whose URI matches, e.g. docs/**/*.md"`
	SessionID     string   `json:"sessionId,omitempty" jsonschema:"the agent-cache session to record the loop in (e.g. one your own search/evaluate/refine calls used); a new one by default"`

	// OnEvent receives each step as it happens (a face's live trace).
	OnEvent func(loop.Event) `json:"-"`
}

// LoopOutput is what a loop did and found: each iteration in brief and the
// merged results.
type LoopOutput struct {
	Goal          string          `json:"goal"`
	Aspects       []string        `json:"aspects"`
	SessionID     string          `json:"sessionId" jsonschema:"pass it to later calls to record them in the same session"`
	SessionRecord string          `json:"sessionRecord,omitempty" jsonschema:"the session's record: read it with sagasu_read_cache {id}"`
	Iterations    []LoopIteration `json:"iterations"`
	FinalQuery    string          `json:"finalQuery"`
	Confidence    float64         `json:"confidence" jsonschema:"the last evaluation's confidence"`
	FoundAspects  []string        `json:"foundAspects"`
	Missing       []string        `json:"missingAspects"`
	Stopped       string          `json:"stopped" jsonschema:"why the loop ended"`
	Results       []Result        `json:"results" jsonschema:"the merged results of every iteration, best first"`
	Paging
}

// LoopIteration is one search of a loop in brief.
type LoopIteration struct {
	Query          string   `json:"query"`
	NewResults     int      `json:"newResults"`
	Confidence     float64  `json:"confidence"`
	Coverage       float64  `json:"coverage"`
	MissingAspects []string `json:"missingAspects"`
	Action         string   `json:"action" jsonschema:"what the evaluation recommended"`
	RefinedQuery   string   `json:"refinedQuery,omitempty" jsonschema:"the next iteration's query"`
	Strategy       string   `json:"strategy,omitempty"`
}

// LoopResult is a loop before it is shaped.
type LoopResult struct {
	loop.RunResult
	Notes []string
}

// RunLoop runs the whole search → evaluate → refine loop toward a goal, at
// most MaxLoopIterations searches, and records it as a session in the agent
// cache after every iteration.
func (t *Toolset) RunLoop(ctx context.Context, in LoopInput) (LoopResult, error) {
	if strings.TrimSpace(in.Goal) == "" {
		return LoopResult{}, loop.ErrEmptyGoal
	}
	k := in.K
	if k == 0 {
		k = 5
	}
	it := in.MaxIterations
	if it == 0 {
		it = DefaultLoopIterations
	}
	f, err := Filter(nil, in.Glob, nil)
	if err != nil {
		return LoopResult{}, err
	}
	mode, notes := t.retrieval(in.Mode)
	res, err := t.steps.Run(ctx, loop.RunOptions{
		Goal: in.Goal, Query: in.Query, Aspects: in.Aspects, K: k, Mode: mode, MaxIterations: it,
		MinConfidence: in.MinConfidence, Filter: f, OnEvent: in.OnEvent, Session: in.SessionID,
	})
	if err != nil {
		return LoopResult{}, err
	}
	return LoopResult{RunResult: res, Notes: notes}, nil
}

// Output renders the loop with its first items results, their texts cut to
// at most text runes.
func (r LoopResult) Output(items, text int) LoopOutput {
	res := r.RunResult
	out := LoopOutput{
		Goal: res.Goal, Aspects: res.Aspects, SessionID: res.SessionID, SessionRecord: res.SessionRecord,
		Iterations: []LoopIteration{}, FinalQuery: res.FinalQuery, Stopped: res.Stopped,
		FoundAspects: []string{}, Missing: []string{},
	}
	for _, it := range res.Iterations {
		ev := it.Evaluation
		li := LoopIteration{Query: it.Query, NewResults: it.NewResults, Confidence: ev.Confidence, Coverage: ev.Coverage,
			MissingAspects: ev.MissingAspects, Action: ev.Recommendation.Action}
		if rf := it.Refinement; rf != nil {
			li.RefinedQuery, li.Strategy = rf.RefinedQuery, rf.Strategy
		}
		out.Iterations = append(out.Iterations, li)
		out.Confidence, out.FoundAspects, out.Missing = ev.Confidence, ev.FoundAspects, ev.MissingAspects
	}
	// The loop's scores are already relevance within the search that found
	// each hit (loop.Run): merged hits of different queries compare.
	rel := make([]float64, len(res.Hits))
	for i, h := range res.Hits {
		rel[i] = h.Score
	}
	out.Results, out.Truncated, out.OmittedResults = rankedResults(res.Hits, rel, items, text)
	return out
}

// TextLengths are the lengths of the loop's result texts, in runes.
func (r LoopResult) TextLengths() []int {
	out := make([]int, len(r.Hits))
	for i, h := range r.Hits {
		out[i] = Runes(h.Chunk.Text)
	}
	return out
}

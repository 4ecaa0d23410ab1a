package loop

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/agentcache"
	"github.com/sagasu-dev/sagasu/internal/doc"
)

// Recommended actions.
const (
	ActionUseResults = "use_results" // the results cover the goal: answer from them
	ActionRefine     = "refine"      // search again, focused on a missing aspect
	ActionBroaden    = "broaden"     // too few results: use fewer or more common words
	ActionNarrow     = "narrow"      // results are mostly off the goal: add distinctive words
	ActionPivot      = "pivot"       // the last query brought nothing new: approach from another angle
	ActionIndexMore  = "index_more"  // the index lacks words the goal needs: index more documents
	ActionStop       = "stop"        // nothing more to gain
)

// Calibration constants; docs/loop.md explains them.
const (
	// FoundThreshold is the weighted share of an aspect's terms that one
	// line, heading or title of a result must contain for the aspect to count
	// as found.
	FoundThreshold = 0.6
	// DefaultMinConfidence is the confidence at which results are good
	// enough to use.
	DefaultMinConfidence = 0.7
	// DefaultMaxIterations bounds a loop.
	DefaultMaxIterations = 5
	// stagnation is the least gain in confidence that counts as progress.
	stagnation = 0.02
)

// ErrNoText is returned when results are given but none carries text.
var ErrNoText = errors.New("the results carry no text to evaluate: pass each result with its \"text\" (and \"heading\"), as `sagasu query --json` prints them")

// EvaluateInput is what Evaluate judges.
type EvaluateInput struct {
	Goal    string    `json:"goal"`
	Query   string    `json:"query,omitempty"`
	Results []doc.Hit `json:"-"`
	// Aspects, when given, replace the aspects derived from the goal.
	Aspects []string `json:"aspects,omitempty"`
	// Iteration is 1 for the first search of a goal (0 is read as 1).
	Iteration int `json:"iteration,omitempty"`
	// PreviousScore is the confidence of the previous iteration; with
	// History it defaults to History's last entry.
	PreviousScore *float64 `json:"previousScore,omitempty"`
	// History holds the confidences of all earlier iterations, oldest
	// first; two iterations in a row without gain stop a loop.
	History []float64 `json:"history,omitempty"`
	// MinConfidence is the confidence at which results are usable (default 0.7).
	MinConfidence float64 `json:"minConfidence,omitempty"`
	// MaxIterations is the loop's budget (default 5).
	MaxIterations int `json:"maxIterations,omitempty"`
}

// Evaluation is the judgement of results against a goal.
type Evaluation struct {
	Goal      string `json:"goal"`
	Query     string `json:"query,omitempty"`
	Iteration int    `json:"iteration"`
	// Confidence = Coverage × (0.75 + 0.25 × Relevance): at 0.7 or more the
	// results can be used; see docs/loop.md for what each value means.
	Confidence float64 `json:"confidence"`
	// Coverage is the fraction of the goal's aspects found in the results.
	Coverage float64 `json:"coverage"`
	// Relevance is the fraction of the results that cover some aspect.
	Relevance      float64        `json:"relevance"`
	FoundAspects   []string       `json:"foundAspects"`
	MissingAspects []string       `json:"missingAspects"`
	Aspects        []AspectScore  `json:"aspects"`
	ShouldContinue bool           `json:"shouldContinue"`
	Stagnating     bool           `json:"stagnating"`
	Recommendation Recommendation `json:"recommendation"`
	// UnindexedWords are words of the goal that no chunk of the index contains.
	UnindexedWords []string `json:"unindexedWords,omitempty"`
	// Results is how many results were judged; SkippedResults had no text.
	Results        int `json:"results"`
	SkippedResults int `json:"skippedResults,omitempty"`
}

// AspectScore is how well one aspect is covered.
type AspectScore struct {
	Name string `json:"name"`
	// Score is the largest weighted share of the aspect's terms in one line,
	// heading or title of one result (0..1).
	Score    float64   `json:"score"`
	Found    bool      `json:"found"`
	Evidence *Evidence `json:"evidence,omitempty"`
	// NotInIndex is set when the index lacks too many of the aspect's words
	// for any result to cover it.
	NotInIndex bool `json:"notInIndex,omitempty"`
}

// Evidence points at where an aspect was best covered.
type Evidence struct {
	ChunkID int64  `json:"chunkId"`
	URI     string `json:"uri"`
	Heading string `json:"heading,omitempty"`
	Line    string `json:"line"`
}

// Recommendation says what to do next, and why.
type Recommendation struct {
	Action string `json:"action"`
	Reason string `json:"reason"`
}

// Evaluate judges results against a goal: which aspects they cover, how
// confident that makes it, and what to do next. Empty results are not an
// error (the recommendation says to broaden or index more); an empty goal
// and results none of which has text are.
func (e *Engine) Evaluate(ctx context.Context, in EvaluateInput) (Evaluation, error) {
	if strings.TrimSpace(in.Goal) == "" {
		return Evaluation{}, ErrEmptyGoal
	}
	w, aspects, err := e.goalAspects(ctx, in.Goal, in.Aspects, "")
	if err != nil {
		return Evaluation{}, err
	}
	ev, err := e.judge(ctx, w, aspects, in, e.opt.Similarity)
	if err != nil {
		return Evaluation{}, err
	}
	e.saveEvaluation(ev)
	return ev, nil
}

func (e *Engine) saveEvaluation(ev Evaluation) {
	summary := fmt.Sprintf("coverage %.2f, relevance %.2f, %s", ev.Coverage, ev.Relevance, ev.Recommendation.Action)
	if len(ev.MissingAspects) > 0 {
		summary += "; missing " + strings.Join(ev.MissingAspects, ", ")
	}
	e.save(agentcache.Evaluations, ev.Goal, ev.Query, ptr(ev.Confidence), summary, ev)
}

// judge scores prepared aspects on the results and decides what comes next.
//
// sim, when set, scores the aspects by meaning too (nil for a stage's
// expected keywords, which are words to find as written).
func (e *Engine) judge(ctx context.Context, w *weights, aspects []aspect, in EvaluateInput, sim Similarity) (Evaluation, error) {
	minConf := in.MinConfidence
	if minConf <= 0 {
		minConf = DefaultMinConfidence
	}
	maxIt := in.MaxIterations
	if maxIt <= 0 {
		maxIt = DefaultMaxIterations
	}
	it := max(in.Iteration, 1)
	ev := Evaluation{Goal: in.Goal, Query: in.Query, Iteration: it, FoundAspects: []string{}, MissingAspects: []string{}}

	var results []doc.Hit
	for _, r := range in.Results {
		if hasText(r) {
			results = append(results, r)
		}
	}
	ev.Results, ev.SkippedResults = len(results), len(in.Results)-len(results)
	if len(in.Results) > 0 && len(results) == 0 {
		return Evaluation{}, ErrNoText
	}

	best := make([]AspectScore, len(aspects))
	for i, a := range aspects {
		best[i] = AspectScore{Name: a.name, NotInIndex: 1-a.unindexed < FoundThreshold}
	}
	// By meaning, each aspect against all results at once.
	var sims [][]float64
	if sim != nil && len(results) > 0 {
		sims = make([][]float64, len(aspects))
		for i, a := range aspects {
			s, err := sim.Scores(ctx, a.name, results)
			if err != nil {
				return Evaluation{}, err
			}
			sims[i] = s
		}
	}
	relevant := 0
	for j, r := range results {
		sh := resultShape(e.an, r)
		onTopic := false
		for i, a := range aspects {
			s, line := a.score(sh)
			if sims != nil && sims[i][j] > s {
				s, line = sims[i][j], firstLine(r.Chunk.Text)
			}
			if s >= FoundThreshold {
				onTopic = true
			}
			if s > best[i].Score {
				best[i].Score = s
				best[i].Evidence = &Evidence{ChunkID: r.Chunk.ID, URI: r.Source.URI, Heading: r.Chunk.HeadingPath(), Line: clip(line, 160)}
			}
		}
		if onTopic {
			relevant++
		}
	}
	var notIndexed, findable []string
	for i := range best {
		best[i].Score = round3(best[i].Score)
		best[i].Found = best[i].Score >= FoundThreshold
		switch {
		case best[i].Found:
			ev.FoundAspects = append(ev.FoundAspects, best[i].Name)
		case best[i].NotInIndex:
			ev.MissingAspects = append(ev.MissingAspects, best[i].Name)
			notIndexed = append(notIndexed, best[i].Name)
		default:
			ev.MissingAspects = append(ev.MissingAspects, best[i].Name)
			findable = append(findable, best[i].Name)
		}
	}
	ev.Aspects = best
	ev.Coverage = round3(float64(len(ev.FoundAspects)) / float64(len(aspects)))
	if len(results) > 0 {
		ev.Relevance = round3(float64(relevant) / float64(len(results)))
	}
	ev.Confidence = round3(ev.Coverage * (0.75 + 0.25*ev.Relevance))
	ev.UnindexedWords = unindexedWords(w, aspects)

	prev := in.PreviousScore
	if prev == nil && len(in.History) > 0 {
		prev = &in.History[len(in.History)-1]
	}
	ev.Stagnating = it > 1 && prev != nil && ev.Confidence < *prev+stagnation
	h := in.History
	stalled := ev.Stagnating && len(h) >= 2 && h[len(h)-1] < h[len(h)-2]+stagnation

	cont, act, why := decide(ev, minConf, it, maxIt, notIndexed, findable, stalled)
	ev.ShouldContinue = cont
	ev.Recommendation = Recommendation{Action: act, Reason: why}
	return ev, nil
}

// decide turns the scores into a recommendation.
func decide(ev Evaluation, minConf float64, it, maxIt int, notIndexed, findable []string, stalled bool) (bool, string, string) {
	list := func(s []string) string { return strings.Join(quoteAll(s), ", ") }
	found := fmt.Sprintf("%d of %d aspects found", len(ev.FoundAspects), len(ev.Aspects))
	usable := ev.Confidence >= minConf
	switch {
	case ev.Results == 0 && len(findable) == 0:
		return false, ActionIndexMore, fmt.Sprintf("no results, and the index lacks the words of %s: index documents about them", list(notIndexed))
	case ev.Results == 0 && it >= maxIt:
		return false, ActionStop, fmt.Sprintf("no results after %d iterations", it)
	case ev.Results == 0:
		return true, ActionBroaden, "no results: search with fewer or more common words"
	case len(ev.MissingAspects) == 0 && usable:
		return false, ActionUseResults, fmt.Sprintf("all %d aspects found (confidence %.2f ≥ %.2f)", len(ev.Aspects), ev.Confidence, minConf)
	case it >= maxIt && ev.Coverage > 0:
		return false, ActionUseResults, fmt.Sprintf("iteration limit (%d) reached with %s; missing %s", maxIt, found, list(ev.MissingAspects))
	case it >= maxIt:
		return false, ActionStop, fmt.Sprintf("iteration limit (%d) reached and no aspect found", maxIt)
	case len(findable) == 0 && len(notIndexed) > 0:
		act := ActionIndexMore
		return false, act, fmt.Sprintf("%s; the index lacks the words of %s: index documents about them", found, list(notIndexed))
	case stalled && ev.Coverage > 0:
		return false, ActionUseResults, fmt.Sprintf("two iterations without progress; %s, missing %s", found, list(ev.MissingAspects))
	case stalled:
		return false, ActionStop, "two iterations without progress and no aspect found"
	case ev.Stagnating:
		return true, ActionPivot, fmt.Sprintf("the last query added nothing (confidence %.2f); approach %s from another angle", ev.Confidence, list(findable))
	case len(ev.MissingAspects) == 0:
		return true, ActionNarrow, fmt.Sprintf("all aspects found but only %.0f%% of results are on the goal: add distinctive words", ev.Relevance*100)
	case usable:
		return true, ActionRefine, fmt.Sprintf("usable (confidence %.2f ≥ %.2f), but %s is still missing: one focused query may find it", ev.Confidence, minConf, list(findable))
	}
	return true, ActionRefine, fmt.Sprintf("%s; search for %s", found, list(findable))
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = fmt.Sprintf("%q", x)
	}
	return out
}

// unindexedWords lists the words of the aspects that the index lacks.
func unindexedWords(w *weights, aspects []aspect) []string {
	var out []string
	seen := map[string]bool{}
	for _, a := range aspects {
		for _, word := range words(w.an, a.name) {
			terms := w.an.QueryTerms(word)
			if len(terms) == 0 || seen[word] {
				continue
			}
			missing := true
			for _, t := range terms {
				if w.indexed(t) {
					missing = false
				}
			}
			if missing {
				seen[word] = true
				out = append(out, word)
			}
		}
	}
	return out
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// AspectScores scores each result for one aspect of goal as Evaluate does
// (by words in its lines and headings, and by meaning when the engine has
// a Similarity): 0..1, FoundThreshold and above is covered. Callers that
// keep a pool of results use it to rank the results that cover an aspect.
func (e *Engine) AspectScores(ctx context.Context, goal, aspect string, results []doc.Hit) ([]float64, error) {
	if strings.TrimSpace(goal) == "" {
		return nil, ErrEmptyGoal
	}
	w := newWeights(e.opt.Stats, e.an)
	as, err := e.prepare(ctx, w, []string{aspect})
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(results))
	if len(as) == 0 || len(results) == 0 {
		return out, nil
	}
	a := as[0]
	for i, r := range results {
		if hasText(r) {
			out[i], _ = a.score(resultShape(e.an, r))
		}
	}
	if e.opt.Similarity != nil {
		sims, err := e.opt.Similarity.Scores(ctx, a.name, results)
		if err != nil {
			return nil, err
		}
		for i := range out {
			out[i] = max(out[i], sims[i])
		}
	}
	for i := range out {
		out[i] = round3(out[i])
	}
	return out, nil
}

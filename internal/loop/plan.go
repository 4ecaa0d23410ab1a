package loop

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sagasu-dev/sagasu/internal/agentcache"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/search"
)

// Plan is a search split into stages, one per aspect of the goal.
type Plan struct {
	ID     string  `json:"id"`
	Goal   string  `json:"goal"`
	Stages []Stage `json:"stages"`
}

// Stage is one search of a plan and what its results should contain.
type Stage struct {
	StageNumber     int      `json:"stageNumber"` // 1-based, in order
	Description     string   `json:"description"`
	Query           string   `json:"query"`
	ExpectedResults Expected `json:"expectedResults"`
}

// Expected is what a stage's results must contain to succeed.
type Expected struct {
	// Keywords are words the results should contain; a keyword is found
	// when one line or heading of a result has it.
	Keywords []string `json:"keywords"`
	// MinConfidence is the weighted share of keywords that must be found
	// (0..1; rare keywords weigh more than common ones).
	MinConfidence float64 `json:"minConfidence"`
}

// PlanOptions tune Plan.
type PlanOptions struct {
	Aspects       []string // explicit aspects, one stage each; derived from the goal when empty
	MinConfidence float64  // each stage's threshold (default 0.7)
	// Mode is the retrieval mode of the probe searches that pick each
	// stage's keywords ("" for the index's default).
	Mode search.Mode
}

// maxKeywords bounds a stage's expected keywords.
const maxKeywords = 5

// Plan makes a plan for goal: one stage per aspect, each with a query of the
// aspect's words that the index has, and as expected keywords those words
// plus the words that distinguish what a probe search finds for them.
func (e *Engine) Plan(ctx context.Context, goal string, opt PlanOptions) (Plan, error) {
	if strings.TrimSpace(goal) == "" {
		return Plan{}, ErrEmptyGoal
	}
	minConf := opt.MinConfidence
	if minConf <= 0 {
		minConf = DefaultMinConfidence
	}
	if minConf > 1 {
		return Plan{}, fmt.Errorf("minimum confidence %.2f is above 1: use a value between 0 and 1", minConf)
	}
	names, err := e.aspects(ctx, goal, opt.Aspects, opt.Mode)
	if err != nil {
		return Plan{}, err
	}
	pg, _ := ParseGoal(goal)
	w := newWeights(e.opt.Stats, e.an)
	if err := w.load(ctx, append(names, pg.Context)...); err != nil {
		return Plan{}, fmt.Errorf("term statistics: %w", err)
	}
	ja := hasCJK(goal)
	p := Plan{Goal: goal}
	var unsearchable []string
	for _, name := range names {
		q := indexedPhrase(w, name)
		if q == "" {
			unsearchable = append(unsearchable, name)
			continue
		}
		q = joinWords(q, contextWords(w, pg.Context, q, 1))
		st := Stage{StageNumber: len(p.Stages) + 1, Query: q, ExpectedResults: Expected{MinConfidence: minConf}}
		if ja {
			st.Description = fmt.Sprintf("「%s」について調べる", name)
		} else {
			st.Description = "Find out about " + name
		}
		st.ExpectedResults.Keywords, err = e.keywords(ctx, w, name, q, opt.Mode)
		if err != nil {
			return Plan{}, err
		}
		p.Stages = append(p.Stages, st)
	}
	if len(p.Stages) == 0 {
		return Plan{}, fmt.Errorf("the index has none of the words of %s: index documents about them first", strings.Join(quoteAll(unsearchable), ", "))
	}
	sum := sha256.New()
	sum.Write([]byte(goal))
	for _, s := range p.Stages {
		sum.Write([]byte{0})
		sum.Write([]byte(s.Query))
	}
	p.ID = "plan-" + hex.EncodeToString(sum.Sum(nil))[:12]
	return p, nil
}

// keywords picks a stage's expected keywords: the aspect's own distinctive
// words, then the strongest feedback words of a probe search.
func (e *Engine) keywords(ctx context.Context, w *weights, name, q string, mode search.Mode) ([]string, error) {
	var out []string
	seen := newQuerySet(e)
	for _, word := range words(w.an, name) {
		terms := w.an.QueryTerms(word)
		ok := len(terms) > 0
		for _, t := range terms {
			if !w.indexed(t) || w.share(t) > 0.5 {
				ok = false
			}
		}
		if ok && !seen.has(word) && len(out) < maxKeywords {
			seen.add(word)
			out = append(out, word)
		}
	}
	if e.search != nil && len(out) < maxKeywords {
		resp, err := e.search.Search(ctx, search.Request{Query: q, K: 10, Mode: mode})
		if err != nil {
			return nil, fmt.Errorf("probe search for %q: %w", q, err)
		}
		fb, err := e.feedback(ctx, w, name, q, resp.Hits)
		if err != nil {
			return nil, err
		}
		for _, c := range fb.cands {
			if len(out) >= min(maxKeywords, len(words(w.an, name))+2) {
				break
			}
			if !seen.has(c.word) {
				seen.add(c.word)
				out = append(out, c.word)
			}
		}
	}
	if len(out) == 0 {
		out = []string{q}
	}
	return out, nil
}

// ValidatePlan checks a plan an agent passes back: a goal, at least one
// stage, stages numbered 1, 2, ... in order, each with a query and a
// minimum confidence between 0 and 1.
func ValidatePlan(p Plan) error {
	if strings.TrimSpace(p.Goal) == "" {
		return errors.New("malformed plan: its goal is empty")
	}
	if len(p.Stages) == 0 {
		return errors.New("malformed plan: it has no stages; make one with Plan (`sagasu plan --goal ...`)")
	}
	for i, s := range p.Stages {
		where := fmt.Sprintf("malformed plan: stage %d (index %d)", i+1, i)
		switch {
		case s.StageNumber != i+1:
			return fmt.Errorf("%s has stageNumber %d: stages must be numbered 1, 2, ... in order", where, s.StageNumber)
		case strings.TrimSpace(s.Query) == "":
			return fmt.Errorf("%s has an empty query", where)
		case s.ExpectedResults.MinConfidence < 0 || s.ExpectedResults.MinConfidence > 1:
			return fmt.Errorf("%s has minConfidence %g: use a value between 0 and 1", where, s.ExpectedResults.MinConfidence)
		}
		for j, k := range s.ExpectedResults.Keywords {
			if strings.TrimSpace(k) == "" {
				return fmt.Errorf("%s has an empty keyword (number %d)", where, j+1)
			}
		}
	}
	return nil
}

// DefaultStageTimeout bounds one stage's search.
const DefaultStageTimeout = 30 * time.Second

// QueryOptions tune the search of a stage.
type QueryOptions struct {
	K    int         `json:"k,omitempty"`    // results (default 10)
	Mode search.Mode `json:"mode,omitempty"` // retrieval mode ("" for the index's default)
	// Timeout cancels the stage's search (default 30 s).
	Timeout time.Duration `json:"-"`
	// OnEvent, when set, hears the stage's outcome (EventStage).
	OnEvent func(Event) `json:"-"`
}

// StageResult is the outcome of one stage.
type StageResult struct {
	PlanID      string `json:"planId"`
	StageIndex  int    `json:"stageIndex"`
	StageNumber int    `json:"stageNumber"`
	Description string `json:"description"`
	Query       string `json:"query"`
	// Success says the stage ran; Evaluation.IsSuccessful says its results
	// met the stage's expectations.
	Success        bool                `json:"success"`
	Evaluation     StageEvaluation     `json:"evaluation"`
	ShouldContinue bool                `json:"shouldContinue"`
	Next           StageNext           `json:"next"`
	Results        []search.ResultView `json:"results"`
	// Hits are the same results as the index gave them.
	Hits   []doc.Hit `json:"-"`
	TookMs float64   `json:"tookMs"`
}

// StageEvaluation is how a stage's results met its expectations.
type StageEvaluation struct {
	// Score is the weighted share of expected keywords found (0..1).
	Score           float64  `json:"score"`
	IsSuccessful    bool     `json:"isSuccessful"`
	FoundKeywords   []string `json:"foundKeywords"`
	MissingKeywords []string `json:"missingKeywords"`
}

// Step is what a stage's outcome calls for next.
type Step string

// Steps after a stage.
const (
	// StepRetry: the stage's results missed its expectations; refine its
	// query and run it again, or go on.
	StepRetry Step = "retry_stage"
	// StepNextStage: go on to the next stage.
	StepNextStage Step = "next_stage"
	// StepAnswer: every stage is done; answer from the results.
	StepAnswer Step = "answer"
)

// StageNext is the step after a stage, with what a face needs to say it.
type StageNext struct {
	Step Step `json:"step"`
	// Index and Stage are the next stage's (StepNextStage).
	Index int    `json:"index,omitempty"`
	Stage *Stage `json:"stage,omitempty"`
}

// ExecuteStage runs stage stageIndex (0-based) of plan and judges its
// results against the stage's keywords. The search is cancelled after
// opt.Timeout (default 30 s).
func (e *Engine) ExecuteStage(ctx context.Context, plan Plan, stageIndex int, opt QueryOptions) (StageResult, error) {
	if err := ValidatePlan(plan); err != nil {
		return StageResult{}, err
	}
	if stageIndex < 0 || stageIndex >= len(plan.Stages) {
		return StageResult{}, fmt.Errorf("stage index %d is out of range: plan %q has %d stages, indexes 0 to %d", stageIndex, plan.ID, len(plan.Stages), len(plan.Stages)-1)
	}
	if e.search == nil {
		return StageResult{}, errors.New("execute stage: this engine has no index to search")
	}
	st := plan.Stages[stageIndex]
	timeout := opt.Timeout
	if timeout <= 0 {
		timeout = DefaultStageTimeout
	}
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	resp, err := e.search.Search(sctx, search.Request{Query: st.Query, K: opt.K, Mode: opt.Mode})
	if err != nil {
		if errors.Is(sctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			return StageResult{}, fmt.Errorf("stage %d timed out after %s: %w", st.StageNumber, timeout, context.DeadlineExceeded)
		}
		return StageResult{}, fmt.Errorf("stage %d: %w", st.StageNumber, err)
	}
	res := StageResult{
		PlanID: plan.ID, StageIndex: stageIndex, StageNumber: st.StageNumber, Description: st.Description,
		Query: st.Query, Success: true, Results: Views(resp.Hits), Hits: resp.Hits,
	}
	keywords := st.ExpectedResults.Keywords
	if len(keywords) == 0 {
		keywords = []string{st.Query}
	}
	w := newWeights(e.opt.Stats, e.an)
	aspects, err := e.prepare(ctx, w, keywords)
	if err != nil {
		return StageResult{}, err
	}
	for i := range aspects {
		aspects[i].plain = true
	}
	ev, err := e.judge(ctx, w, aspects, EvaluateInput{Goal: plan.Goal, Query: st.Query, Results: resp.Hits}, nil)
	if err != nil {
		return StageResult{}, err
	}
	total, got := 0.0, 0.0
	for i, a := range aspects {
		total += a.total
		if ev.Aspects[i].Found {
			got += a.total
		}
	}
	if total > 0 {
		res.Evaluation.Score = round3(got / total)
	}
	res.Evaluation.FoundKeywords, res.Evaluation.MissingKeywords = ev.FoundAspects, ev.MissingAspects
	res.Evaluation.IsSuccessful = res.Evaluation.Score >= st.ExpectedResults.MinConfidence && len(res.Results) > 0
	last := stageIndex == len(plan.Stages)-1
	res.ShouldContinue = !last || !res.Evaluation.IsSuccessful
	switch {
	case !res.Evaluation.IsSuccessful:
		res.Next = StageNext{Step: StepRetry}
	case !last:
		next := plan.Stages[stageIndex+1]
		res.Next = StageNext{Step: StepNextStage, Index: stageIndex + 1, Stage: &next}
	default:
		res.Next = StageNext{Step: StepAnswer}
	}
	res.TookMs = float64(time.Since(start).Microseconds()) / 1000
	summary := fmt.Sprintf("stage %d of %d, score %.2f", st.StageNumber, len(plan.Stages), res.Evaluation.Score)
	if !res.Evaluation.IsSuccessful {
		summary += ", not successful"
	}
	rec := struct {
		Plan Plan `json:"plan"`
		StageResult
		Results []resultRef `json:"results"`
	}{Plan: plan, StageResult: res, Results: refs(res.Results)}
	e.save(agentcache.Stages, plan.Goal, st.Query, ptr(res.Evaluation.Score), summary, rec)
	if opt.OnEvent != nil {
		opt.OnEvent(Event{Kind: EventStage, Iteration: stageIndex + 1, Query: st.Query, Results: len(resp.Hits), Stage: &res})
	}
	return res, nil
}

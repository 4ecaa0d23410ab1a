package loop

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/agentcache"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// RunOptions configure a loop.
type RunOptions struct {
	Goal string
	// Query is the first query; "" starts from the goal's core words.
	Query string
	// Aspects replace the aspects derived from the goal.
	Aspects       []string
	K             int         // results kept (default 10)
	Mode          search.Mode // retrieval mode ("" for the index's default)
	MaxIterations int         // default 5
	MinConfidence float64     // default 0.7
	// Filter narrows every search (glob, types); chunks already seen are
	// excluded on top of it.
	Filter store.Filter
	// OnEvent, when set, hears each step as it happens (a live trace). It
	// runs on the loop's goroutine: keep it quick.
	OnEvent func(Event)
	// Session names the loop's session in the agent cache; "" draws a new
	// one. The session record is written after every iteration, so a loop
	// cut short (cancelled, timed out) still leaves what it did.
	Session string
}

// EventKind names a step of a loop.
type EventKind string

// Steps a loop reports.
const (
	// EventSearch: a search ran (Iteration, Query, Results, NewResults).
	EventSearch EventKind = "search"
	// EventEvaluate: the merged results were judged (Evaluation).
	EventEvaluate EventKind = "evaluate"
	// EventRefine: the next query was made (Refinement).
	EventRefine EventKind = "refine"
	// EventStage: a plan stage ran (Stage).
	EventStage EventKind = "stage"
	// EventStop: the loop ended (Stopped).
	EventStop EventKind = "stop"
)

// Event is one step of a loop or a plan stage, for a live trace.
type Event struct {
	Kind      EventKind
	Iteration int
	Query     string
	// Results is how many hits the search returned; NewResults how many
	// of them were not seen before.
	Results    int
	NewResults int
	Evaluation *Evaluation
	Refinement *Refinement
	Stage      *StageResult
	Stopped    string
}

// RunResult is what a loop did and found.
type RunResult struct {
	Goal       string      `json:"goal"`
	Aspects    []string    `json:"aspects"`
	Iterations []Iteration `json:"iterations"`
	FinalQuery string      `json:"finalQuery"`
	// Results are the top k of all hits of all iterations, merged and
	// de-duplicated, in the JSON shape of `sagasu query --json`.
	Results []search.ResultView `json:"results"`
	// Hits are the same results as the index gave them.
	Hits []doc.Hit `json:"-"`
	// Stopped says why the loop ended.
	Stopped string `json:"stopped"`
	// SessionID names the loop's session; SessionRecord is the ID of its
	// record in the agent cache ("" without a cache).
	SessionID     string `json:"sessionId"`
	SessionRecord string `json:"sessionRecord,omitempty"`
}

// Iteration is one search of a loop.
type Iteration struct {
	Query string `json:"query"`
	// NewResults is how many hits this search added to what was seen.
	NewResults int        `json:"newResults"`
	Evaluation Evaluation `json:"evaluation"`
	// Refinement is how the next query was made; nil on the last iteration.
	Refinement *Refinement `json:"refinement,omitempty"`
	// Hits are the merged results as they stood after this iteration (the
	// list Evaluation judged).
	Hits []doc.Hit `json:"-"`
}

// CloseEnough is the least coverage for which a hit is kept as an aspect's
// closest lead when no hit covers it.
const CloseEnough = 0.4

// maxAttempts is how many focused queries a loop spends on one aspect.
const maxAttempts = 2

// rrfK is the rank offset of reciprocal rank fusion.
const rrfK = 60

// Run searches, evaluates the merged results, refines the query toward the
// aspects still missing and searches again, until the evaluation says to stop
// or MaxIterations is reached. Each later search excludes the chunks already
// seen, so it can only add. The results are the top k of the merged hits,
// chosen so that every aspect found is represented by its best hit first.
func (e *Engine) Run(ctx context.Context, opt RunOptions) (RunResult, error) {
	if strings.TrimSpace(opt.Goal) == "" {
		return RunResult{}, ErrEmptyGoal
	}
	if e.search == nil {
		return RunResult{}, errors.New("loop: this engine has no index to search")
	}
	k := opt.K
	if k == 0 {
		k = search.DefaultK
	}
	if k < 1 || k > search.MaxK {
		return RunResult{}, fmt.Errorf("k = %d is out of range: use 1 to %d", k, search.MaxK)
	}
	maxIt := opt.MaxIterations
	if maxIt == 0 {
		maxIt = DefaultMaxIterations
	}
	if maxIt < 1 {
		return RunResult{}, fmt.Errorf("max iterations = %d: use at least 1", maxIt)
	}
	pg, err := ParseGoal(opt.Goal)
	if err != nil {
		return RunResult{}, err
	}
	w, aspects, err := e.goalAspects(ctx, opt.Goal, opt.Aspects, opt.Mode)
	if err != nil {
		return RunResult{}, err
	}
	res := RunResult{Goal: opt.Goal, Iterations: []Iteration{}, SessionID: opt.Session}
	if res.SessionID == "" {
		res.SessionID = NewSessionID("loop")
	}
	for _, a := range aspects {
		res.Aspects = append(res.Aspects, a.name)
	}

	q := strings.TrimSpace(opt.Query)
	if q == "" {
		q = pg.Core
	}
	p := &pool{byID: map[int64]*pooled{}}
	issued := newQuerySet(e, q)
	queries := []string{q}
	attempts := map[string]int{}
	var history []float64
	var pending *Refinement // the refinement whose query is being run
	var sel []doc.Hit       // the merged results so far
	emit := func(ev Event) {
		if opt.OnEvent != nil {
			opt.OnEvent(ev)
		}
	}
	for it := 1; it <= maxIt; it++ {
		// Exclude the results in hand, so that the search brings k others;
		// hits seen before but not kept may come back and rank higher.
		f := opt.Filter
		f.ExcludeChunks = append(slices.Clone(f.ExcludeChunks), ids(sel)...)
		resp, err := e.search.Search(ctx, search.Request{Query: q, K: k, Mode: opt.Mode, Filter: f})
		if err != nil && !errors.Is(err, search.ErrEmptyQuery) {
			return res, fmt.Errorf("iteration %d: %w", it, err)
		}
		// Scores become relevance within this search (over its best), so
		// that merged hits of different queries compare like with like.
		relative(resp.Hits)
		added, err := p.add(ctx, e, aspects, resp.Hits)
		if err != nil {
			return res, fmt.Errorf("iteration %d: %w", it, err)
		}
		emit(Event{Kind: EventSearch, Iteration: it, Query: q, Results: len(resp.Hits), NewResults: added})
		sel = p.top(aspects, k)
		ev, err := e.judge(ctx, w, aspects, EvaluateInput{
			Goal: opt.Goal, Query: q, Results: sel, Iteration: it, History: history,
			MinConfidence: opt.MinConfidence, MaxIterations: maxIt,
		}, e.opt.Similarity)
		if err != nil {
			return res, err
		}
		e.saveEvaluation(ev)
		emit(Event{Kind: EventEvaluate, Iteration: it, Query: q, Evaluation: &ev})
		if pending != nil {
			gain := ev.Confidence - history[len(history)-1]
			e.saveRefinement(opt.Goal, *pending, &outcome{Gain: round3(gain), TargetFound: pending.Target != "" && slices.Contains(ev.FoundAspects, pending.Target)})
		}
		history = append(history, ev.Confidence)
		iter := Iteration{Query: q, NewResults: added, Evaluation: ev, Hits: sel}
		res.FinalQuery = q
		if !ev.ShouldContinue {
			res.Iterations = append(res.Iterations, iter)
			res.Stopped = ev.Recommendation.Action + ": " + ev.Recommendation.Reason
			break
		}
		next := e.nextRefinement(ev, q, attempts, queries, opt.Goal)
		next.Mode = opt.Mode
		if len(next.MissingAspects) > 0 && attempts[next.MissingAspects[0]] >= maxAttempts {
			res.Iterations = append(res.Iterations, iter)
			res.Stopped = fmt.Sprintf("%s: %s searched for %d times each without being found", ActionUseResults,
				strings.Join(quoteAll(next.MissingAspects), ", "), maxAttempts)
			break
		}
		ref, err := e.refine(ctx, w, next)
		if err != nil {
			return res, fmt.Errorf("iteration %d: refine: %w", it, err)
		}
		iter.Refinement = &ref
		emit(Event{Kind: EventRefine, Iteration: it, Query: q, Refinement: &ref})
		res.Iterations = append(res.Iterations, iter)
		if issued.has(ref.RefinedQuery) {
			res.Stopped = ActionStop + ": every query worth trying was already run"
			break
		}
		attempts[ref.Target]++
		issued.add(ref.RefinedQuery)
		queries = append(queries, ref.RefinedQuery)
		q = ref.RefinedQuery
		pending = &ref
		res.SessionRecord = e.saveSession(res, sel, false)
	}
	if res.Stopped == "" {
		res.Stopped = fmt.Sprintf("%s: iteration limit (%d) reached", ActionStop, maxIt)
	}
	emit(Event{Kind: EventStop, Iteration: len(res.Iterations), Query: res.FinalQuery, Stopped: res.Stopped})
	res.Hits = p.top(aspects, k)
	res.Results = Views(res.Hits)
	res.SessionRecord = e.saveSession(res, res.Hits, true)
	return res, nil
}

// nextRefinement says what to ask Refine for after an evaluation: the
// missing aspects least tried first, with the strategy the evaluation
// recommends, and pivot for an aspect already tried once.
func (e *Engine) nextRefinement(ev Evaluation, q string, attempts map[string]int, issued []string, goal string) RefineInput {
	var missing []string
	for _, a := range ev.Aspects {
		if !a.Found && !a.NotInIndex {
			missing = append(missing, a.Name)
		}
	}
	slices.SortStableFunc(missing, func(a, b string) int { return attempts[a] - attempts[b] })
	strategy := StrategyCombine
	switch ev.Recommendation.Action {
	case ActionBroaden:
		strategy = StrategyBroaden
	case ActionNarrow:
		strategy = StrategyNarrow
	case ActionPivot:
		strategy = StrategyPivot
	}
	if len(missing) > 0 && attempts[missing[0]] > 0 {
		strategy = StrategyPivot
	}
	return RefineInput{CurrentQuery: q, Goal: goal, MissingAspects: missing, FoundAspects: ev.FoundAspects, Strategy: strategy, Avoid: slices.Clone(issued)}
}

// sessionRecord is a loop as the cache keeps it: the results as references.
type sessionRecord struct {
	RunResult
	Results []resultRef `json:"results"`
	// Done is false while the loop runs (and for one cut short).
	Done bool `json:"done"`
	// Steps are the calls an agent made itself in the same session
	// (recorded by the tools package), kept as they were.
	Steps        json.RawMessage `json:"steps,omitempty"`
	DroppedSteps json.RawMessage `json:"droppedSteps,omitempty"`
}

type resultRef struct {
	ChunkID int64  `json:"chunkId"`
	URI     string `json:"uri"`
	Heading string `json:"heading,omitempty"`
}

func refs(rs []search.ResultView) []resultRef {
	out := make([]resultRef, 0, len(rs))
	for _, r := range rs {
		out = append(out, resultRef{ChunkID: r.ChunkID, URI: r.Source.URI, Heading: r.Heading})
	}
	return out
}

// saveSession writes the loop's session record as it stands, with hits as
// its results, and returns the record's ID ("" without a cache).
func (e *Engine) saveSession(res RunResult, hits []doc.Hit, done bool) string {
	if e.opt.Cache == nil {
		return ""
	}
	var conf *float64
	last := Evaluation{}
	if n := len(res.Iterations); n > 0 {
		last = res.Iterations[n-1].Evaluation
		conf = ptr(last.Confidence)
	}
	state := res.Stopped
	if !done {
		state = "running"
	}
	summary := fmt.Sprintf("loop %s: %d iterations, %d of %d aspects; %s", res.SessionID, len(res.Iterations), len(last.FoundAspects), len(res.Aspects), state)
	rec := sessionRecord{RunResult: res, Results: refs(Views(hits)), Done: done}
	rec.RunResult.Results = nil
	saved, err := e.opt.Cache.Upsert(agentcache.Sessions, res.SessionID, func(old agentcache.Record, found bool) (agentcache.Record, error) {
		if found {
			var prev sessionRecord
			if json.Unmarshal(old.Data, &prev) == nil {
				rec.Steps, rec.DroppedSteps = prev.Steps, prev.DroppedSteps
			}
		}
		raw, err := json.Marshal(rec)
		if err != nil {
			return agentcache.Record{}, err
		}
		return agentcache.Record{Goal: res.Goal, Query: res.FinalQuery, Score: conf, Summary: summary, Data: raw}, nil
	})
	if err != nil {
		e.log.Warn("agent cache: session not saved", "err", err)
		return ""
	}
	return saved.ID
}

// NewSessionID draws a session ID that starts with prefix ("loop-3f2a...").
func NewSessionID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return prefix + "-" + hex.EncodeToString(b[:])
}

// pool holds every hit a loop has seen.
type pool struct {
	items    []*pooled
	byID     map[int64]*pooled
	searches int // searches added so far
}

type pooled struct {
	hit   doc.Hit
	fused float64   // reciprocal rank fusion over the searches that returned it
	cover []float64 // per aspect: how well the hit covers it (aspect.score)
	whole []float64 // per aspect: the share of its terms anywhere in the hit
	order int       // when it was first seen
	first int       // its rank (from 1) in the loop's first search; 0 if not in it
}

// add merges one search's hits and returns how many were new.
func (p *pool) add(ctx context.Context, e *Engine, aspects []aspect, hits []doc.Hit) (int, error) {
	var fresh []*pooled
	p.searches++
	for rank, h := range hits {
		it := p.byID[h.Chunk.ID]
		if it == nil {
			it = &pooled{hit: h, order: len(p.items)}
			if p.searches == 1 {
				it.first = rank + 1
			}
			sh := resultShape(e.an, h)
			all := unit{terms: makeSet(e.an, h.Source.Title+"\n"+h.Chunk.HeadingPath()+"\n"+h.Chunk.Text)}
			for _, a := range aspects {
				it.whole = append(it.whole, a.coverage(all))
				s, _ := a.score(sh)
				it.cover = append(it.cover, s)
			}
			p.items = append(p.items, it)
			p.byID[h.Chunk.ID] = it
			fresh = append(fresh, it)
		}
		it.fused += 1 / float64(rrfK+rank+1)
	}
	if e.opt.Similarity != nil && len(fresh) > 0 {
		fh := make([]doc.Hit, len(fresh))
		for i, it := range fresh {
			fh[i] = it.hit
		}
		for i, a := range aspects {
			sims, err := e.opt.Similarity.Scores(ctx, a.name, fh)
			if err != nil {
				return 0, err
			}
			for j, it := range fresh {
				it.cover[i] = max(it.cover[i], sims[j])
			}
		}
	}
	return len(fresh), nil
}

func ids(hits []doc.Hit) []int64 {
	out := make([]int64, 0, len(hits))
	for _, h := range hits {
		out = append(out, h.Chunk.ID)
	}
	return out
}

// top chooses k hits: first, for each aspect, the hit that covers it best
// (when one covers it at least fairly); then the hits of the loop's first
// search that cover an aspect at least fairly, a second section of a page
// included; then the first search's other pages not chosen yet, in its
// order, so that the loop only adds to what its first query found and never
// trades one of its pages, or a section that answers part of the goal, for
// another chunk of a page already chosen; then the rest by fused rank, each
// further hit from a page already chosen counting half as much, so the
// results span more pages.
func (p *pool) top(aspects []aspect, k int) []doc.Hit {
	chosen := map[*pooled]bool{}
	perSource := map[string]int{}
	var sel []*pooled
	take := func(it *pooled) {
		chosen[it] = true
		perSource[it.hit.Source.ID]++
		sel = append(sel, it)
	}
	better := func(a, b *pooled) bool { return a.fused > b.fused || a.fused == b.fused && a.order < b.order }
	for i := range aspects {
		// The hits that cover the aspect best; of equals, the best ranked.
		// An aspect not found keeps its two closest hits, when they are
		// fair and on two pages: they are the best leads the agent has.
		var cands []*pooled
		for _, it := range p.items {
			if it.cover[i] >= CloseEnough {
				cands = append(cands, it)
			}
		}
		slices.SortStableFunc(cands, func(a, b *pooled) int {
			switch {
			case a.cover[i] > b.cover[i]+1e-9:
				return -1
			case b.cover[i] > a.cover[i]+1e-9:
				return 1
			case a.whole[i] > b.whole[i]+1e-9:
				return -1
			case b.whole[i] > a.whole[i]+1e-9:
				return 1
			case better(a, b):
				return -1
			case better(b, a):
				return 1
			}
			return 0
		})
		n := 1
		if len(cands) > 0 && cands[0].cover[i] < FoundThreshold {
			n = 2
		}
		leads := map[string]bool{}
		for _, it := range cands {
			if n == 0 || len(sel) >= k {
				break
			}
			if leads[it.hit.Source.ID] {
				continue
			}
			leads[it.hit.Source.ID] = true
			n--
			if !chosen[it] {
				take(it)
			}
		}
	}
	for _, it := range p.items {
		if len(sel) < k && it.first > 0 && !chosen[it] && slices.ContainsFunc(it.cover, func(c float64) bool { return c >= CloseEnough }) {
			take(it) // the first search's hits that cover an aspect at least fairly, in its order
		}
	}
	for _, it := range p.items {
		if len(sel) < k && it.first > 0 && !chosen[it] && perSource[it.hit.Source.ID] == 0 {
			take(it) // items are in the order seen: the first search's in its order
		}
	}
	for len(sel) < k {
		var best *pooled
		bestV := 0.0
		for _, it := range p.items {
			if chosen[it] {
				continue
			}
			v := it.fused
			for range perSource[it.hit.Source.ID] {
				v /= 2
			}
			if best == nil || v > bestV || v == bestV && it.order < best.order {
				best, bestV = it, v
			}
		}
		if best == nil {
			break
		}
		take(best)
	}
	slices.SortStableFunc(sel, func(a, b *pooled) int {
		switch {
		case better(a, b):
			return -1
		case better(b, a):
			return 1
		}
		return 0
	})
	out := make([]doc.Hit, len(sel))
	for i, it := range sel {
		out[i] = it.hit
	}
	return out
}

// relative turns a search's scores into relevance over its best score, in
// 0..1: raw scores (BM25, cosine, fused ranks) of different queries do not
// compare.
func relative(hs []doc.Hit) {
	top := 0.0
	for _, h := range hs {
		top = max(top, h.Score)
	}
	for i := range hs {
		if top > 0 {
			hs[i].Score = min(1, max(0, hs[i].Score/top))
		} else {
			hs[i].Score = 0
		}
	}
}

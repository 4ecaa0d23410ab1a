package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/sagasu-dev/sagasu/internal/agentcache"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/search"
)

// Refinement strategies.
const (
	StrategyBroaden = "broaden" // fewer, more common words; or a related word to widen the net
	StrategyNarrow  = "narrow"  // add distinctive words from the results that are on target
	StrategyPivot   = "pivot"   // the index's own section heading for the aspect, new words
	StrategyCombine = "combine" // the missing aspect joined with what the goal says of all aspects
)

// Strategies returns the strategies Refine accepts.
func Strategies() []string {
	return []string{StrategyBroaden, StrategyNarrow, StrategyPivot, StrategyCombine}
}

// RefineInput is what Refine works from.
type RefineInput struct {
	CurrentQuery   string   `json:"currentQuery"`
	Goal           string   `json:"goal"`
	MissingAspects []string `json:"missingAspects,omitempty"`
	FoundAspects   []string `json:"foundAspects,omitempty"`
	// Strategy is broaden, narrow, pivot or combine; "" picks combine when
	// aspects are missing and narrow otherwise.
	Strategy string `json:"strategy,omitempty"`
	// Results are the current results, mined for words and headings. When
	// empty, Refine searches for the aspect it targets itself.
	Results []doc.Hit `json:"-"`
	// Avoid lists queries already issued; the refined query is none of them.
	Avoid []string `json:"avoid,omitempty"`
	// Mode is the retrieval mode of the search Refine makes without
	// Results ("" for the index's default).
	Mode search.Mode `json:"-"`
}

// Refinement is a better query, with why, and other queries worth trying.
type Refinement struct {
	CurrentQuery string `json:"currentQuery"`
	RefinedQuery string `json:"refinedQuery"`
	Strategy     string `json:"strategy"`
	// Target is the aspect the refined query is aimed at ("" for the goal as a whole).
	Target string `json:"target,omitempty"`
	// Origin says where the query's words came from.
	Origin       Origin        `json:"origin"`
	Reasoning    string        `json:"reasoning"`
	Alternatives []Alternative `json:"alternatives"`
}

// Origin is where a refined query's words came from.
type Origin string

// Origins of a refined query.
const (
	// OriginAspect: the goal's own words for the aspect, those the index has.
	OriginAspect Origin = "aspect"
	// OriginHeading: a section heading of the index.
	OriginHeading Origin = "heading"
	// OriginFeedback: distinctive words of the results.
	OriginFeedback Origin = "feedback"
	// OriginCache: a refinement that worked before for a similar goal.
	OriginCache Origin = "cache"
)

// Alternative is another query with what it is for.
type Alternative struct {
	Query   string `json:"query"`
	Purpose string `json:"purpose"`
}

// outcome is what became of a refinement, known once its query was run.
type outcome struct {
	Gain        float64 `json:"gain"`        // confidence after minus before
	TargetFound bool    `json:"targetFound"` // the aspect it aimed at was found
}

// refinementRecord is a refinement as the cache keeps it.
type refinementRecord struct {
	Goal string `json:"goal"`
	Refinement
	Outcome *outcome `json:"outcome,omitempty"`
}

// Refine proposes the next query. It targets the first missing aspect and
// builds the query from the index: the aspect's words that the index has,
// words that distinguish the results on target (pseudo-relevance feedback,
// in the surface form the documents use), section headings, and — first of
// all — a query that found the same aspect before for a similar goal, when
// the cache has one.
func (e *Engine) Refine(ctx context.Context, in RefineInput) (Refinement, error) {
	r, err := e.refine(ctx, newWeights(e.opt.Stats, e.an), in)
	if err != nil {
		return Refinement{}, err
	}
	e.saveRefinement(in.Goal, r, nil)
	return r, nil
}

func (e *Engine) saveRefinement(goal string, r Refinement, out *outcome) {
	var score *float64
	summary := r.Strategy
	if r.Target != "" {
		summary += " for " + r.Target
	}
	if out != nil {
		score = ptr(out.Gain)
		summary += fmt.Sprintf(", gain %+.2f", out.Gain)
	}
	summary += ": " + r.CurrentQuery + " → " + r.RefinedQuery
	e.save(agentcache.Refinements, goal, r.RefinedQuery, score, summary, refinementRecord{Goal: goal, Refinement: r, Outcome: out})
}

func (e *Engine) refine(ctx context.Context, w *weights, in RefineInput) (Refinement, error) {
	if strings.TrimSpace(in.Goal) == "" {
		return Refinement{}, ErrEmptyGoal
	}
	strategy := in.Strategy
	if strategy == "" {
		strategy = StrategyNarrow
		if len(nonEmpty(in.MissingAspects)) > 0 {
			strategy = StrategyCombine
		}
	}
	if !slices.Contains(Strategies(), strategy) {
		return Refinement{}, fmt.Errorf("unknown strategy %q: use broaden, narrow, pivot or combine", strategy)
	}
	pg, err := ParseGoal(in.Goal)
	if err != nil {
		return Refinement{}, err
	}
	missing := nonEmpty(in.MissingAspects)
	if err := w.load(ctx, append(append([]string{in.CurrentQuery, pg.Core, pg.Context}, missing...), in.FoundAspects...)...); err != nil {
		return Refinement{}, fmt.Errorf("term statistics: %w", err)
	}
	avoid := newQuerySet(e, in.Avoid...)
	avoid.add(in.CurrentQuery)

	// The target: the first missing aspect the index has words for.
	target, targetQ := "", ""
	var skipped []string
	for _, m := range missing {
		if q := indexedPhrase(w, m); q != "" {
			target, targetQ = m, q
			break
		}
		skipped = append(skipped, m)
	}
	base := targetQ
	if base == "" {
		base = indexedPhrase(w, in.CurrentQuery)
	}
	if base == "" {
		base = indexedPhrase(w, pg.Core)
	}
	if base == "" {
		return Refinement{}, fmt.Errorf("no word of the goal or the query %q is in the index: index documents about it first", in.CurrentQuery)
	}
	topic := target
	if topic == "" {
		topic = pg.Core
	}

	// Feedback: the given results, or a probe search for the target.
	results := in.Results
	if len(results) == 0 && e.search != nil {
		resp, err := e.search.Search(ctx, search.Request{Query: base, K: 10, Mode: in.Mode})
		if err != nil {
			return Refinement{}, fmt.Errorf("search for feedback: %w", err)
		}
		results = resp.Hits
	}
	fb, err := e.feedback(ctx, w, topic, base, results)
	if err != nil {
		return Refinement{}, err
	}

	r := Refinement{CurrentQuery: in.CurrentQuery, Strategy: strategy, Target: target}
	var why []string
	if len(skipped) > 0 {
		why = append(why, fmt.Sprintf("skipped %s: the index has none of its words", strings.Join(quoteAll(skipped), ", ")))
	}
	var cands []Alternative // in order of preference; the first new one wins
	past := e.pastRefinement(ctx, w, in.Goal, target, avoid)
	if past != nil {
		cands = append(cands, Alternative{Query: past.query, Purpose: "worked before: " + past.why})
	}
	winner := -1 // the candidate chosen
	switch strategy {
	case StrategyCombine:
		q := joinWords(targetQ, contextWords(w, pg.Context, targetQ, 2))
		if target == "" {
			q = joinWords(base, fb.words(2, base))
		}
		cands = append(cands, Alternative{q, "combine " + describe(topic) + " with the goal's context"})
	case StrategyBroaden:
		cands = append(cands, Alternative{broaden(w, base, fb), "fewer, more common words for " + describe(topic)})
	case StrategyNarrow:
		cands = append(cands, Alternative{joinWords(base, fb.words(2, base)), "add words that distinguish the results on " + describe(topic)})
	case StrategyPivot:
		if fb.heading != "" {
			cands = append(cands, Alternative{fb.heading, "the index's own section on " + describe(topic)})
		}
		cands = append(cands, Alternative{joinWords(fb.rarest(w, base), fb.words(3, base)), "new words from the results on " + describe(topic)})
	}
	// Fallbacks, also offered as alternatives.
	cands = append(cands, Alternative{targetQ, "search for " + describe(target) + " alone"})
	if fb.heading != "" {
		cands = append(cands, Alternative{fb.heading, "the index's own section on " + describe(topic)})
	}
	for _, m := range missing {
		if m == target {
			continue
		}
		if q := indexedPhrase(w, m); q != "" {
			cands = append(cands, Alternative{q, "find the missing aspect " + describe(m)})
		}
	}
	cands = append(cands, Alternative{joinWords(base, fb.words(2, base)), "narrow " + describe(topic) + " with distinctive words from the results"})
	cands = append(cands, Alternative{broaden(w, base, fb), "broaden: fewer, more common words"})

	seen := newQuerySet(e)
	for i, c := range cands {
		c.Query = strings.TrimSpace(c.Query)
		if c.Query == "" || seen.has(c.Query) {
			continue
		}
		seen.add(c.Query)
		if r.RefinedQuery == "" && !avoid.has(c.Query) {
			r.RefinedQuery, winner = c.Query, i
			why = append(why, c.Purpose)
			continue
		}
		if !avoid.has(c.Query) && len(r.Alternatives) < 4 {
			r.Alternatives = append(r.Alternatives, c)
		}
	}
	if r.RefinedQuery == "" {
		// Every idea was tried already: say so rather than repeat a query.
		r.RefinedQuery = base
		why = append(why, "every candidate query was already issued; "+describe(topic)+" may not be in the index")
	}
	switch {
	case past != nil && winner == 0:
		r.Origin = OriginCache
	case fb.heading != "" && r.RefinedQuery == fb.heading:
		r.Origin = OriginHeading
	case target != "" && r.RefinedQuery == targetQ:
		r.Origin = OriginAspect
	default:
		r.Origin = OriginFeedback
	}
	if r.Alternatives == nil {
		r.Alternatives = []Alternative{}
	}
	r.Reasoning = strategy + ": " + strings.Join(why, "; ")
	return r, nil
}

func describe(s string) string {
	if s == "" {
		return "the goal"
	}
	return fmt.Sprintf("%q", s)
}

// indexedPhrase returns the surface words of s that the index has, in order.
func indexedPhrase(w *weights, s string) string {
	var out []string
	for _, word := range words(w.an, s) {
		terms := w.an.QueryTerms(word)
		for _, t := range terms {
			if w.indexed(t) {
				out = append(out, word)
				break
			}
		}
	}
	return strings.Join(out, " ")
}

// contextWords returns up to n words of the goal's context that are
// distinctive (in at most a quarter of the index) and not already in q.
func contextWords(w *weights, context, q string, n int) string {
	have := makeSet(w.an, q)
	var out []string
	for _, word := range words(w.an, context) {
		terms := w.an.QueryTerms(word)
		keep := len(terms) > 0 && utf8.RuneCountInString(word) > 1
		for _, t := range terms {
			if have.has(t) || !w.indexed(t) || w.share(t) > 0.25 {
				keep = false
			}
		}
		if keep && len(out) < n {
			out = append(out, word)
			for _, t := range terms {
				have[t] = struct{}{}
			}
		}
	}
	return strings.Join(out, " ")
}

func joinWords(parts ...string) string { return strings.Join(nonEmpty(parts), " ") }

// broaden keeps the two most common of q's indexed words that are not in
// more than half the index (dropping restrictive modifiers); a query of two
// words or fewer gets the strongest feedback word instead, which widens what
// BM25 can match.
func broaden(w *weights, q string, fb feedback) string {
	ws := words(w.an, q)
	type wd struct {
		word  string
		share float64
	}
	var keep []wd
	for _, word := range ws {
		terms := w.an.QueryTerms(word)
		if len(terms) == 0 {
			continue
		}
		s, ok := 0.0, false
		for _, t := range terms {
			if w.indexed(t) {
				ok = true
			}
			s = max(s, w.share(t))
		}
		if ok && s <= 0.5 {
			keep = append(keep, wd{word, s})
		}
	}
	if len(keep) <= 2 {
		return joinWords(q, fb.words(1, q))
	}
	slices.SortStableFunc(keep, byDesc(func(x wd) float64 { return x.share }))
	keep = keep[:2]
	// Keep them in the order the query had them.
	var out []string
	for _, word := range ws {
		for _, k := range keep {
			if k.word == word {
				out = append(out, word)
			}
		}
	}
	return strings.Join(out, " ")
}

// feedback is what the results say about the topic.
type feedback struct {
	cands   []candidate
	heading string // the heading segment in the results that best names the topic
}

// words returns up to n feedback words that q does not have yet.
func (f feedback) words(n int, q string) string {
	var out []string
	have := q
	for _, c := range f.cands {
		if len(out) == n {
			break
		}
		if strings.Contains(strings.ToLower(have), strings.ToLower(c.word)) {
			continue
		}
		out = append(out, c.word)
		have += " " + c.word
	}
	return strings.Join(out, " ")
}

// rarest returns the rarest indexed word of q: what a pivot keeps.
func (f feedback) rarest(w *weights, q string) string {
	best, bestIDF := "", -1.0
	for _, word := range words(w.an, q) {
		for _, t := range w.an.QueryTerms(word) {
			if w.indexed(t) && w.idf(t) > bestIDF {
				best, bestIDF = word, w.idf(t)
			}
		}
	}
	return best
}

// feedback mines results for the topic: the results whose lines or
// headings cover the topic best are the feedback set; their distinctive words
// (not the topic's own, not in more than a fifth of the index) are ranked,
// and the heading segment that covers the topic best is kept.
func (e *Engine) feedback(ctx context.Context, w *weights, topic, q string, results []doc.Hit) (feedback, error) {
	var fb feedback
	as, err := e.prepare(ctx, w, []string{topic})
	if err != nil {
		return fb, err
	}
	if len(as) == 0 || len(results) == 0 {
		return fb, nil
	}
	a := as[0]
	type scored struct {
		r doc.Hit
		s float64
	}
	var on []scored
	bestHead, bestHeadScore := "", 0.0
	qset := makeSet(e.an, q)
	for _, r := range results {
		s, _ := a.score(resultShape(e.an, r))
		on = append(on, scored{r, s})
		for _, seg := range r.Chunk.Heading {
			seg = CleanHeading(seg)
			if seg == "" {
				continue
			}
			u := unit{label: seg, terms: makeSet(e.an, seg)}
			c := a.coverage(u)
			// Prefer headings that say something the query does not.
			fresh := false
			for t := range u.terms {
				if !qset.has(t) && !isHiraganaTerm(t) {
					fresh = true
				}
			}
			if c >= 0.5 && fresh && c > bestHeadScore {
				bestHead, bestHeadScore = seg, c
			}
		}
	}
	slices.SortStableFunc(on, byDesc(func(x scored) float64 { return x.s }))
	// Words are taken from the lines of those results that have a word of
	// the topic: what is said near the topic, not anywhere in the chunk.
	key := termSet{}
	for _, t := range a.keyTerms(w) {
		key[t] = struct{}{}
	}
	var texts []string
	for i, s := range on {
		if i == 5 || (i > 0 && s.s < 0.3) {
			break
		}
		var near []string
		for _, line := range append([]string{s.r.Chunk.HeadingPath()}, strings.Split(s.r.Chunk.Text, "\n")...) {
			set := makeSet(e.an, line)
			for t := range key {
				if set.has(t) {
					near = append(near, line)
					break
				}
			}
		}
		if len(near) > 0 {
			texts = append(texts, strings.Join(near, "\n"))
		}
	}
	skip := makeSet(e.an, q+" "+topic)
	cands, err := feedbackWords(ctx, w, texts, skip, 0.2)
	if err != nil {
		return fb, fmt.Errorf("term statistics: %w", err)
	}
	// A feedback word must recur: in two results, or twice in one.
	for _, c := range cands {
		if c.docs >= 2 || len(texts) == 1 {
			fb.cands = append(fb.cands, c)
		}
	}
	fb.heading = bestHead
	return fb, nil
}

// querySet compares queries by their analysed terms, so "Sidebar config"
// and "config sidebar" are the same query.
type querySet struct {
	e    *Engine
	keys map[string]bool
}

func newQuerySet(e *Engine, qs ...string) *querySet {
	s := &querySet{e: e, keys: map[string]bool{}}
	for _, q := range qs {
		s.add(q)
	}
	return s
}

func (s *querySet) key(q string) string {
	t := s.e.an.QueryTerms(q)
	slices.Sort(t)
	return strings.Join(t, " ")
}

func (s *querySet) add(q string) {
	if k := s.key(q); k != "" {
		s.keys[k] = true
	}
}

func (s *querySet) has(q string) bool { return s.keys[s.key(q)] }

// past is a refinement from the cache worth repeating.
type past struct {
	query string
	why   string
	gain  float64
}

// pastRefinement finds, in the cache, a refined query that found the same
// aspect (or raised confidence) for a similar goal: one sharing at least
// half its terms with this goal. Without a cache, or when nothing fits, it
// returns nil.
func (e *Engine) pastRefinement(ctx context.Context, w *weights, goal, target string, avoid *querySet) *past {
	if e.opt.Cache == nil {
		return nil
	}
	recs, err := e.opt.Cache.List(agentcache.ListOptions{Kind: agentcache.Refinements, Limit: 500})
	if err != nil {
		e.log.Warn("agent cache: past refinements not read", "err", err)
		return nil
	}
	var evals []agentcache.Record // read lazily: only refinements without an outcome need them
	goalTerms := e.an.QueryTerms(goal)
	targetTerms := e.an.QueryTerms(target)
	var best *past
	for _, rec := range recs {
		var rr refinementRecord
		if json.Unmarshal(rec.Data, &rr) != nil || rr.RefinedQuery == "" || avoid.has(rr.RefinedQuery) {
			continue
		}
		if jaccard(goalTerms, e.an.QueryTerms(rr.Goal)) < 0.5 {
			continue
		}
		if target != "" && jaccard(targetTerms, e.an.QueryTerms(rr.Target)) < 0.5 {
			continue
		}
		out := rr.Outcome
		if out == nil {
			if evals == nil {
				evals, _ = e.opt.Cache.List(agentcache.ListOptions{Kind: agentcache.Evaluations, Limit: 1000})
			}
			out = outcomeFromEvaluations(evals, rr)
		}
		if out == nil || !(out.TargetFound || out.Gain > stagnation) {
			continue
		}
		if err := w.load(ctx, rr.RefinedQuery); err != nil || indexedPhrase(w, rr.RefinedQuery) == "" {
			continue // the index changed and lost its words
		}
		if best == nil || out.Gain > best.gain {
			best = &past{query: rr.RefinedQuery, gain: out.Gain,
				why: fmt.Sprintf("for %q it found %s (confidence %+.2f)", rr.Goal, describe(rr.Target), out.Gain)}
		}
	}
	return best
}

// outcomeFromEvaluations judges a refinement saved without an outcome (one
// an agent asked for) by the evaluations of its query that followed it.
func outcomeFromEvaluations(evals []agentcache.Record, rr refinementRecord) *outcome {
	for _, rec := range evals {
		if rec.Goal != rr.Goal || rec.Query != rr.RefinedQuery {
			continue
		}
		var ev Evaluation
		if json.Unmarshal(rec.Data, &ev) != nil {
			continue
		}
		found := rr.Target != "" && slices.Contains(ev.FoundAspects, rr.Target)
		if found || (ev.Iteration > 1 && !ev.Stagnating) {
			return &outcome{TargetFound: found, Gain: 0}
		}
	}
	return nil
}

func jaccard(a, b []string) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	in := 0
	set := map[string]bool{}
	for _, t := range a {
		set[t] = true
	}
	for _, t := range b {
		if set[t] {
			in++
		}
	}
	union := len(set)
	for _, t := range b {
		if !set[t] {
			union++
		}
	}
	if union == 0 {
		return 0
	}
	return float64(in) / float64(union)
}

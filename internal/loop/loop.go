// Package loop is the agent in the loop without an LLM: it evaluates search
// results against a goal, refines queries from the index's own statistics,
// plans a search in stages and runs the whole search → evaluate → refine
// loop. The calling agent is the LLM; everything here is lexical and
// statistical, with a hook for an embedding similarity when an index has one.
package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"unicode"

	"github.com/sagasu-dev/sagasu/internal/agentcache"
	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/search"
)

// Searcher searches one index and gives the document frequencies of its
// terms, which weigh the terms of goals and results. *search.Engine is one.
type Searcher interface {
	Search(ctx context.Context, req search.Request) (search.Response, error)
	TermStats
}

// Options configure an Engine. The zero value works: the searcher's
// statistics, no cache, no similarity by meaning.
type Options struct {
	// Stats gives term document frequencies; nil uses the searcher's
	// (with no searcher, every term weighs the same).
	Stats TermStats
	// Similarity, when set, says by meaning how well a result covers an
	// aspect (see Similarity); an aspect then counts as covered when
	// either its words or the similarity say so. New sets it from the
	// searcher when that has an embedder (see Semantic).
	Similarity Similarity
	// Cache records every step and supplies refinements that worked before.
	Cache *agentcache.Cache
	// Logger receives warnings (e.g. a cache that cannot be written).
	Logger *slog.Logger
}

// Engine evaluates, refines, plans and loops over one index. It is safe for
// concurrent use.
type Engine struct {
	search Searcher
	opt    Options
	an     *analyze.Analyzer
	log    *slog.Logger
}

// analyzed is a searcher that says which analyzer its index is read with.
type analyzed interface {
	Analyzer() *analyze.Analyzer
}

// New returns an Engine searching with s (which may be nil for an engine
// that only evaluates and refines given results). Terms are analysed with
// the analyzer the index is read with, when s says which.
func New(s Searcher, opt Options) *Engine {
	an := analyze.New(analyze.Options{})
	if s != nil {
		if opt.Stats == nil {
			opt.Stats = s
		}
		if a, ok := s.(analyzed); ok && a.Analyzer() != nil {
			an = a.Analyzer()
		}
		if opt.Similarity == nil {
			if sem, ok := s.(ByMeaning); ok && sem.ComparesMeaning() {
				opt.Similarity = NewSimilarity(sem)
			}
		}
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Engine{search: s, opt: opt, an: an, log: log}
}

// aspect is an aspect ready for matching.
type aspect struct {
	name   string
	terms  []string // distinct analysed terms
	weight []float64
	total  float64
	// unindexed is the weight share of terms the index does not have: the
	// part of the aspect no result can ever cover.
	unindexed float64
	// plain: any line or heading with the words counts in full (a stage's
	// expected keyword), not only lines under a heading about it.
	plain bool
}

// prepare analyses aspect names and weighs their terms.
func (e *Engine) prepare(ctx context.Context, w *weights, names []string) ([]aspect, error) {
	if err := w.load(ctx, names...); err != nil {
		return nil, fmt.Errorf("term statistics: %w", err)
	}
	var out []aspect
	for _, n := range names {
		a := aspect{name: n}
		// Each word weighs its idf once: the bigrams of a long katakana
		// word share its weight instead of outweighing the other words.
		weight := map[string]float64{}
		for _, word := range words(e.an, n) {
			terms := e.an.QueryTerms(word)
			for _, t := range terms {
				if _, ok := weight[t]; !ok {
					a.terms = append(a.terms, t)
				}
				weight[t] += w.idf(t) / float64(len(terms))
			}
		}
		if len(a.terms) == 0 { // nothing but hiragana: weigh its terms as they are
			for _, t := range e.an.QueryTerms(n) {
				a.terms = append(a.terms, t)
				weight[t] = w.idf(t)
			}
		}
		missing := 0.0
		for _, t := range a.terms {
			wt := weight[t]
			a.weight = append(a.weight, wt)
			a.total += wt
			if !w.indexed(t) {
				missing += wt
			}
		}
		if a.total > 0 {
			a.unindexed = missing / a.total
		}
		if len(a.terms) > 0 {
			out = append(out, a)
		}
	}
	return out, nil
}

// goalAspects returns the goal's aspects (see Aspects) ready for matching,
// with the term weights they were prepared with.
func (e *Engine) goalAspects(ctx context.Context, goal string, explicit []string, mode search.Mode) (*weights, []aspect, error) {
	names, err := e.aspects(ctx, goal, explicit, mode)
	if err != nil {
		return nil, nil, err
	}
	w := newWeights(e.opt.Stats, e.an)
	aspects, err := e.prepare(ctx, w, names)
	if err != nil {
		return nil, nil, err
	}
	if len(aspects) == 0 {
		return nil, nil, fmt.Errorf("aspects %q have no words to look for: give aspects with words in them", names)
	}
	return w, aspects, nil
}

// byDesc orders by a score, highest first, keeping the order of equals.
func byDesc[T any](score func(T) float64) func(a, b T) int {
	return func(a, b T) int {
		switch x, y := score(a), score(b); {
		case x > y:
			return -1
		case x < y:
			return 1
		}
		return 0
	}
}

// coverage returns the weighted share of a's terms found in one unit.
func (a aspect) coverage(u unit) float64 {
	if a.total == 0 {
		return 0
	}
	got := 0.0
	for i, t := range a.terms {
		if u.terms.has(t) {
			got += a.weight[i]
		}
	}
	return got / a.total
}

// keyTerms are the terms of a that carry its topic: those in at most half
// of the index, or its rarest term when all are common.
func (a aspect) keyTerms(w *weights) []string {
	var out []string
	rarest, best := "", -1.0
	for _, t := range a.terms {
		if !w.indexed(t) {
			continue
		}
		if w.share(t) <= 0.5 {
			out = append(out, t)
		}
		if idf := w.idf(t); idf > best {
			rarest, best = t, idf
		}
	}
	if len(out) == 0 && rarest != "" {
		out = []string{rarest}
	}
	return out
}

// Aspects returns the aspects a goal is judged on: the explicit ones when
// given, else those ParseGoal finds. A goal with a single aspect ("VitePressの
// 設定方法を理解する") is expanded into the facets the index itself has for it:
// up to four section titles that contain the aspect's key words (サイト設定,
// デフォルトテーマの設定, フロントマター設定), page titles first.
func (e *Engine) Aspects(ctx context.Context, goal string, explicit []string) ([]string, error) {
	return e.aspects(ctx, goal, explicit, "")
}

// aspects is Aspects whose look-up of facets searches in mode ("" for the
// index's default).
func (e *Engine) aspects(ctx context.Context, goal string, explicit []string, mode search.Mode) ([]string, error) {
	p, err := ParseGoal(goal)
	if err != nil {
		return nil, err
	}
	if ex := nonEmpty(explicit); len(ex) > 0 {
		return ex, nil
	}
	if len(p.Aspects) != 1 || e.search == nil {
		return p.Aspects, nil
	}
	w := newWeights(e.opt.Stats, e.an)
	facets, err := e.facets(ctx, w, p.Aspects[0], mode)
	if err != nil {
		return nil, err
	}
	if len(facets) >= 2 {
		return facets, nil
	}
	return p.Aspects, nil
}

// maxFacets bounds how many facets a one-aspect goal expands into.
const maxFacets = 4

// facets finds section titles in the index that name a kind of the aspect,
// among the results of a search for it in mode.
func (e *Engine) facets(ctx context.Context, w *weights, name string, mode search.Mode) ([]string, error) {
	as, err := e.prepare(ctx, w, []string{name})
	if err != nil || len(as) == 0 {
		return nil, err
	}
	a := as[0]
	key := a.keyTerms(w)
	if len(key) == 0 {
		return nil, nil
	}
	resp, err := e.search.Search(ctx, search.Request{Query: name, K: 100, Mode: mode})
	if err != nil {
		return nil, fmt.Errorf("look up facets of %q: %w", name, err)
	}
	type facet struct {
		text    string
		level   int
		sources map[string]bool
		first   int
		sig     termSet
	}
	var segs []string
	for _, h := range resp.Hits {
		for _, seg := range h.Chunk.Heading {
			segs = append(segs, CleanHeading(seg))
		}
	}
	if err := w.load(ctx, segs...); err != nil {
		return nil, fmt.Errorf("term statistics: %w", err)
	}
	byText := map[string]*facet{}
	for rank, h := range resp.Hits {
		for level, seg := range h.Chunk.Heading {
			seg = CleanHeading(seg)
			terms := makeSet(e.an, seg)
			if len(terms) == 0 || len(terms) > 8 {
				continue
			}
			all := true
			for _, k := range key {
				if !terms.has(k) {
					all = false
					break
				}
			}
			if !all {
				continue
			}
			// A facet must add words of its own to the aspect's.
			sig := termSet{}
			for t := range terms {
				if !containsMatch(a.terms, t) && !isHiraganaTerm(t) && w.indexed(t) {
					sig[t] = struct{}{}
				}
			}
			if len(sig) == 0 {
				continue
			}
			f := byText[strings.ToLower(seg)]
			if f == nil {
				f = &facet{text: seg, level: level, sources: map[string]bool{}, first: rank, sig: sig}
				byText[strings.ToLower(seg)] = f
			}
			f.level = min(f.level, level)
			f.sources[h.Source.ID] = true
		}
	}
	// Page titles name facets best; section headings stand in when fewer
	// than two titles fit.
	titles := 0
	for _, f := range byText {
		if f.level == 0 {
			titles++
		}
	}
	maxLevel := 1
	if titles >= 2 {
		maxLevel = 0
	}
	list := make([]*facet, 0, len(byText))
	for _, f := range byText {
		if f.level <= maxLevel {
			list = append(list, f)
		}
	}
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.level != b.level {
			return a.level < b.level
		}
		if len(a.sources) != len(b.sources) {
			return len(a.sources) > len(b.sources)
		}
		return a.first < b.first
	})
	var out []string
	var sigs []termSet
next:
	for _, f := range list {
		for _, s := range sigs {
			if subset(s, f.sig) || subset(f.sig, s) {
				continue next // "フロントマターでの設定" after "フロントマター設定"
			}
		}
		sigs = append(sigs, f.sig)
		out = append(out, f.text)
		if len(out) == maxFacets {
			break
		}
	}
	return out, nil
}

func containsMatch(terms []string, t string) bool {
	for _, x := range terms {
		if termsMatch(x, t) {
			return true
		}
	}
	return false
}

func subset(a, b termSet) bool {
	for t := range a {
		if _, ok := b[t]; !ok {
			return false
		}
	}
	return true
}

func isHiraganaTerm(t string) bool {
	for _, r := range t {
		if !unicode.Is(unicode.Hiragana, r) {
			return false
		}
	}
	return true
}

// CleanHeading drops markup a heading may keep: badges, anchors, backticks.
func CleanHeading(s string) string {
	if i := strings.Index(s, " <"); i > 0 { // a badge: "useData <Badge text=composable />"
		s = s[:i]
	}
	if i := strings.Index(s, "{#"); i > 0 {
		s = s[:i]
	}
	return strings.TrimSpace(strings.Trim(strings.TrimSpace(s), "`"))
}

// Views renders hits in the JSON shape of `sagasu query --json`.
func Views(hits []doc.Hit) []search.ResultView {
	out := make([]search.ResultView, 0, len(hits))
	for _, h := range hits {
		out = append(out, search.View(h))
	}
	return out
}

// save writes a record to the cache, if there is one; a cache that cannot
// be written costs a warning, never the step itself.
func (e *Engine) save(kind agentcache.Kind, goal, query string, score *float64, summary string, data any) {
	if e.opt.Cache == nil {
		return
	}
	raw, err := json.Marshal(data)
	if err != nil {
		e.log.Warn("agent cache: record not saved", "kind", kind, "err", err)
		return
	}
	if _, err := e.opt.Cache.Save(agentcache.Record{Kind: kind, Goal: goal, Query: query, Score: score, Summary: summary, Data: raw}); err != nil {
		e.log.Warn("agent cache: record not saved", "kind", kind, "err", err)
	}
}

func ptr(f float64) *float64 { return &f }

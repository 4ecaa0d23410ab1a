// Package search answers queries over a store in three modes: keyword
// (BM25F, re-ranked by proximity), semantic (the vectors of an embedder)
// and hybrid (both lists fused by reciprocal rank fusion), with filters and
// optional diversity (MMR); each hit is a chunk with its source. It also
// finds a source by ID or URI and reads its original content or one of its
// sections.
package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/chunk"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/embed"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/bm25"
)

// Mode selects the retrieval method.
type Mode string

// Retrieval modes.
const (
	ModeKeyword  Mode = "keyword"
	ModeSemantic Mode = "semantic"
	ModeHybrid   Mode = "hybrid"
)

// DefaultK is the number of results when a request does not say.
const DefaultK = 10

// MaxK bounds k so a single request cannot ask for the whole index.
const MaxK = 1000

// Request is one search.
type Request struct {
	Query  string
	K      int  // results wanted; 0 means DefaultK
	Mode   Mode // "" picks the index's default: hybrid with an embedder, else keyword
	Filter store.Filter
	// MMR, when above 0, re-ranks hybrid and semantic results for diversity
	// with maximal marginal relevance; it is the weight of relevance against
	// novelty (0.7 is a good start). It needs stored vectors.
	MMR float64
	// PerSource is how many hits of one source come before the hits of
	// other sources: 0 means DefaultPerSource, a negative value no limit.
	// Unless it is negative, hits whose texts overlap or touch, in one
	// source, are also merged into one hit.
	PerSource int
}

// Response is the answer to a Request.
type Response struct {
	Query string
	Mode  Mode
	Took  time.Duration
	Hits  []doc.Hit
}

// Engine runs searches against one store.
type Engine struct {
	store       store.Store
	an          *analyze.Analyzer
	embedder    embed.Embedder
	fusion      Fusion
	defaultMode Mode

	paramsMu sync.Mutex
	params   *bm25.Params // the index's keyword scoring, once read

	// frameJa is questionWordsJa as the analyzer reads it, made at the
	// first Japanese query (it loads the Japanese dictionary).
	frameJaOnce sync.Once
	frameJa     []string

	// bg is the sample of the index's vectors that Relatedness measures
	// against, read at its first use.
	bgMu sync.Mutex
	bg   [][]float32
}

// Option configures an Engine.
type Option func(*Engine)

// WithEmbedder enables semantic and hybrid search with e, which must be the
// embedder the index is pinned to.
func WithEmbedder(e embed.Embedder) Option { return func(en *Engine) { en.embedder = e } }

// WithDefaultMode sets the mode of requests that name none.
func WithDefaultMode(m Mode) Option { return func(en *Engine) { en.defaultMode = m } }

// WithFusion sets how hybrid search fuses its lists.
func WithFusion(f Fusion) Option { return func(en *Engine) { en.fusion = f } }

// WithAnalyzer sets the analyzer that turns queries into keyword terms; it
// must be the one the index is pinned to (by default the store's own, when
// it says, else the default analyzer).
func WithAnalyzer(a *analyze.Analyzer) Option { return func(en *Engine) { en.an = a } }

// New returns an Engine over s.
func New(s store.Store, opts ...Option) *Engine {
	e := &Engine{store: s, fusion: DefaultFusion()}
	for _, o := range opts {
		o(e)
	}
	if e.an == nil {
		if a, ok := s.(analyzed); ok && a.Analyzer() != nil {
			e.an = a.Analyzer()
		} else {
			e.an = analyze.New(analyze.Options{})
		}
	}
	return e
}

// analyzed is a store that says which analyzer its keyword index is read
// with: the one it is pinned to, which may be older than this build's.
type analyzed interface {
	Analyzer() *analyze.Analyzer
}

// Analyzer returns the analyzer queries are turned into keyword terms with:
// the index's own.
func (e *Engine) Analyzer() *analyze.Analyzer { return e.an }

// Keyword ranks chunks by BM25F over the analysed terms of query, then
// re-ranks the best of them by how close together the query's terms occur
// (bm25.Rerank, with the parameters pinned in the index): the store takes
// terms, the engine owns the analysis.
func (e *Engine) Keyword(ctx context.Context, query string, k int, f store.Filter) ([]store.Scored, error) {
	scored, _, err := e.keyword(ctx, query, k, f)
	return scored, err
}

// keyword is Keyword that also returns the candidates' chunks the re-rank
// loaded (nil when it loaded none), so that Search need not load them again.
func (e *Engine) keyword(ctx context.Context, query string, k int, f store.Filter) ([]store.Scored, []doc.Hit, error) {
	terms := e.contentTerms(e.an.QueryTerms(query))
	p, err := e.scoring(ctx)
	if err != nil {
		return nil, nil, err
	}
	if (p.Prox == 0 && p.HeadProx == 0) || p.ProxTop < 2 || len(terms) < 2 {
		scored, err := e.store.KeywordSearch(ctx, terms, k, f)
		return scored, nil, err
	}
	scored, err := e.store.KeywordSearch(ctx, terms, max(k, p.ProxTop), f)
	if err != nil || len(scored) < 2 {
		return scored, nil, err
	}
	n := min(p.ProxTop, len(scored))
	ids := make([]int64, n)
	for i := range n {
		ids[i] = scored[i].ChunkID
	}
	hits, err := e.store.Hits(ctx, ids)
	if err != nil {
		return nil, nil, fmt.Errorf("keyword search: load candidates: %w", err)
	}
	type texts struct{ head, all []string }
	text := make(map[int64]texts, len(hits))
	for _, h := range hits {
		// Analysing a chunk's text costs tens of microseconds; its title
		// and headings, a few. Each is analysed only when its weight is set,
		// and Japanese in it is searched for the query's terms rather than
		// analysed with the dictionary (TermsNear).
		var t texts
		if p.Prox > 0 {
			t.all = e.an.TermsNear(doc.ContextText(h.Source.Title, h.Chunk), terms)
		}
		if p.HeadProx > 0 {
			t.head = e.an.TermsNear(doc.ContextText(h.Source.Title, doc.Chunk{Heading: h.Chunk.Heading}), terms)
		}
		text[h.Chunk.ID] = t
	}
	scored = bm25.Rerank(p, terms, scored, func(i int) ([]string, []string) {
		t := text[scored[i].ChunkID]
		return t.head, t.all
	})
	return scored[:min(k, len(scored))], hits, nil
}

// KeywordTerms returns the terms a keyword search for query looks up: its
// analysed terms without the question words (see contentTerms).
func (e *Engine) KeywordTerms(query string) []string {
	return e.contentTerms(e.an.QueryTerms(query))
}

// questionWords frame a question without saying what it is about ("how do
// I …", "what is …"). The index keeps them, as the analyzer is pinned, but
// in a query they match code samples and chatty prose rather than the page
// that answers, so keyword search drops them unless nothing else is left.
const questionWords = "how do does did i my me we you your what can should would could when where why who"

// questionWordsJa are the content words of Japanese question and request
// endings ("〜する方法", "〜を教えて", "〜の仕方", "〜が知りたい", "〜したいと思う");
// their particles and auxiliaries ("とは", "について", "ください", "たい") make
// no terms at all with an analyzer that reads Japanese as words.
const questionWordsJa = "方法 やり方 仕方 教える 知る 分かる 良い 欲しい 思う"

// contentTerms is terms without the question words.
func (e *Engine) contentTerms(terms []string) []string {
	frame := e.an.QueryTerms(questionWords)
	if e.an.Japanese() && slices.ContainsFunc(terms, isCJKTerm) {
		e.frameJaOnce.Do(func() { e.frameJa = e.an.QueryTerms(questionWordsJa) })
		frame = append(frame, e.frameJa...)
	}
	out := make([]string, 0, len(terms))
	for _, t := range terms {
		if !slices.Contains(frame, t) {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return terms
	}
	return out
}

// isCJKTerm reports whether a term starts with a CJK character (every
// character of a CJK term is one).
func isCJKTerm(t string) bool {
	r, _ := utf8.DecodeRuneInString(t)
	return r >= 0x2E80 && (unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul))
}

// scoring returns the keyword scoring parameters pinned in the index
// (bm25.DefaultParams for a store that pins none).
func (e *Engine) scoring(ctx context.Context) (bm25.Params, error) {
	e.paramsMu.Lock()
	defer e.paramsMu.Unlock()
	if e.params != nil {
		return *e.params, nil
	}
	v, err := e.store.Meta(ctx, bm25.MetaKey)
	if err != nil {
		return bm25.Params{}, fmt.Errorf("keyword search: read the index's scoring parameters: %w", err)
	}
	if v == "" {
		// Nothing pinned yet (an empty index, or a store that keeps no
		// meta): use the defaults without caching them.
		return bm25.DefaultParams(), nil
	}
	p, err := bm25.ParseParams(v)
	if err != nil {
		return bm25.Params{}, fmt.Errorf("keyword search: %w: a newer sagasu wrote the index: upgrade sagasu", err)
	}
	e.params = &p
	return p, nil
}

// Embedder returns the engine's embedder, nil when it has none.
func (e *Engine) Embedder() embed.Embedder { return e.embedder }

// DefaultMode is the mode set with WithDefaultMode, else hybrid when the
// engine has an embedder and keyword otherwise.
func (e *Engine) DefaultMode() Mode {
	if e.defaultMode != "" {
		return e.defaultMode
	}
	if e.embedder != nil {
		return ModeHybrid
	}
	return ModeKeyword
}

// defaultModeFor is DefaultMode for query, except that a question in a
// language the index's embedder reads poorly (as the indexer measured it,
// embed.FitMetaKey) is searched by keyword: its vectors would only push
// the keyword hits down.
func (e *Engine) defaultModeFor(ctx context.Context, query string) (Mode, error) {
	mode := e.DefaultMode()
	if mode != ModeHybrid || e.defaultMode != "" {
		return mode, nil
	}
	raw, err := e.store.Meta(ctx, embed.FitMetaKey)
	if err != nil || raw == "" {
		return mode, err
	}
	var fit embed.Fit
	if json.Unmarshal([]byte(raw), &fit) != nil {
		return mode, nil
	}
	inf := e.embedder.Info()
	if fit.Model != inf.Driver+"/"+inf.Model {
		return mode, nil // measured for another model
	}
	lang := embed.Language(query)
	if lf, ok := fit.Langs[lang]; ok && lf.Poor(lang) {
		return ModeKeyword, nil
	}
	return mode, nil
}

// Store returns the engine's store.
func (e *Engine) Store() store.Store { return e.store }

// ErrEmptyQuery is returned for a query with no text (it is ErrBadRequest).
var ErrEmptyQuery = kindf(ErrBadRequest, "empty query: give the words to search for")

// Search runs req.
func (e *Engine) Search(ctx context.Context, req Request) (Response, error) {
	start := time.Now()
	if strings.TrimSpace(req.Query) == "" {
		return Response{}, ErrEmptyQuery
	}
	k := req.K
	if k == 0 {
		k = DefaultK
	}
	if k < 0 || k > MaxK {
		return Response{}, kindf(ErrBadRequest, "k = %d is out of range: use 1 to %d", req.K, MaxK)
	}
	mode := req.Mode
	if mode == "" {
		var err error
		if mode, err = e.defaultModeFor(ctx, req.Query); err != nil {
			return Response{}, err
		}
	}
	perSource := req.PerSource
	if perSource == 0 {
		perSource = DefaultPerSource
	}
	want := k
	if perSource > 0 {
		k = candidates(k)
	}
	var hits []doc.Hit
	for {
		var scored []store.Scored
		var loaded []doc.Hit
		var err error
		switch mode {
		case ModeKeyword:
			scored, loaded, err = e.keyword(ctx, req.Query, k, req.Filter)
		case ModeSemantic, ModeHybrid:
			if e.embedder == nil {
				return Response{}, kindf(ErrNoEmbedder, "mode %q needs an embedder, and this index has none: index with --embedder, or use --mode keyword", mode)
			}
			scored, err = e.vectorOrHybrid(ctx, req, mode, k)
		default:
			return Response{}, kindf(ErrBadRequest, "unknown mode %q: use keyword, semantic or hybrid", mode)
		}
		if err != nil {
			return Response{}, fmt.Errorf("search %q: %w", req.Query, err)
		}
		if hits, err = e.hits(ctx, scored, loaded); err != nil {
			return Response{}, err
		}
		if perSource <= 0 {
			break
		}
		var short bool
		hits, short = vary(hits, perSource, want, e.spanText(ctx))
		// A ranking crowded by one source looks deeper for others, so
		// that the first k hits are the same whatever k is.
		if !short || len(scored) < k || k >= MaxK {
			break
		}
		k = min(MaxK, 4*k)
	}
	return Response{Query: req.Query, Mode: mode, Took: time.Since(start), Hits: hits}, nil
}

// spanText reads spans of sources' original content for merging hits,
// each source once.
func (e *Engine) spanText(ctx context.Context) spanText {
	content := map[string]string{}
	return func(id string, start, end int) (string, bool) {
		c, ok := content[id]
		if !ok {
			var err error
			if c, err = e.store.Content(ctx, id); err != nil {
				c = ""
			}
			content[id] = c
		}
		if start < 0 || end > len(c) || start > end {
			return "", false
		}
		return c[start:end], true
	}
}

// hits loads the chunks of scored results and attaches their scores.
// Chunks already in loaded are not read again. A chunk the store no longer
// holds (deleted meanwhile) is left out, as Store.Hits leaves it out.
func (e *Engine) hits(ctx context.Context, scored []store.Scored, loaded []doc.Hit) ([]doc.Hit, error) {
	have := make(map[int64]doc.Hit, len(loaded))
	for _, h := range loaded {
		have[h.Chunk.ID] = h
	}
	var ids []int64
	for _, s := range scored {
		if _, ok := have[s.ChunkID]; !ok {
			ids = append(ids, s.ChunkID)
		}
	}
	if len(ids) > 0 {
		more, err := e.store.Hits(ctx, ids)
		if err != nil {
			return nil, fmt.Errorf("load results: %w", err)
		}
		for _, h := range more {
			have[h.Chunk.ID] = h
		}
	}
	hits := make([]doc.Hit, 0, len(scored))
	for _, s := range scored {
		if h, ok := have[s.ChunkID]; ok {
			h.Score = s.Score
			hits = append(hits, h)
		}
	}
	return hits, nil
}

// Resolve finds a source by ID, URI, or a unique URI suffix ("routing.md").
func (e *Engine) Resolve(ctx context.Context, ref string) (doc.Source, error) {
	if ref == "" {
		return doc.Source{}, kindf(ErrBadRequest, "no source given: pass a source ID or URI (see `sagasu list`)")
	}
	if src, err := e.store.Source(ctx, ref); err == nil {
		return src, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return doc.Source{}, err
	}
	if src, err := e.store.SourceByURI(ctx, ref); err == nil {
		return src, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return doc.Source{}, err
	}
	clean := strings.TrimPrefix(ref, "./")
	if src, err := e.store.SourceByURI(ctx, clean); err == nil {
		return src, nil
	}
	all, err := e.store.Sources(ctx, store.ListOptions{})
	if err != nil {
		return doc.Source{}, err
	}
	var found []doc.Source
	for _, s := range all {
		if strings.HasSuffix(s.URI, "/"+clean) {
			found = append(found, s)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return doc.Source{}, fmt.Errorf("source %q: %w: pass an ID or URI from `sagasu list`", ref, store.ErrNotFound)
	}
	names := make([]string, 0, 5)
	for i, s := range found {
		if i == 5 {
			names = append(names, "...")
			break
		}
		names = append(names, s.URI)
	}
	return doc.Source{}, kindf(ErrAmbiguous, "source %q is ambiguous, it matches %s: give the full URI", ref, strings.Join(names, ", "))
}

// Original is a source's content, or the part of it one section spans.
type Original struct {
	Source  doc.Source
	Section string // heading path of the section, "" for the whole source
	Content string
	// StartLine and EndLine give the span within the source (1-based).
	StartLine, EndLine int
}

// Get returns the original content of the source ref names; with a non-empty
// section, only that section (with its subsections). section matches a
// heading's text or a heading path such as "Routing > Dynamic Routes",
// case-insensitively.
func (e *Engine) Get(ctx context.Context, ref, section string) (Original, error) {
	src, err := e.Resolve(ctx, ref)
	if err != nil {
		return Original{}, err
	}
	content, err := e.store.Content(ctx, src.ID)
	if err != nil {
		return Original{}, fmt.Errorf("read %q: %w", src.URI, err)
	}
	lines := strings.Count(content, "\n") + 1
	if section == "" {
		return Original{Source: src, Content: content, StartLine: 1, EndLine: lines}, nil
	}
	secs := sections(content, src.Format)
	if len(secs) == 0 {
		return Original{}, kindf(store.ErrNotFound, "%s has no sections (only markdown sources do); use `get` without --section", src.URI)
	}
	path, from, to, ok := findSection(secs, section)
	if !ok {
		names := make([]string, len(secs))
		for i, sec := range secs {
			names[i] = doc.JoinHeading(sec.Heading)
		}
		return Original{}, kindf(store.ErrNotFound, "%s has no section %q; its sections are: %s", src.URI, section, strings.Join(names, "; "))
	}
	out := Original{Source: src, Section: path, Content: content[from:to]}
	out.StartLine = strings.Count(content[:from], "\n") + 1
	out.EndLine = out.StartLine + strings.Count(strings.TrimSuffix(out.Content, "\n"), "\n")
	return out, nil
}

// sections returns the heading structure of markdown content.
func sections(content string, f doc.Format) []chunk.Section {
	if f != doc.FormatMarkdown {
		return nil
	}
	return chunk.Sections(content)
}

// findSection returns the first section whose heading path ends with want
// ("Dynamic Routes" or "Routing > Dynamic Routes", case-insensitive).
func findSection(secs []chunk.Section, want string) (path string, from, to int, ok bool) {
	wantParts := splitPath(want)
	if len(wantParts) == 0 {
		return "", 0, 0, false
	}
	for _, sec := range secs {
		h := sec.Heading
		if len(h) < len(wantParts) {
			continue
		}
		match := true
		for i, w := range wantParts {
			if strings.ToLower(strings.TrimSpace(h[len(h)-len(wantParts)+i])) != w {
				match = false
				break
			}
		}
		if match {
			return doc.JoinHeading(h), sec.Start, sec.End, true
		}
	}
	return "", 0, 0, false
}

func splitPath(s string) []string {
	var parts []string
	for _, p := range strings.Split(s, ">") {
		if p = strings.TrimSpace(p); p != "" {
			parts = append(parts, strings.ToLower(p))
		}
	}
	return parts
}

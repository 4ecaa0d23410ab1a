package react

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/clip"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// Tool names the agent calls (and the model sees).
const (
	ToolSearch   = "search_knowledge_base"
	ToolGet      = "get_document"
	ToolEvaluate = "evaluate"
)

// Errors a caller can test for.
var (
	ErrEmptyQuestion = errors.New("the question is empty: ask something, e.g. sagasu ask \"how do I deploy?\"")
	ErrEmptyIndex    = errors.New("the index has no documents: index some first (sagasu index PATH)")
)

// Searcher runs one search; *search.Engine is one.
type Searcher interface {
	Search(ctx context.Context, req search.Request) (search.Response, error)
}

// Result is an answered question.
type Result struct {
	Question   string        `json:"question"`
	Answer     string        `json:"answer"`
	Citations  []Citation    `json:"citations"`
	Claims     []Claim       `json:"claims"`
	Trace      []graph.Event `json:"trace"`
	Reflection Reflection    `json:"reflection"`
	Mode       string        `json:"mode"` // offline or llm
	Model      string        `json:"model,omitempty"`
	Turns      int           `json:"turns"`
	Usage      graph.Tokens  `json:"usage"`
	// Stopped says why a guard or limit ended the run early ("" when it
	// finished on its own); the answer is then the best one so far.
	Stopped string `json:"stopped,omitempty"`
	TookMs  int64  `json:"tookMs"`
}

// Reflection is the check of a draft before it becomes the answer.
type Reflection struct {
	Accuracy  Verdict `json:"accuracy"`
	Relevance Verdict `json:"relevance"`
	Style     Verdict `json:"style"`
	// Unsupported are the draft's sentences that no cited passage backs;
	// they were revised or dropped.
	Unsupported []string `json:"unsupported"`
	Revised     bool     `json:"revised"`
}

// Verdict is one criterion of the reflection.
type Verdict struct {
	OK    bool    `json:"ok"`
	Score float64 `json:"score"`
	Note  string  `json:"note"`
}

// Options configure an Agent.
type Options struct {
	// K is how many results one search returns (default 8).
	K int
	// Mode is the retrieval mode ("" for the index's default).
	Mode search.Mode
	// Style is the answer's style; the zero value answers in the question's
	// language, politely (です・ます) in Japanese.
	Style Style
	// OnEvent receives each trace event as it happens.
	OnEvent func(graph.Event)
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Style is how the answer should read.
type Style struct {
	// Language of the answer: "" (the question's), "en" or "ja".
	Language Lang
	// Casual turns off the polite です・ます check for Japanese answers.
	Casual bool
}

// Agent answers questions from a knowledge base.
type Agent struct {
	search Searcher
	an     *analyze.Analyzer
	opt    Options
	llm    *LLMOptions // nil: offline
}

// New returns an agent over s.
func New(s Searcher, opt Options) *Agent {
	if opt.K <= 0 {
		opt.K = 8
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	an := analyze.New(analyze.Options{})
	if x, ok := s.(interface{ Analyzer() *analyze.Analyzer }); ok && x.Analyzer() != nil {
		an = x.Analyzer() // the index's own
	}
	return &Agent{search: s, an: an, opt: opt}
}

// run is the record of one question being answered.
type run struct {
	a        *Agent
	res      *Result
	passages Passages
	step     int
}

func (r *run) emit(ev graph.Event) {
	r.step++
	ev.Step = r.step
	if ev.Time.IsZero() {
		ev.Time = r.a.opt.Now()
	}
	ev.Seq = int64(len(r.res.Trace) + 1)
	r.res.Trace = append(r.res.Trace, ev)
	if r.a.opt.OnEvent != nil {
		r.a.opt.OnEvent(ev)
	}
}

// searchTool runs search_knowledge_base and records it.
func (r *run) searchTool(ctx context.Context, query string, k int, mode search.Mode) ([]doc.Hit, string, error) {
	if d, ok := r.a.search.(interface{ DefaultMode() search.Mode }); ok && mode == "" {
		mode = d.DefaultMode() // the trace says how it searched
	}
	args, _ := json.Marshal(map[string]any{"query": query, "k": k, "mode": mode})
	r.emit(graph.Event{Type: graph.TypeAction, Tool: ToolSearch, Arguments: args})
	start := time.Now()
	resp, err := r.a.search.Search(ctx, search.Request{Query: query, K: k, Mode: mode})
	lat := time.Since(start).Milliseconds()
	ok := err == nil
	if err != nil {
		r.emit(graph.Event{Type: graph.TypeObservation, Tool: ToolSearch, Observation: "ERROR: " + err.Error(), OK: &ok, LatencyMs: lat})
		return nil, "", err
	}
	ns := r.passages.Add(resp.Hits...)
	obs := observeHits(resp.Hits, ns)
	r.emit(graph.Event{Type: graph.TypeObservation, Tool: ToolSearch, Observation: obs, OK: &ok, LatencyMs: lat})
	return resp.Hits, obs, nil
}

// observeHits renders search results for the trace and for a model: each
// with its passage number, source, heading and text.
func observeHits(hits []doc.Hit, ns []int) string {
	if len(hits) == 0 {
		return "no results"
	}
	var b strings.Builder
	for i, h := range hits {
		fmt.Fprintf(&b, "[%d] %s", ns[i], h.Source.URI)
		if hp := h.Chunk.HeadingPath(); hp != "" {
			fmt.Fprintf(&b, " — %s", hp)
		}
		fmt.Fprintf(&b, " (lines %d-%d)\n%s\n\n", h.Chunk.StartLine, h.Chunk.EndLine, clip.Runes(strings.TrimSpace(h.Chunk.Text), 1200))
	}
	return strings.TrimRight(b.String(), "\n")
}

// Answer answers question without a language model: it searches, picks the
// sentences of the results that answer the question (extractive), and
// reflects on the draft with the lexical claim checker.
func (a *Agent) Answer(ctx context.Context, question string) (*Result, error) {
	question = strings.TrimSpace(question)
	if question == "" {
		return nil, ErrEmptyQuestion
	}
	start := time.Now()
	r := &run{a: a, res: &Result{Question: question, Mode: "offline"}}
	lang := a.lang(question)
	r.emit(graph.Event{Type: graph.TypeThought, Text: "Search the knowledge base for the question's words."})
	hits, _, err := r.searchTool(ctx, question, a.opt.K, a.opt.Mode)
	if err != nil {
		return r.res, fmt.Errorf("search the knowledge base: %w", err)
	}
	r.res.Turns = 1
	if len(hits) == 0 {
		if empty, err := a.indexEmpty(ctx); err == nil && empty {
			return r.res, ErrEmptyIndex
		}
	}
	xo := a.extractOptions(ctx, question)
	draft := Extract(a.an, question, hits, &r.passages, xo)
	if draft == "" && len(hits) > 0 {
		// The question's words matched chunks but no sentence: try the
		// content words alone.
		if q := a.contentQuery(question); q != "" && q != question {
			r.emit(graph.Event{Type: graph.TypeThought, Text: "No sentence of the results answers it; search again with the topic words only."})
			more, _, err := r.searchTool(ctx, q, a.opt.K, a.opt.Mode)
			if err != nil {
				return r.res, fmt.Errorf("search the knowledge base: %w", err)
			}
			r.res.Turns++
			hits = append(hits, more...)
			draft = Extract(a.an, question, hits, &r.passages, xo)
		}
	}
	if draft == "" {
		r.finish(notFound(lang), nil, Reflection{Relevance: Verdict{Note: "nothing in the index answers the question"}})
		r.res.TookMs = time.Since(start).Milliseconds()
		return r.res, nil
	}
	r.emit(graph.Event{Type: graph.TypeThought, Text: "Draft: " + draft})
	final, refl := a.reflect(question, draft, &r.passages, lang)
	r.emit(graph.Event{Type: graph.TypeReflection, Text: refl.summary()})
	r.finish(final, a.Checker().Check(final, &r.passages), refl)
	r.res.TookMs = time.Since(start).Milliseconds()
	return r.res, nil
}

// byMeaning is a searcher that compares texts with the index's chunks by
// meaning: *search.Engine over an index with an embedder.
type byMeaning interface {
	ComparesMeaning() bool
	Relatedness(ctx context.Context, text string, ids []int64) (map[int64]float64, error)
}

// extractOptions ranks the answer's sentences by meaning too when the
// index has an embedder (each sentence by how close its chunk's stored
// vector is to the question); by words alone otherwise.
func (a *Agent) extractOptions(ctx context.Context, question string) ExtractOptions {
	m, ok := a.search.(byMeaning)
	if !ok || !m.ComparesMeaning() {
		return ExtractOptions{}
	}
	return ExtractOptions{
		Related: func(ids []int64) (map[int64]float64, error) { return m.Relatedness(ctx, question, ids) },
	}
}

// indexEmpty reports whether the index holds no documents, when the
// searcher can tell.
func (a *Agent) indexEmpty(ctx context.Context) (bool, error) {
	e, ok := a.search.(interface{ Store() store.Store })
	if !ok {
		return false, nil
	}
	st, err := e.Store().Stats(ctx)
	return st.Sources == 0, err
}

// Checker is the agent's claim checker.
func (a *Agent) Checker() Checker { return Checker{An: a.an} }

// contentQuery is the question without its question words.
func (a *Agent) contentQuery(question string) string {
	var kept []string
	for _, w := range strings.Fields(question) {
		ts := a.an.Terms(w)
		if len(ts) == 1 && questionWords[ts[0]] {
			continue
		}
		kept = append(kept, w)
	}
	return strings.Join(kept, " ")
}

// lang is the language answers should be in.
func (a *Agent) lang(question string) Lang {
	if a.opt.Style.Language != "" {
		return a.opt.Style.Language
	}
	return detectLang(question)
}

// finish sets the answer and its citations and emits it.
func (r *run) finish(answer string, claims []Claim, refl Reflection) {
	r.res.Answer = answer
	if answer == notFound(LangJapanese) || answer == notFound(LangEnglish) {
		claims = nil // saying nothing was found asserts nothing
	}
	r.res.Claims = claims
	if r.res.Claims == nil {
		r.res.Claims = []Claim{}
	}
	r.res.Reflection = refl
	if r.res.Reflection.Unsupported == nil {
		r.res.Reflection.Unsupported = []string{}
	}
	r.res.Citations = citations(answer, claims, &r.passages)
	r.emit(graph.Event{Type: graph.TypeAnswer, Text: answer})
}

// citations lists the passages an answer cites, with the quote that best
// supports the sentences citing each.
func citations(answer string, claims []Claim, ps *Passages) []Citation {
	out := []Citation{}
	for _, n := range citedIn(answer) {
		h, ok := ps.Get(n)
		if !ok {
			continue
		}
		quote := ""
		for _, c := range claims {
			if q, ok := c.quotes[n]; ok && q != "" {
				quote = q
				break
			}
		}
		if quote == "" {
			quote = clip.Runes(strings.TrimSpace(h.Chunk.Text), 300)
		}
		out = append(out, citation(n, h, quote))
	}
	return out
}

// notFound is the answer when the index has nothing on the question.
func notFound(lang Lang) string {
	if lang == LangJapanese {
		return "ナレッジベースには、この質問に答える情報が見つかりませんでした。"
	}
	return "The knowledge base has nothing that answers this question."
}

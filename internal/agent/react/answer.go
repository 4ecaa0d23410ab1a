package react

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/clip"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// Tool names the agent calls (and the model sees): the toolset's
// operations, through tools.Functions.
const (
	ToolSearch   = tools.NameQuery
	ToolGet      = tools.NameGet
	ToolEvaluate = tools.NameEvaluate
)

// Errors a caller can test for.
var (
	ErrEmptyQuestion = errors.New("the question is empty: ask something, e.g. sagasu ask \"how do I deploy?\"")
	ErrEmptyIndex    = errors.New("the index has no documents: index some first (sagasu index PATH)")
)

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
	// NotFound is set when the answer says the knowledge base does not
	// answer the question.
	NotFound bool `json:"notFound,omitempty"`
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
	// Log keeps each run's events, its trace and checkpoints (nil: in
	// memory).
	Log graph.Log
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
	fns *tools.Functions
	an  *analyze.Analyzer
	opt Options
	llm *LLMOptions // nil: offline
	g   *graphs
	// dfs remembers how many chunks hold a term (docFreq).
	dfs sync.Map
}

// New returns an agent that reads the knowledge base through fns, the
// toolset's functions (sagasu_query, sagasu_get, sagasu_evaluate): the
// operations, schemas and checks every other face uses.
func New(fns *tools.Functions, opt Options) *Agent {
	if opt.K <= 0 {
		opt.K = 8
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	an := analyze.New(analyze.Options{})
	if fns != nil {
		if x := fns.Analyzer(); x != nil {
			an = x // the index's own
		}
	}
	return &Agent{fns: fns, an: an, opt: opt, g: &graphs{mem: graph.NewMemLog()}}
}

// Checker is the agent's claim checker.
func (a *Agent) Checker() Checker {
	c := Checker{An: a.an}
	if a.fns != nil {
		c.Common = a.commonTerm
	}
	return c
}

// commonTerm reports a term held by CommonShare of the index's chunks or
// more; not when the index cannot say.
func (a *Agent) commonTerm(t string) bool {
	df, n, ok := a.docFreq(t)
	return ok && float64(df) >= CommonShare*float64(n)
}

// chunksWith returns how many chunks hold term t, or the largest int when
// the index cannot say (carried's df: then every word ties, and the
// questions' order decides).
func (a *Agent) chunksWith(t string) int {
	if df, _, ok := a.docFreq(t); ok {
		return df
	}
	return math.MaxInt
}

// docFreq returns how many of the index's n chunks hold term t,
// remembered for the agent's life; ok is false when the index cannot say.
func (a *Agent) docFreq(t string) (df, n int, ok bool) {
	type count struct{ df, n int }
	if v, ok := a.dfs.Load(t); ok {
		c := v.(count)
		return c.df, c.n, true
	}
	if a.fns == nil {
		return 0, 0, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	dfs, n, err := a.fns.DocFreq(ctx, []string{t})
	if err != nil || n == 0 {
		return 0, 0, false
	}
	a.dfs.Store(t, count{dfs[t], n})
	return dfs[t], n, true
}

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

// result fills res with the answer, its claims, reflection and citations.
func (a *Agent) result(res *Result, answer string, refl Reflection, ps *Passages) {
	answer, ps = renumber(answer, ps)
	res.Answer = answer
	claims := a.Checker().Check(answer, ps)
	a.Checker().About(res.Question, claims)
	if answer == notFound(LangJapanese) || answer == notFound(LangEnglish) {
		claims = nil // saying nothing was found asserts nothing
		res.NotFound = true
	}
	res.Claims = claims
	if res.Claims == nil {
		res.Claims = []Claim{}
	}
	res.Reflection = refl
	if res.Reflection.Unsupported == nil {
		res.Reflection.Unsupported = []string{}
	}
	res.Citations = citations(answer, claims, ps)
}

// traced reports whether an event belongs in a Result's trace: what the
// agent did, not the runner's bookkeeping.
func traced(ev graph.Event) bool {
	switch ev.Type {
	case graph.TypeCheckpoint, graph.TypeOnce, graph.TypeOutcome, graph.TypeProgress:
		return false
	}
	return true
}

// observer collects a run's trace into res and passes each step on.
func (a *Agent) observer(res *Result, more func(graph.Event)) graph.RunOption {
	return graph.Observe(func(ev graph.Event) {
		if !traced(ev) {
			return
		}
		res.Trace = append(res.Trace, ev)
		if a.opt.OnEvent != nil {
			a.opt.OnEvent(ev)
		}
		if more != nil {
			more(ev)
		}
	})
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

// notMentioned is the answer when the question names what the index never
// mentions.
func notMentioned(lang Lang, names []string) string {
	if lang == LangJapanese {
		return "ナレッジベースには " + strings.Join(names, "、") + " についての記述がありません。"
	}
	return "The knowledge base does not mention " + strings.Join(names, " or ") + "."
}

// notFound is the answer when the index has nothing on the question.
func notFound(lang Lang) string {
	if lang == LangJapanese {
		return "ナレッジベースには、この質問に答える情報が見つかりませんでした。"
	}
	return "The knowledge base has nothing that answers this question."
}

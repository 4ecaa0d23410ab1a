package react

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/graph"
)

// The offline answerer runs on the graph runtime like the model's ReAct
// loop: its searches are actions of the toolset's sagasu_query, every step
// is in the run's log with its real step number, and the run is bounded by
// limits.
//
//	START → search → draft ─┬─ again → search (once: the question's topic words)
//	                        └─ settle → END

// Node names of the offline graph.
const (
	nodeSearch = "search"
	nodeDraft  = "draft"
)

// offline is the offline run's state.
type offline struct {
	Question string `json:"question"`
	Lang     Lang   `json:"lang"`
	// Context are the topic words a follow-up carries from its
	// conversation; they are searched with the question.
	Context string `json:"context,omitempty"`
	// Query is what the next search looks for; Retried is set once the
	// topic words were searched.
	Query   string `json:"query"`
	Retried bool   `json:"retried,omitempty"`
	// Hits are the passages in number order; Found are the searches'
	// results in the order they came, which the answer is drawn from, as
	// passage numbers (a checkpoint does not hold each passage twice).
	Hits  Passages `json:"hits"`
	Found []int    `json:"found"`
	Draft string   `json:"draft"`
	// Absent are names the question uses that the knowledge base never
	// mentions, when that is why nothing answers.
	Absent []string `json:"absent,omitempty"`
	Turns  int      `json:"turns"`
	// Answer and Reflection are the checked answer.
	Answer     string     `json:"answer"`
	Reflection Reflection `json:"reflection"`
}

// Clone gives each node its own lists (graph.Cloner).
func (s offline) Clone() offline {
	s.Hits, s.Found, s.Absent = s.Hits.Clone(), slices.Clone(s.Found), slices.Clone(s.Absent)
	return s
}

// passages are the run's passages; a node adds to its own state's.
func (s *offline) passages() *Passages { return &s.Hits }

// found is the searches' results in the order they came.
func (s *offline) found() []doc.Hit { return s.Hits.Hits(s.Found) }

// offlineLimits bound an offline run: two searches and three nodes each.
var offlineLimits = graph.Limits{MaxSteps: 8, MaxToolCalls: 4, MaxDuration: time.Minute}

func (a *Agent) offlineGraph() (*graph.Compiled[offline], error) {
	g := graph.New[offline]()
	g.AddNode(nodeSearch, a.searchNode)
	g.AddNode(nodeDraft, a.draftNode)
	g.AddNode(nodeSettle, a.checkNode)
	g.RegisterBranch("after_draft", func(s offline) string {
		if s.Draft == "" && s.Query != "" {
			return "again"
		}
		return "settle"
	})
	g.AddEdge(graph.START, nodeSearch)
	g.AddEdge(nodeSearch, nodeDraft)
	g.AddConditionalEdges(nodeDraft, "after_draft", map[string]string{"again": nodeSearch, "settle": nodeSettle})
	g.AddEdge(nodeSettle, graph.END)
	return g.Compile(a.log(), graph.WithLimits(offlineLimits))
}

// Answer answers question without a language model: it searches, picks the
// sentences of the results that answer the question (extractive), and
// reflects on the draft with the lexical claim checker.
func (a *Agent) Answer(ctx context.Context, question string) (*Result, error) {
	return a.answer(ctx, question, nil, nil)
}

// answer is Answer after a conversation so far: a follow-up that refers
// back to it is searched with the topic words it refers to.
func (a *Agent) answer(ctx context.Context, question string, history []Turn, onEvent func(graph.Event)) (*Result, error) {
	question = strings.TrimSpace(question)
	if question == "" {
		return nil, ErrEmptyQuestion
	}
	start := time.Now()
	res := &Result{Question: question, Mode: "offline"}
	g, err := a.offlineGraphOnce()
	if err != nil {
		return nil, fmt.Errorf("build the offline graph: %w", err)
	}
	run := a.runID()
	carry := carried(a.an, question, history, a.chunksWith)
	final, out := g.Invoke(ctx, run, offline{Question: question, Lang: a.lang(question), Context: carry, Query: searchedAs(question, carry)}, a.observer(res, onEvent))
	a.ended(run)
	res.Turns, res.Usage = final.Turns, out.Tokens
	switch {
	case errors.Is(out.Err, ErrEmptyIndex):
		return res, ErrEmptyIndex
	case out.Status != graph.Success:
		return res, fmt.Errorf("answer offline: %w", out.Err)
	}
	a.result(res, final.Answer, final.Reflection, final.passages())
	if final.Draft == "" {
		res.NotFound, res.Claims = true, []Claim{} // saying nothing was found asserts nothing
	}
	res.TookMs = time.Since(start).Milliseconds()
	return res, nil
}

// searchNode searches for the question (or, the second time, its topic
// words) through sagasu_query.
func (a *Agent) searchNode(ctx context.Context, rc *graph.RunContext, s offline) (offline, error) {
	why := "Search the knowledge base for the question's words."
	if s.Context != "" && !s.Retried {
		why = fmt.Sprintf("The question refers back to the conversation: search for its words with the topic it refers to (%s).", s.Context)
	}
	if s.Retried {
		why = "No sentence of the results answers it; search again with the topic words only."
	}
	if err := rc.Trace(graph.TypeThought, why); err != nil {
		return s, err
	}
	ps := s.passages()
	c, err := a.toolCall(ctx, rc, ps, a.searchCall(fmt.Sprintf("search-%d", s.Turns+1), s.Query, a.opt.K))
	if err != nil {
		return s, err
	}
	if !c.OK {
		return s, fmt.Errorf("search the knowledge base: %w", c.Err)
	}
	s.Turns++
	s.Found = append(s.Found, ps.Add(c.Hits...)...)
	if len(s.Found) == 0 {
		if empty, err := a.fns.Empty(ctx); err == nil && empty {
			return s, ErrEmptyIndex
		}
	}
	s.Query = ""
	return s, rc.Progress(fmt.Sprintf("%d passages", s.Hits.Len()))
}

// draftNode picks the sentences that answer the question; when the
// question's words matched chunks but no sentence, it asks for one more
// search with the topic words alone.
func (a *Agent) draftNode(ctx context.Context, rc *graph.RunContext, s offline) (offline, error) {
	opt := a.extractOptions(ctx, searchedAs(s.Question, s.Context))
	opt.Context = s.Context
	s.Draft, s.Absent = extract(a.an, s.Question, s.found(), s.passages(), opt)
	if s.Draft == "" && len(s.Found) > 0 && !s.Retried && len(s.Absent) == 0 {
		if q := a.contentQuery(searchedAs(s.Question, s.Context)); q != "" && q != searchedAs(s.Question, s.Context) {
			s.Query, s.Retried = q, true
			return s, nil
		}
	}
	if s.Draft == "" {
		return s, nil
	}
	return s, rc.Trace(graph.TypeThought, "Draft: "+s.Draft)
}

// extractOptions weighs the question's words by how rare they are in the
// whole index, and ranks sections by meaning too when the index compares
// texts by meaning (by how close each chunk's stored vector is to the
// question).
func (a *Agent) extractOptions(ctx context.Context, question string) ExtractOptions {
	if a.fns == nil {
		return ExtractOptions{}
	}
	opt := ExtractOptions{DocFreq: func(terms []string) (map[string]int, int, error) { return a.fns.DocFreq(ctx, terms) }}
	if a.fns.ComparesMeaning() {
		opt.Related = func(ids []int64) (map[int64]float64, error) { return a.fns.Relatedness(ctx, question, ids) }
	}
	return opt
}

// checkNode reflects on the draft with the lexical checker and gives the
// answer.
func (a *Agent) checkNode(_ context.Context, rc *graph.RunContext, s offline) (offline, error) {
	if s.Draft == "" {
		s.Answer = notFound(s.Lang)
		s.Reflection = Reflection{Relevance: Verdict{Note: "nothing in the index answers the question"}}
		if len(s.Absent) > 0 {
			s.Answer = notMentioned(s.Lang, s.Absent)
			s.Reflection.Relevance.Note = "the index never mentions " + strings.Join(s.Absent, ", ")
		}
		// The answer is the agent's own sentence, in the question's
		// language: its style is judged like any other.
		s.Reflection.Style = styleVerdict(s.Answer, s.Lang)
		return s, rc.Trace(graph.TypeAnswer, s.Answer)
	}
	s.Answer, s.Reflection = a.reflect(s.Question, s.Draft, s.passages(), s.Lang)
	if err := rc.Trace(graph.TypeReflection, s.Reflection.summary()); err != nil {
		return s, err
	}
	return s, rc.Trace(graph.TypeAnswer, s.Answer)
}

package react

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/clip"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/llm"
)

// The model's ReAct + Reflection run:
//
//	START → react ─┬─ again → react
//	               ├─ out_of_turns → answer_now → reflect
//	               └─ draft → reflect → settle → END

// state is the ReAct run's state: everything resume needs.
type state struct {
	Question string `json:"question"`
	Lang     Lang   `json:"lang"`
	// Context are the topic words a follow-up carries from its
	// conversation: the agent's own search for the question has them.
	Context  string        `json:"context,omitempty"`
	Messages []llm.Message `json:"messages"`
	// Hits are the passages in number order; a checkpoint holds their
	// chunk IDs.
	Hits  Passages `json:"hits"`
	Draft string   `json:"draft"`
	Final string   `json:"final"`
	Turns int      `json:"turns"`
	// NoNew counts turns in a row whose searches found no new passage.
	NoNew int `json:"noNew"`
	// Answer and Reflection are the checked answer (settle).
	Answer     string     `json:"answer,omitempty"`
	Reflection Reflection `json:"reflection"`
}

// Clone gives each node its own lists (graph.Cloner).
func (s state) Clone() state {
	s.Messages, s.Hits = slices.Clone(s.Messages), s.Hits.Clone()
	return s
}

// passages are the run's passages; a node adds to its own state's.
func (s *state) passages() *Passages { return &s.Hits }

// Node names of the ReAct graph.
const (
	nodeReact   = "react"
	nodeAnswer  = "answer_now"
	nodeReflect = "reflect"
	nodeSettle  = "settle"
)

func (a *Agent) graph() (*graph.Compiled[state], error) {
	g := graph.New[state]()
	g.AddNode(nodeReact, a.reactNode)
	g.AddNode(nodeAnswer, a.answerNode)
	g.AddNode(nodeReflect, a.reflectNode)
	g.AddNode(nodeSettle, a.settleNode)
	g.RegisterBranch("after_react", func(s state) string {
		switch {
		case s.Draft != "":
			return "draft"
		case s.Turns >= a.llm.MaxTurns:
			return "out_of_turns"
		}
		return "again"
	})
	g.AddEdge(graph.START, nodeReact)
	g.AddConditionalEdges(nodeReact, "after_react", map[string]string{"draft": nodeReflect, "out_of_turns": nodeAnswer, "again": nodeReact})
	g.AddEdge(nodeAnswer, nodeReflect)
	g.AddEdge(nodeReflect, nodeSettle)
	g.AddEdge(nodeSettle, graph.END)
	// Progress is new passages, not a changed message list.
	g.SetFingerprint(func(s state) string { return fmt.Sprintf("%d/%t", s.Hits.Len(), s.Draft != "") })
	return g.Compile(a.log(), graph.WithGuards(graph.Guards{RepeatMax: 3, RepeatWindow: 10, NoProgressSteps: 4, MaxParseFailures: 3}))
}

// llmLimits bound one run of the model's graph, from the model's options.
func (a *Agent) llmLimits() graph.Limits {
	return graph.Limits{MaxSteps: 2*a.llm.MaxTurns + 6, MaxDuration: a.llm.Timeout, MaxToolCalls: 4 * a.llm.MaxTurns, MaxTokens: a.llm.RunTokens}
}

// reactNode is one turn: the model thinks and calls tools, or drafts.
func (a *Agent) reactNode(ctx context.Context, rc *graph.RunContext, s state) (state, error) {
	choice := llm.ToolChoiceAuto
	if s.Turns == 0 && s.Hits.Len() == 0 {
		// An answer must stand on passages, so the first turn searches:
		// asked freely, small models answer from memory, and the whole
		// reply was wasted (measured with a 1.5B model).
		choice = llm.ToolChoiceRequired
	}
	resp, err := a.call(ctx, rc, s, choice, a.fns.Tools())
	if err != nil {
		return s, err
	}
	s.Turns++
	msg := resp.Message
	for i, c := range msg.ToolCalls {
		// Keep the conversation encodable (it is checkpointed) when a weak
		// model sends arguments that are not JSON: as a JSON string.
		if !json.Valid(c.Arguments) {
			raw, _ := json.Marshal(string(c.Arguments))
			msg.ToolCalls[i].Arguments = raw
		}
	}
	s.Messages = append(s.Messages, msg)
	ps := s.passages()
	if len(msg.ToolCalls) == 0 && s.Hits.Len() == 0 {
		// The model answered before looking anything up. An answer must
		// stand on passages, so the agent searches for the question itself
		// and hands the model the results to answer from.
		said := ""
		if t := strings.TrimSpace(msg.Content); t != "" {
			said = fmt.Sprintf(" (%q)", clip.Runes(t, 200))
		}
		// Asked once more, held to a schema that only a query fits (a
		// server that lets a model ignore "required" still applies a
		// schema), the model writes its own search; failing that, the
		// question is the query.
		query, id := a.askQuery(ctx, rc, s), fmt.Sprintf("query-%d", s.Turns)
		why := "search the knowledge base with the query it wrote when asked for one"
		if query == "" {
			query, id, why = searchedAs(s.Question, s.Context), fmt.Sprintf("auto-%d", s.Turns), "search the knowledge base for the question first"
		}
		if err := rc.Trace(graph.TypeThought, "The model answered without searching"+said+"; "+why+"."); err != nil {
			return s, err
		}
		calls, err := a.alsoTheQuestion(rc, s, []llm.ToolCall{a.searchCall(id, query, 5)})
		if err != nil {
			return s, err
		}
		s.Messages[len(s.Messages)-1] = llm.Message{Role: llm.RoleAssistant, ToolCalls: calls}
		for _, call := range calls {
			c, err := a.toolCall(ctx, rc, ps, call)
			if err != nil {
				return s, err
			}
			s.Messages = append(s.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, Name: call.Name, Content: c.Observation})
		}
		if s.Hits.Len() > 0 {
			return s, rc.Progress(fmt.Sprintf("%d passages", s.Hits.Len()))
		}
		return s, nil
	}
	if len(msg.ToolCalls) == 0 {
		s.Draft = strings.TrimSpace(msg.Content)
		if s.Draft == "" {
			// An empty reply is not an answer: ask again.
			s.Messages = append(s.Messages, llm.Message{Role: llm.RoleUser, Content: "Your reply was empty. Search the knowledge base, or answer with citations."})
			return s, rc.ParseFailure("empty reply")
		}
		return s, rc.Trace(graph.TypeThought, "Draft: "+s.Draft)
	}
	if t := strings.TrimSpace(msg.Content); t != "" {
		if err := rc.Trace(graph.TypeThought, t); err != nil {
			return s, err
		}
	}
	before := s.Hits.Len()
	if msg.ToolCalls, err = a.alsoTheQuestion(rc, s, msg.ToolCalls); err != nil {
		return s, err
	}
	s.Messages[len(s.Messages)-1] = msg
	for _, call := range msg.ToolCalls {
		c, err := a.toolCall(ctx, rc, ps, call)
		if err != nil {
			return s, err
		}
		s.Messages = append(s.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, Name: call.Name, Content: c.Observation})
	}
	if s.Hits.Len() > before {
		s.NoNew = 0
		return s, rc.Progress(fmt.Sprintf("%d new passages", s.Hits.Len()-before))
	}
	s.NoNew++
	return s, nil
}

// questionK is how many passages the search for the question itself adds.
const questionK = 3

// alsoTheQuestion adds a search for the question in its own words to the
// run's first searches, when the model searched only in words of its own.
// A small model's query often misses what the question's words find: with
// a 1.5B model, three of five Japanese questions got "nothing in the
// knowledge base" where a search for the question found the page. Both
// results go to the model, numbered as one set of passages.
func (a *Agent) alsoTheQuestion(rc *graph.RunContext, s state, calls []llm.ToolCall) ([]llm.ToolCall, error) {
	if s.Hits.Len() > 0 {
		return calls, nil
	}
	searches := false
	for _, c := range calls {
		if c.Name != ToolSearch {
			continue
		}
		searches = true
		var in struct {
			Query string `json:"query"`
		}
		if json.Unmarshal(c.Arguments, &in) == nil && strings.EqualFold(strings.TrimSpace(in.Query), searchedAs(s.Question, s.Context)) {
			return calls, nil
		}
	}
	if !searches {
		return calls, nil
	}
	why := "Also search the knowledge base for the question in its own words."
	if s.Context != "" {
		why = fmt.Sprintf("Also search the knowledge base for the question in its own words, with the topic it refers back to (%s).", s.Context)
	}
	if err := rc.Trace(graph.TypeThought, why); err != nil {
		return nil, err
	}
	return append(slices.Clone(calls), a.searchCall(fmt.Sprintf("question-%d", s.Turns), searchedAs(s.Question, s.Context), questionK)), nil
}

// querySchema holds a reply to one search query.
var querySchema = &llm.Schema{Name: "search", Schema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","minLength":2,"maxLength":200}},"required":["query"],"additionalProperties":false}`)}

// askQuery asks the model, under querySchema, for the query that finds
// the passages answering the question; "" when it cannot give one. The
// conversation is the one it just answered, so a server's prompt cache
// makes this call cheap.
func (a *Agent) askQuery(ctx context.Context, rc *graph.RunContext, s state) string {
	msgs := append(append([]llm.Message{}, s.Messages[:len(s.Messages)-1]...), llm.Message{Role: llm.RoleUser, Content: "Before answering, search the knowledge base. " +
		`Reply with JSON only: {"query": "the words to search for"}.`})
	// Chat, not send: this JSON is not for the reader's screen.
	resp, err := a.llm.Model.Chat(ctx, llm.Request{System: a.system(s.Lang), Messages: msgs, Temperature: a.llm.Temperature, MaxTokens: 100, Reply: querySchema})
	if err != nil {
		_ = rc.Emit(graph.Event{Type: graph.TypeError, Text: "model: " + err.Error()})
		return ""
	}
	if rc.Usage(int64(resp.Usage.InputTokens), int64(resp.Usage.OutputTokens)) != nil {
		return ""
	}
	var q struct {
		Query string `json:"query"`
	}
	if json.Unmarshal([]byte(strings.TrimSpace(resp.Message.Content)), &q) != nil {
		return ""
	}
	return strings.TrimSpace(q.Query)
}

// answerNode makes the model answer now, without tools: the turns are used up.
func (a *Agent) answerNode(ctx context.Context, rc *graph.RunContext, s state) (state, error) {
	if err := rc.Trace(graph.TypeThought, fmt.Sprintf("%d turns used: answer with what was found.", s.Turns)); err != nil {
		return s, err
	}
	s.Messages = append(s.Messages, llm.Message{Role: llm.RoleUser, Content: "Answer now from the passages you have, with [n] citations. Do not call tools."})
	resp, err := a.call(ctx, rc, s, llm.ToolChoiceNone, nil)
	if err != nil {
		return s, err
	}
	s.Messages = append(s.Messages, resp.Message)
	s.Draft = strings.TrimSpace(resp.Message.Content)
	return s, rc.Trace(graph.TypeThought, "Draft: "+s.Draft)
}

// reflectNode asks the model, in the same conversation, to check its draft
// for accuracy, relevance and style and to write the final answer. The
// claim checker then has the last word (settle).
func (a *Agent) reflectNode(ctx context.Context, rc *graph.RunContext, s state) (state, error) {
	ps := s.passages()
	var unsupported []Claim
	for _, c := range a.Checker().Check(s.Draft, ps) {
		if c.Checked && !c.Supported {
			unsupported = append(unsupported, c)
		}
	}
	prompt := reflectionPrompt(s.Question, s.Lang, unsupported)
	if err := rc.Trace(graph.TypeReflection, prompt); err != nil {
		return s, err
	}
	s.Messages = append(s.Messages, llm.Message{Role: llm.RoleUser, Content: prompt})
	resp, err := a.call(ctx, rc, s, llm.ToolChoiceNone, nil)
	if err != nil {
		return s, err
	}
	s.Messages = append(s.Messages, resp.Message)
	s.Final = strings.TrimSpace(resp.Message.Content)
	if s.Final == "" {
		s.Final = s.Draft
	}
	return s, nil
}

// settleNode checks the final answer with the claim checker, keeps what
// its passages back, and gives the answer.
func (a *Agent) settleNode(_ context.Context, rc *graph.RunContext, s state) (state, error) {
	s.Answer, s.Reflection = a.settle(s, s.passages())
	if err := rc.Trace(graph.TypeReflection, s.Reflection.summary()); err != nil {
		return s, err
	}
	return s, rc.Trace(graph.TypeAnswer, s.Answer)
}

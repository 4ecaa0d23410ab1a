package react

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/llm"
)

// DefaultMaxTurns bounds the ReAct loop: model calls before it must answer.
const DefaultMaxTurns = 10

// DefaultReplyTokens caps one model reply: enough for a cited answer, and
// a weak model that rambles stops early.
const DefaultReplyTokens = 400

// LLMOptions configure the language-model agent.
type LLMOptions struct {
	Model llm.Model
	// MaxTurns bounds the model calls of the ReAct phase (default 10).
	MaxTurns int
	// RunTokens bounds the tokens of a run (default 200,000).
	RunTokens int64
	// Timeout bounds a run's wall-clock time (default 5 minutes).
	Timeout time.Duration
	// Temperature of every model call (default 0.2).
	Temperature *float64
	// ReplyTokens caps the text of one model reply (default 400), and
	// ThinkingBudget is what a thinking model may spend before it (nil:
	// the model's own; see llm.Request).
	ReplyTokens    int
	ThinkingBudget *int
	// OnDelta receives the answer's text as the model writes it.
	OnDelta func(text string)
}

// Turn is an earlier exchange of a conversation (sagasu chat).
type Turn struct {
	Question string `json:"question"`
	Answer   string `json:"answer"`
}

// WithModel makes the agent answer with a language model: a ReAct loop of
// tool calls over the knowledge base, then a reflection pass in the same
// conversation.
func (a *Agent) WithModel(opt LLMOptions) *Agent {
	if opt.MaxTurns <= 0 {
		opt.MaxTurns = DefaultMaxTurns
	}
	if opt.RunTokens <= 0 {
		opt.RunTokens = 200_000
	}
	if opt.ReplyTokens <= 0 {
		opt.ReplyTokens = DefaultReplyTokens
	}
	if opt.Timeout <= 0 {
		opt.Timeout = 5 * time.Minute
	}
	if opt.Temperature == nil {
		t := 0.2
		opt.Temperature = &t
	}
	a.llm = &opt
	return a
}

// Ask answers question with the model, after the conversation so far; an
// agent without a model answers offline.
func (a *Agent) Ask(ctx context.Context, question string, history []Turn) (*Result, error) {
	return a.ask(ctx, question, history, nil)
}

// ask is Ask that also hands each step of the run to onEvent.
func (a *Agent) ask(ctx context.Context, question string, history []Turn, onEvent func(graph.Event)) (*Result, error) {
	if a.llm == nil {
		return a.answer(ctx, question, history, onEvent)
	}
	question = strings.TrimSpace(question)
	if question == "" {
		return nil, ErrEmptyQuestion
	}
	start := time.Now()
	st := state{Question: question, Lang: a.lang(question), Context: carried(a.an, question, history, a.chunksWith)}
	for _, t := range history {
		st.Messages = append(st.Messages, llm.Message{Role: llm.RoleUser, Content: t.Question}, llm.Message{Role: llm.RoleAssistant, Content: t.Answer})
	}
	st.Messages = append(st.Messages, llm.Message{Role: llm.RoleUser, Content: question})

	res := &Result{Question: question, Mode: "llm", Model: a.llm.Model.Info().Model}
	g, err := a.llmGraph()
	if err != nil {
		return nil, fmt.Errorf("build the agent graph: %w", err)
	}
	run := a.runID()
	final, out := g.Invoke(ctx, run, st, a.observer(res, onEvent), graph.Bound(a.llmLimits()))
	a.ended(run)
	res.Turns = final.Turns
	res.Usage = out.Tokens
	ps := final.passages()
	switch {
	case out.Status == graph.Success:
		a.result(res, final.Answer, final.Reflection, ps)
	case errors.Is(out.Err, graph.ErrCancelled):
		return res, fmt.Errorf("cancelled after %d turns: %w", final.Turns, out.Err)
	default:
		// A guard, a limit or a failure ended the run before it settled:
		// the best cited answer so far, checked the same way.
		res.Stopped = out.Reason
		if out.Guard != "" {
			res.Stopped = out.Guard + ": " + out.Reason
		}
		if out.Status == graph.Failure && ps.Len() == 0 {
			return res, fmt.Errorf("the agent failed before it found anything: %w", out.Err)
		}
		if final.Draft == "" {
			final.Draft = Extract(a.an, question, ps.All(), ps, ExtractOptions{Context: final.Context})
		}
		answer, refl := a.settle(final, ps)
		// The run's log ends with its outcome; these closing steps are the
		// result's, numbered after the run's last step.
		step, seq := out.Steps+1, int64(0)
		if n := len(res.Trace); n > 0 {
			seq = res.Trace[n-1].Seq
		}
		for _, ev := range []graph.Event{{Type: graph.TypeReflection, Text: refl.summary()}, {Type: graph.TypeAnswer, Text: answer}} {
			seq++
			ev.Run, ev.Step, ev.Seq, ev.Time = run, step, seq, a.opt.Now().UTC()
			res.Trace = append(res.Trace, ev)
			if a.opt.OnEvent != nil {
				a.opt.OnEvent(ev)
			}
			if onEvent != nil {
				onEvent(ev)
			}
		}
		a.result(res, answer, refl, ps)
	}
	res.TookMs = time.Since(start).Milliseconds()
	return res, nil
}

// settle checks the model's final answer (or its draft) with the claim
// checker and drops what it does not back. When nothing the model wrote
// is backed, the answer is quoted from the passages it retrieved instead.
func (a *Agent) settle(st state, ps *Passages) (string, Reflection) {
	text := st.Final
	if strings.TrimSpace(text) == "" {
		text = st.Draft
	}
	answer, refl := a.reflect(st.Question, text, ps, st.Lang)
	if (answer == notFound(st.Lang) || refl.Accuracy.Score == 0) && ps.Len() > 0 {
		if q := Extract(a.an, st.Question, ps.All(), ps, ExtractOptions{Context: st.Context}); q != "" {
			answer2, refl2 := a.reflect(st.Question, q, ps, st.Lang)
			refl2.Unsupported = append(refl.Unsupported, refl2.Unsupported...)
			refl2.Revised = true
			refl2.Accuracy.Note += "; nothing the model wrote was backed by a passage, so the answer quotes the passages it retrieved"
			return answer2, refl2
		}
	}
	return answer, refl
}

// send makes one model call, streaming text to OnDelta.
func (a *Agent) send(ctx context.Context, req llm.Request) (*llm.Response, error) {
	if a.llm.OnDelta == nil {
		return a.llm.Model.Chat(ctx, req)
	}
	return a.llm.Model.Stream(ctx, req, func(d llm.Delta) error {
		if d.Text != "" {
			a.llm.OnDelta(d.Text)
		}
		return nil
	})
}

// toolCallUnreadable reports a server error answer to a request that
// offered tools: the server failed on the model's reply (llama-server
// answers 500 when the reply does not parse as its tool-call format), so
// the same request without tools may still get an answer.
func toolCallUnreadable(err error) bool {
	var api *llm.APIError
	return errors.As(err, &api) && api.Status >= 500
}

// call sends the conversation to the model, streaming text to OnDelta; a
// reply the server cannot read as a tool call is asked for again as text.
func (a *Agent) call(ctx context.Context, rc *graph.RunContext, s state, choice llm.ToolChoice, tools []llm.Tool) (*llm.Response, error) {
	req := llm.Request{System: a.system(s.Lang), Messages: s.Messages, Tools: tools, ToolChoice: choice, Temperature: a.llm.Temperature,
		MaxTokens: a.llm.ReplyTokens, ThinkingBudget: a.llm.ThinkingBudget}
	start := time.Now()
	resp, err := a.send(ctx, req)
	if err != nil && len(req.Tools) > 0 && toolCallUnreadable(err) {
		// The server could not read the model's reply as a tool call (a
		// small model under llama-server's grammar does this): say so and
		// ask once more for a plain answer from what the run has found.
		_ = rc.Emit(graph.Event{Type: graph.TypeError, Text: "model: " + err.Error() + "; asking again without tools", LatencyMs: time.Since(start).Milliseconds()})
		req.Tools, req.ToolChoice = nil, llm.ToolChoiceNone
		resp, err = a.send(ctx, req)
	}
	if err != nil {
		var stop *graph.StopError
		if errors.As(err, &stop) {
			return nil, err
		}
		_ = rc.Emit(graph.Event{Type: graph.TypeError, Text: "model: " + err.Error(), LatencyMs: time.Since(start).Milliseconds()})
		return nil, fmt.Errorf("ask the model (%s): %w", a.llm.Model.Info().Model, err)
	}
	if uerr := rc.Usage(int64(resp.Usage.InputTokens), int64(resp.Usage.OutputTokens)); uerr != nil {
		return nil, uerr
	}
	if msg, ok := llm.CallsInText(resp.Message, req.Tools); ok {
		// A small model writes its call as JSON in the text, even when a
		// call was required (the server does not always hold it to one).
		resp.Message = msg
		if err := rc.Trace(graph.TypeThought, fmt.Sprintf("The model wrote its call to %s as text; it is run as a call.", msg.ToolCalls[0].Name)); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

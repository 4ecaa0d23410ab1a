package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sagasu-dev/sagasu/internal/agent/react"
	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/clip"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// ToolAsk is the question-answering tool's name.
const ToolAsk = "sagasu_ask"

// Asker answers a question from the index (the ReAct + Reflection agent).
type Asker func(ctx context.Context, question string, opt AskOptions) (*react.Result, error)

// AskOptions are what a client may set of a question's run.
type AskOptions struct {
	MaxTurns int
	Offline  bool
}

// AskInput is sagasu_ask's input.
type AskInput struct {
	Question     string `json:"question" jsonschema:"the question to answer from the knowledge base"`
	MaxTurns     int    `json:"maxTurns,omitempty" jsonschema:"most model calls before the agent must answer, 1 to 20 (default 10)"`
	Offline      bool   `json:"offline,omitempty" jsonschema:"answer extractively without the server's language model"`
	IncludeTrace bool   `json:"includeTrace,omitempty" jsonschema:"add the agent's steps (thoughts, tool calls, observations, reflection)"`
}

// AskOutput is a cited answer.
type AskOutput struct {
	Question  string           `json:"question"`
	Answer    string           `json:"answer" jsonschema:"every sentence cites a passage [n] of citations"`
	Citations []react.Citation `json:"citations"`
	// OmittedCitations were left out to fit the budget; their chunks are
	// reachable as sagasu://chunk/{id}.
	OmittedCitations int              `json:"omittedCitations,omitempty"`
	Reflection       react.Reflection `json:"reflection"`
	Mode             string           `json:"mode" jsonschema:"offline or llm"`
	Model            string           `json:"model,omitempty"`
	Turns            int              `json:"turns"`
	Usage            graph.Tokens     `json:"usage"`
	Stopped          string           `json:"stopped,omitempty" jsonschema:"why a guard or limit ended the run early; the answer is then the best so far"`
	Trace            []TraceStep      `json:"trace,omitempty"`
	tools.Measured
}

// TraceStep is one step of the agent, shortened.
type TraceStep struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	Tool string `json:"tool,omitempty"`
}

// askOp is sagasu_ask over ask (nil: listed, not callable).
func askOp(ask Asker) tools.Op {
	def := tools.Define[AskInput](tools.Def{Name: ToolAsk, Title: "Ask the knowledge base", ReadOnly: true,
		Description: "Answer a question from the knowledge base: an agent searches, reads, drafts and reflects, and every sentence cites a passage [n] a claim checker found backs it. " +
			"Uses the server's language model when it has one, else answers extractively."},
		func(in *jsonschema.Schema) {
			tools.NotEmpty(tools.Prop(in, "question"))
			tools.Between(tools.Prop(in, "maxTurns"), 1, tools.MaxAskTurns)
		})
	var run func(context.Context, *tools.Env, AskInput) (tools.Reply, error)
	if ask != nil {
		run = func(ctx context.Context, env *tools.Env, in AskInput) (tools.Reply, error) {
			return askRun(ctx, env, ask, in)
		}
	}
	return tools.Bind(def, tools.GroupAgents, tools.OutputOf[AskOutput](), run)
}

func askRun(ctx context.Context, env *tools.Env, ask Asker, in AskInput) (tools.Reply, error) {
	if strings.TrimSpace(in.Question) == "" {
		return tools.Reply{}, react.ErrEmptyQuestion
	}
	res, err := ask(ctx, in.Question, AskOptions{MaxTurns: in.MaxTurns, Offline: in.Offline})
	if err != nil {
		if errors.Is(err, react.ErrEmptyIndex) {
			return tools.Reply{}, fmt.Errorf("%w (or call %s)", err, ToolIndex)
		}
		return tools.Reply{}, err
	}
	var trace []TraceStep
	if in.IncludeTrace {
		for _, ev := range res.Trace {
			text := ev.Text
			if text == "" {
				text = ev.Observation
			}
			if text == "" && len(ev.Arguments) > 0 {
				text = string(ev.Arguments)
			}
			trace = append(trace, TraceStep{Type: ev.Type, Text: clip.Runes(text, 400), Tool: ev.Tool})
		}
	}
	quoteLens := make([]int, len(res.Citations))
	for i, c := range res.Citations {
		quoteLens[i] = utf8.RuneCountInString(c.Quote)
	}
	limit := env.Budget().Mode(ModeDetailed)
	full := budget.Shape{Items: len(res.Citations), Text: budget.TextBound(quoteLens, limit)}
	return tools.Fit(env, limit, full, 80, func(sh budget.Shape, est int) tools.View[AskOutput] {
		out := AskOutput{Question: res.Question, Answer: res.Answer, Reflection: res.Reflection, Mode: res.Mode, Model: res.Model,
			Turns: res.Turns, Usage: res.Usage, Stopped: res.Stopped, Trace: trace, OmittedCitations: len(res.Citations) - sh.Items}
		out.Citations = []react.Citation{}
		for _, c := range res.Citations[:sh.Items] {
			c.Quote = clip.Runes(c.Quote, sh.Text)
			out.Citations = append(out.Citations, c)
		}
		out.EstimatedTokens = est
		var b strings.Builder
		b.WriteString(out.Answer)
		b.WriteString("\n\n")
		for _, c := range out.Citations {
			fmt.Fprintf(&b, "[%d] %s:%d-%d %s (%s)\n", c.N, c.Source.URI, c.Lines[0], c.Lines[1], c.Heading, tools.ChunkURI(c.ChunkID))
		}
		if out.OmittedCitations > 0 {
			fmt.Fprintf(&b, "… %s left out to fit the budget.\n", tools.Count(out.OmittedCitations, "more citation"))
		}
		if out.Stopped != "" {
			fmt.Fprintf(&b, "note: the run stopped early (%s)\n", out.Stopped)
		}
		return tools.View[AskOutput]{Out: out, Text: b.String()}
	})
}

package main

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sagasu-dev/sagasu/internal/agent/react"
	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// askFlags are the flags ask and chat share.
type askFlags struct {
	offline  bool
	trace    bool
	stream   bool
	maxTurns int
	k        int
	lang     string
	casual   bool
	// live is the terminal view options set up (nil before).
	live *liveView
}

func (f *askFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.offline, "offline", false, "answer without a language model even when one is configured (extractive, cited)")
	fs.BoolVar(&f.trace, "trace", false, "print the agent's steps to stderr (the default on a terminal)")
	fs.BoolVar(&f.stream, "stream", false, "print the model's text to stdout as it writes it, then the checked answer's changes and sources (the default when stdout is a terminal; to stderr with --json)")
	fs.IntVar(&f.maxTurns, "max-turns", react.DefaultMaxTurns, "most model calls in the ReAct loop before it must answer")
	fs.IntVar(&f.k, "k", 8, "passages per search")
	fs.StringVar(&f.lang, "lang", "", "answer language: en or ja (default: the question's)")
	fs.BoolVar(&f.casual, "casual", false, "do not require the polite です・ます style in Japanese answers")
	addLLMFlags(fs)
	addAgentFlags(fs, false)
}

func (f *askFlags) options(g *globals, a *app.App) (app.AskOptions, error) {
	if f.maxTurns < 1 || f.maxTurns > tools.MaxAskTurns {
		return app.AskOptions{}, usagef("--max-turns %d: use 1 to %d (as sagasu_ask's maxTurns)", f.maxTurns, tools.MaxAskTurns)
	}
	if f.k < 1 || f.k > 20 {
		return app.AskOptions{}, usagef("--k %d: use 1 to 20", f.k)
	}
	opt := app.AskOptions{Offline: f.offline, MaxTurns: f.maxTurns, K: f.k, Style: react.Style{Casual: f.casual}}
	switch f.lang {
	case "":
	case "en", "ja":
		opt.Style.Language = react.Lang(f.lang)
	default:
		return opt, usagef("--lang %q: use en or ja", f.lang)
	}
	// Steps go to stderr (on a terminal, or with --trace); the model's
	// text to stdout as it arrives when stdout is a terminal (or with
	// --stream), as the page streams it, and to stderr with --json so
	// that stdout stays one document.
	live := &liveView{steps: g.stderr, text: g.stdout, inline: true}
	if a.Config.JSON {
		live.text, live.inline = g.stderr, false
	}
	f.live = live
	live.showSteps = f.trace || (!a.Config.JSON && isTerminal(g.stderr))
	if f.stream || (!a.Config.JSON && isTerminal(g.stdout)) {
		opt.OnDelta = live.delta
	}
	if live.showSteps || opt.OnDelta != nil {
		opt.OnEvent = live.event // a step also ends a draft
	}
	return opt, nil
}

// liveView shows an agent as it works: its steps on one writer (stderr)
// and the model's text, as the model writes it, on another (stdout). A
// step after streamed text starts on a new line, and the text of the
// model call after it is a new draft.
type liveView struct {
	steps, text io.Writer
	// inline says the text goes where the answer is printed (stdout).
	inline    bool
	showSteps bool
	mu        sync.Mutex
	midLine   bool
	newDraft  bool
	// draft is the text of the latest model call, streamed.
	draft strings.Builder
	trace func(graph.Event)
}

func (l *liveView) event(ev graph.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.trace == nil {
		l.trace = traceTo(l.steps)
	}
	l.endLine()
	l.newDraft = true
	if l.showSteps {
		l.trace(ev)
	}
}

func (l *liveView) delta(text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.newDraft {
		l.draft.Reset()
		l.newDraft = false
	}
	l.draft.WriteString(text)
	fmt.Fprint(l.text, text)
	l.midLine = !strings.HasSuffix(text, "\n")
}

// endLine finishes a streamed line; l.mu is held.
func (l *liveView) endLine() {
	if l.midLine {
		fmt.Fprintln(l.text)
		l.midLine = false
	}
}

// end finishes a streamed line and starts the next answer's drafts afresh.
func (l *liveView) end() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.endLine()
	l.newDraft = true
}

// answer writes the checked answer to w, where the streamed text went
// when l.inline: when the model's last draft is the answer as checked,
// only the sources and notes follow it; otherwise the whole answer does
// (after a line saying so when drafts were shown).
func (l *liveView) answer(w io.Writer, res *react.Result) {
	l.mu.Lock()
	streamed := l.inline && l.draft.Len() > 0
	same := streamed && strings.TrimSpace(l.draft.String()) == strings.TrimSpace(res.Answer)
	l.draft.Reset()
	l.mu.Unlock()
	switch {
	case same:
		printSources(w, res)
	case streamed:
		fmt.Fprintln(w, "\n(checked answer)")
		printAnswer(w, res)
	default:
		printAnswer(w, res)
	}
}

func newAskCmd(g *globals) *cobra.Command {
	var f askFlags
	cmd := &cobra.Command{
		Use:   "ask QUESTION",
		Short: "Answer a question from the index, with citations (ReAct + Reflection)",
		Long: `Ask answers a question from the knowledge base. With a language model
configured (--llm, or SAGASU_LLM / llm: in sagasu.yaml) it runs a ReAct loop:
the model searches the index, reads documents and evaluates what it found,
drafts an answer, then reflects on it for accuracy, relevance and style.
Without one (or with --offline) it answers extractively: the sentences of the
results that answer the question, quoted.

Either way every sentence of the answer cites a passage [n] that the run
retrieved, and a claim checker drops sentences their passages do not back.
The answer goes to stdout; the agent's steps to stderr on a terminal (or with
--trace). When stdout is a terminal (or with --stream) the model's text is
printed as it arrives, as the web page streams it, and its sources follow
(after the checked answer, when the claim checker or the reflection changed
the draft). --json prints the whole record: answer, citations, trace,
reflection, mode, turns and token usage.`,
		Example: `  sagasu ask "how do I enable local search?"
  sagasu ask --json "サイトマップを生成するには？"
  SAGASU_LLM=openai SAGASU_LLM_URL=http://127.0.0.1:8080/v1 sagasu ask "what is MPA mode?"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			opt, err := f.options(g, a)
			if err != nil {
				return err
			}
			if strings.TrimSpace(args[0]) == "" {
				return usageError{react.ErrEmptyQuestion}
			}
			rt, err := a.Open(cmd.Context(), app.OpenOptions{NoCache: true})
			if err != nil {
				return err
			}
			defer rt.Close()
			ctx, end := a.Tracer.StartAgent(cmd.Context(), "sagasu ask", "")
			opt.OnEvent = a.Tracer.OnEvent(ctx, opt.OnEvent)
			res, err := rt.Asker(opt).Ask(ctx, args[0], nil)
			end(err)
			f.live.end()
			if err != nil {
				return err
			}
			if a.Config.JSON {
				return writeJSON(g.stdout, res)
			}
			f.live.answer(g.stdout, res)
			return nil
		},
	}
	f.register(cmd.Flags())
	return cmd
}

// printAnswer writes an answer and its sources for people.
func printAnswer(w io.Writer, res *react.Result) {
	fmt.Fprintln(w, res.Answer)
	printSources(w, res)
}

// printSources writes an answer's sources and notes for people.
func printSources(w io.Writer, res *react.Result) {
	if len(res.Citations) > 0 {
		fmt.Fprintln(w)
	}
	for _, c := range res.Citations {
		fmt.Fprintf(w, "[%d] %s:%d-%d", c.N, c.Source.URI, c.Lines[0], c.Lines[1])
		if c.Heading != "" {
			fmt.Fprintf(w, "  %s", c.Heading)
		}
		fmt.Fprintln(w)
	}
	if res.Stopped != "" {
		fmt.Fprintf(w, "\n(the run was stopped early: %s; this is the best cited answer so far)\n", res.Stopped)
	}
	for _, u := range res.Reflection.Unsupported {
		fmt.Fprintf(w, "(dropped, not backed by its sources: %s)\n", u)
	}
}

// traceTo prints each step of an agent to w, one or a few lines each.
func traceTo(w io.Writer) func(graph.Event) {
	return func(ev graph.Event) {
		switch ev.Type {
		case graph.TypeThought, graph.TypePlan, graph.TypeReplan, graph.TypeError:
			fmt.Fprintf(w, "%-11s %s\n", ev.Type, snippet(ev.Text, 200))
		case graph.TypeReflection:
			fmt.Fprintf(w, "%-11s %s\n", ev.Type, snippet(ev.Text, 300))
		case graph.TypeAction:
			fmt.Fprintf(w, "%-11s %s %s\n", ev.Type, ev.Tool, snippet(string(ev.Arguments), 160))
		case graph.TypeObservation:
			status := ""
			if ev.OK != nil && !*ev.OK {
				status = " (failed)"
			}
			fmt.Fprintf(w, "%-11s %s%s: %s (%d ms)\n", ev.Type, ev.Tool, status, snippet(ev.Observation, 160), ev.LatencyMs)
		case graph.TypeUsage:
			fmt.Fprintf(w, "%-11s %d tokens in, %d out\n", "model", ev.Tokens.In, ev.Tokens.Out)
		}
	}
}

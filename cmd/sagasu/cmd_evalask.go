package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/agent/react"
	"github.com/sagasu-dev/sagasu/internal/agent/react/reacteval"
	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

func newEvalAskCmd(g *globals) *cobra.Command {
	var setPath, docs, mode string
	var withModel bool
	var maxTurns int
	cmd := &cobra.Command{
		Use:   "ask --set FILE --docs DIR",
		Short: "Measure sagasu ask on labelled questions (facts stated, pages cited, unanswerable ones refused)",
		Long: `Ask indexes --docs into a temporary index (URIs relative to --docs, so they
match the set's pages), answers every question of --set without a language
model (the extractive answerer of sagasu ask --offline) and prints, for each,
whether the answer states every expected fact, cites an expected page, and
leads with one (on topic: its first citation is an expected page); for a
question marked unanswerable, whether it says the knowledge base does not
answer it. Then the totals: supported answer sentences, citations whose
page an observation of the run showed, finished runs (no guard or limit
ended them), tokens and milliseconds per question.

With --with-model the configured language model answers (SAGASU_LLM*,
--llm flags or llm: in sagasu.yaml), as sagasu ask does: a ReAct run with
tool calls, then Reflection. A run that fails is counted and the rest go
on. With an embedder (--embedder, or SAGASU_EMBEDDER) the
documents are embedded, the answerer searches in the index's default mode
(hybrid) and ranks answer sentences by meaning too; --db reuses an index.

A set is JSON: {"name": ..., "questions": [{"id", "question", "pages":
["en/guide/x.md"], "facts": ["cleanUrls"]}, ...]} (testdata/ask/). A
question with "after": ["an earlier question", ...] is a follow-up: the
earlier questions are answered first, in one conversation, as sagasu chat
asks them, and only the follow-up is scored (testdata/ask/chat-*.json).`,
		Example: `  sagasu eval ask --set testdata/ask/vitepress.json --docs ../shared/data/vitepress-docs
  sagasu eval ask --set testdata/ask/vitepress-holdout.json --docs ../shared/data/vitepress-docs --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			if setPath == "" || docs == "" {
				return usagef("--set and --docs are required: a question set (JSON) and the folder of documents it labels")
			}
			set, err := reacteval.Load(setPath)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			mi, err := openCorpusIndex(ctx, cmd, g, a, "ask", docs)
			if err != nil {
				return err
			}
			defer mi.close()
			ts, err := tools.New(tools.Options{Engine: a.Engine(mi.store, mi.embedder), Logger: a.Log})
			if err != nil {
				return err
			}
			fns, err := ts.Functions()
			if err != nil {
				return err
			}
			agent := react.New(fns, react.Options{Mode: search.Mode(mode)})
			var answerer reacteval.Answerer = agent
			if withModel {
				m, err := a.LLM()
				if err != nil {
					return err
				}
				if m == nil {
					return usagef("--with-model needs a language model: set SAGASU_LLM (and SAGASU_LLM_URL, SAGASU_LLM_MODEL) or llm: in sagasu.yaml")
				}
				gen := a.Config.Agent.Generation(app.RoleAsk, m.Info())
				answerer = agent.WithModel(react.LLMOptions{Model: m, MaxTurns: maxTurns,
					Temperature: &gen.Temperature, ReplyTokens: gen.MaxTokens, ThinkingBudget: gen.ThinkingBudget})
			}
			rep, err := reacteval.Evaluate(ctx, answerer, set)
			if err != nil {
				return err
			}
			if a.Config.JSON {
				return writeJSON(g.stdout, rep)
			}
			printAskReport(g.stdout, rep)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&setPath, "set", "", "question set (JSON), e.g. testdata/ask/vitepress.json")
	f.StringVar(&docs, "docs", "", "folder of the documents the set labels")
	f.BoolVar(&withModel, "with-model", false, "answer with the configured language model (ReAct + Reflection) instead of offline")
	f.IntVar(&maxTurns, "max-turns", 0, "with --with-model: ReAct turns per question (default 10)")
	f.StringVar(&mode, "mode", "", "retrieval mode: keyword, semantic, hybrid (default: hybrid with an embedder)")
	addEmbedderFlags(f)
	return cmd
}

// printAskReport prints an eval ask report: one line per question, then
// the totals.
func printAskReport(w io.Writer, rep reacteval.Report) {
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	fmt.Fprintf(w, "%-22s %-5s %-5s %-5s %-8s %7s %7s  %s\n", "question", "fact", "page", "topic", "finished", "tokens", "ms", "answer")
	for _, s := range rep.Scores {
		fact, page, topic := yes(s.Fact), yes(s.Page), yes(s.OnTopic)
		if s.Unanswerable {
			fact, page, topic = "none:"+yes(s.SaidNone), "", ""
		}
		answer := s.Answer
		if s.Err != "" {
			answer = "ERROR: " + s.Err
		}
		fmt.Fprintf(w, "%-22s %-5s %-5s %-5s %-8s %7d %7d  %s\n", s.ID, fact, page, topic, yes(s.Finished),
			s.Tokens.In+s.Tokens.Out, s.Ms, firstRunes(strings.Join(strings.Fields(answer), " "), 100))
	}
	fmt.Fprintf(w, "\nset %s: expected fact %d/%d, expected page cited %d/%d, on topic %d/%d, unanswerable said so %d/%d\n",
		rep.Set, rep.WithFact, rep.Answerable, rep.WithPage, rep.Answerable, rep.OnTopic, rep.Answerable, rep.SaidNone, rep.Unanswerable)
	fmt.Fprintf(w, "supported sentences %d/%d, citations of pages the run saw %d/%d, style ok %d/%d, finished %d/%d, failed %d\n",
		rep.Supported, rep.Sentences, rep.CitedSeen, rep.Cited, rep.InStyle, rep.Questions, rep.Finished, rep.Questions, rep.Failed)
	fmt.Fprintf(w, "per question: %.0f tokens in, %.0f out, %.0f ms\n", rep.TokensIn, rep.TokensOut, rep.MsPer)
}

// firstRunes is s cut to n runes, with an ellipsis when cut.
func firstRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

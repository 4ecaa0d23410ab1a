package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/agent/react"
	"github.com/sagasu-dev/sagasu/internal/agent/react/reacteval"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

func newEvalAskCmd(g *globals) *cobra.Command {
	var setPath, docs, mode string
	cmd := &cobra.Command{
		Use:   "ask --set FILE --docs DIR",
		Short: "Measure the offline answerer on labelled questions (facts stated, pages cited)",
		Long: `Ask indexes --docs into a temporary index (URIs relative to --docs, so they
match the set's pages), answers every question of --set without a language
model (the extractive answerer of sagasu ask --offline) and prints, for each,
whether the answer states every expected fact and cites an expected page,
then the totals, how many answer sentences their citations support, and the
time per question. With an embedder (--embedder, or SAGASU_EMBEDDER) the
documents are embedded, the answerer searches in the index's default mode
(hybrid) and ranks answer sentences by meaning too; --db reuses an index.

A set is JSON: {"name": ..., "questions": [{"id", "question", "pages":
["en/guide/x.md"], "facts": ["cleanUrls"]}, ...]} (testdata/ask/).`,
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
			rep, err := reacteval.Evaluate(ctx, agent, set)
			if err != nil {
				return err
			}
			if a.Config.JSON {
				return writeJSON(g.stdout, rep)
			}
			yes := func(b bool) string {
				if b {
					return "yes"
				}
				return "no"
			}
			fmt.Fprintf(g.stdout, "%-20s %-5s %-5s %s\n", "question", "fact", "page", "answer")
			for _, s := range rep.Scores {
				fmt.Fprintf(g.stdout, "%-20s %-5s %-5s %s\n", s.ID, yes(s.Fact), yes(s.Page), firstRunes(strings.Join(strings.Fields(s.Answer), " "), 100))
			}
			fmt.Fprintf(g.stdout, "\nset %s: expected fact %d/%d, expected page cited %d/%d, supported sentences %d/%d, style ok %d/%d, %.0f ms per question\n",
				rep.Set, rep.WithFact, rep.Questions, rep.WithPage, rep.Questions, rep.Supported, rep.Sentences, rep.InStyle, rep.Questions, rep.MsPer)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&setPath, "set", "", "question set (JSON), e.g. testdata/ask/vitepress.json")
	f.StringVar(&docs, "docs", "", "folder of the documents the set labels")
	f.StringVar(&mode, "mode", "", "retrieval mode: keyword, semantic, hybrid (default: hybrid with an embedder)")
	addEmbedderFlags(f)
	return cmd
}

// firstRunes is s cut to n runes, with an ellipsis when cut.
func firstRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

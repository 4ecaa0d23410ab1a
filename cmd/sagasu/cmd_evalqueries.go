package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/eval"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/search"
)

func newEvalQueriesCmd(g *globals) *cobra.Command {
	var queries, docs, mode string
	cmd := &cobra.Command{
		Use:   "queries --queries FILE.tsv (--db INDEX | --docs DIR)",
		Short: "Evaluate on your own questions with graded page judgments (nDCG@10, recall@10, MRR@10)",
		Long: `Runs the questions of a TSV file against an index — --db, an index you
built, or --docs, a folder indexed into a temporary index first — and prints
nDCG@10, recall@10 and MRR@10 over pages, then every query whose answering
page did not come first.

The file has one query a line, three tab-separated fields:

  id<TAB>query<TAB>page=grade page=grade ...

grade 2 marks a page that answers the query, 1 a related page (0 an
irrelevant one, which counts as unjudged). A page is a path as indexed, or
its tail after a slash: "guide/routing.md" matches "docs/en/guide/routing.md".
Blank lines and lines starting with # are skipped. Example:

  # id	query	judgments
  en01	how do I add a custom theme	guide/custom-theme.md=2 guide/extending-default-theme.md=1

MRR@10 is of the first page graded 2; recall@10 counts pages graded 1 or 2.`,
		Example: `  sagasu eval queries --queries testdata/eval/vitepress-en.tsv --docs ../shared/data/vitepress-docs/en
  sagasu eval queries --queries my-questions.tsv --db .sagasu/sagasu.db --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			if queries == "" {
				return usagef("--queries is required: a TSV of id<TAB>query<TAB>page=grade ... (see --help)")
			}
			if docs == "" && !cmd.Flags().Changed("db") {
				return usagef("give --docs DIR (indexed into a temporary index) or --db INDEX (an index you built)")
			}
			qs, err := eval.LoadQueries(queries)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			mi, err := openMeasureIndex(ctx, cmd, a, "queries")
			if err != nil {
				return err
			}
			defer mi.close()
			st, emb := mi.store, mi.embedder
			if docs != "" {
				opt := a.IndexOptions()
				opt.Embedder = emb
				rep, err := index.New(st, opt).Run(ctx, []string{docs})
				if err != nil {
					return err
				}
				if !a.Config.JSON {
					fmt.Fprintf(g.stderr, "indexed %s: %d chunks\n", docs, rep.Chunks)
				}
			}
			e := a.Engine(st, emb)
			// Without --mode each question is searched in its default mode,
			// as a user's would be (keyword for a language the embedder
			// reads poorly).
			res, err := eval.RunQueries(ctx, e, filepath.Base(queries), qs, search.Mode(mode))
			if err != nil {
				return err
			}
			if mode == "" {
				res.Mode = "default (" + string(e.DefaultMode()) + ")"
			}
			if a.Config.JSON {
				return writeJSON(g.stdout, res)
			}
			fmt.Fprintf(g.stdout, "set          %s (%d queries)\n", res.Set, res.Queries)
			fmt.Fprintf(g.stdout, "mode         %s\n", res.Mode)
			fmt.Fprintf(g.stdout, "nDCG@10      %.4f\n", res.NDCGAt10)
			fmt.Fprintf(g.stdout, "recall@10    %.4f\n", res.RecallAt10)
			fmt.Fprintf(g.stdout, "MRR@10       %.4f\n", res.MRRAt10)
			fmt.Fprintf(g.stdout, "latency      p50 %.2f ms, p99 %.2f ms\n", res.Latency.P50, res.Latency.P99)
			short := func(pages []string) string {
				out := make([]string, len(pages))
				for i, p := range pages {
					out[i] = p
					if docs != "" {
						if abs, err := filepath.Abs(docs); err == nil {
							out[i] = strings.TrimPrefix(p, filepath.ToSlash(abs)+"/")
						}
					}
				}
				return strings.Join(out, ", ")
			}
			first := true
			for _, o := range res.PerQuery {
				if o.Rank == 1 {
					continue
				}
				if first {
					fmt.Fprintf(g.stdout, "\nanswer not first (rank of the answering page, 0 = not in the top 10):\n")
					first = false
				}
				fmt.Fprintf(g.stdout, "  %-6s rank %2d  %q\n         top: %s\n", o.ID, o.Rank, o.Query, short(o.Top))
				if len(o.Missed) > 0 {
					fmt.Fprintf(g.stdout, "         not in the top 10: %s\n", strings.Join(o.Missed, ", "))
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&queries, "queries", "", "query set: TSV of id<TAB>query<TAB>page=grade ...")
	f.StringVar(&docs, "docs", "", "folder of documents to index into a temporary index (instead of --db)")
	f.StringVar(&mode, "mode", "", "retrieval mode: keyword, semantic, hybrid (default: hybrid with an embedder)")
	addEmbedderFlags(f)
	return cmd
}

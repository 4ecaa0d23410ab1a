package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/eval"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store"
)

func newEvalCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Measure retrieval quality on a labelled dataset",
	}
	cmd.AddCommand(newEvalBEIRCmd(g), newEvalQueriesCmd(g), newEvalGoalsCmd(g), newEvalAskCmd(g))
	return cmd
}

func newEvalBEIRCmd(g *globals) *cobra.Command {
	var dataset, split, mode, half string
	cmd := &cobra.Command{
		Use:   "beir --dataset DIR",
		Short: "Evaluate on a BEIR-layout dataset (nDCG@10, recall@10/100, MRR@10, latency)",
		Long: `Indexes a BEIR-layout folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv)
into a temporary index — or into --db when given, reusing what is already
there — runs every judged query and prints nDCG@10, recall@10, recall@100,
MRR@10 and the query latency percentiles.`,
		Example: `  sagasu eval beir --dataset ../shared/data/scifact
  sagasu eval beir --dataset ../shared/data/scifact --db /tmp/scifact.db --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			if dataset == "" {
				return usagef("--dataset is required: a folder with corpus.jsonl, queries.jsonl and qrels/")
			}
			ctx := cmd.Context()
			ds, err := eval.LoadBEIR(dataset, split)
			if err != nil {
				return err
			}
			switch half {
			case "":
			case "odd", "even":
				ds.KeepHalf(half == "odd")
			default:
				return usagef("--half %q: use odd or even", half)
			}
			mi, err := openMeasureIndex(ctx, cmd, a, "eval")
			if err != nil {
				return err
			}
			defer mi.close()
			st, emb := mi.store, mi.embedder
			opt := a.IndexOptions()
			opt.Embedder = emb
			ix := index.New(st, opt)
			if !a.Config.JSON {
				fmt.Fprintf(g.stderr, "indexing %d documents from %s ...\n", len(ds.Docs), dataset)
			}
			ist, err := eval.IndexDataset(ctx, ix, ds)
			if err != nil {
				return err
			}
			e := a.Engine(st, emb)
			if mode == "" {
				mode = string(e.DefaultMode())
			}
			// Latency is reported as a long-running server answers: from
			// warm caches.
			if w, ok := st.(store.Warmer); ok {
				if err := w.Warm(ctx); err != nil {
					return err
				}
			}
			res, err := eval.Run(ctx, e, ds, search.Mode(mode))
			if err != nil {
				return err
			}
			res.Index = &ist
			if a.Config.JSON {
				return writeJSON(g.stdout, res)
			}
			fmt.Fprintf(g.stdout, "dataset      %s (%d docs, %d chunks, %d queries)\n", res.Dataset, ist.Docs, ist.Chunks, res.Queries)
			fmt.Fprintf(g.stdout, "mode         %s\n", res.Mode)
			fmt.Fprintf(g.stdout, "nDCG@10      %.4f\n", res.NDCGAt10)
			fmt.Fprintf(g.stdout, "recall@10    %.4f\n", res.RecallAt10)
			fmt.Fprintf(g.stdout, "recall@100   %.4f\n", res.RecallAt100)
			fmt.Fprintf(g.stdout, "MRR@10       %.4f\n", res.MRRAt10)
			fmt.Fprintf(g.stdout, "latency      p50 %.2f ms, p99 %.2f ms\n", res.Latency.P50, res.Latency.P99)
			fmt.Fprintf(g.stdout, "indexing     %.2f s (%.1f MB/s)\n", ist.Seconds, ist.MBps)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dataset, "dataset", "", "BEIR dataset folder")
	f.StringVar(&split, "split", "test", "qrels split to evaluate")
	f.StringVar(&half, "half", "", "evaluate only the queries with an odd or even numeric ID (tune on one half, check on the other)")
	f.StringVar(&mode, "mode", "", "retrieval mode: keyword, semantic, hybrid (default: hybrid with an embedder)")
	addEmbedderFlags(f)
	f.Int("chunk-size", 0, "maximum tokens per chunk (default 512)")
	f.Int("chunk-overlap", 0, "tokens repeated between pieces of a long section (default 64)")
	return cmd
}

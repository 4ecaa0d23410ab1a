package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/eval"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/search"
)

func newBenchCmd(g *globals) *cobra.Command {
	var (
		chunks, queries int
		corpus, mode    string
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Benchmark indexing and querying on a synthetic corpus of real text",
		Long: `Bench builds a corpus of --chunks documents from real text (each mixes the
sentences of two passages of --corpus, a BEIR corpus.jsonl), indexes it into a
temporary index (or --db), then times queries (the dataset's queries.jsonl when
it sits beside the corpus, else sentences of the corpus). It prints indexing
throughput, query latency p50/p99, database size and peak memory.`,
		Example: `  sagasu bench --chunks 100000 --corpus ../shared/data/scifact/corpus.jsonl`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			if chunks < 1 {
				return usagef("--chunks must be at least 1")
			}
			ctx := cmd.Context()
			texts, err := eval.ReadTexts(corpus)
			if err != nil {
				return err
			}
			qs := benchQueries(filepath.Join(filepath.Dir(corpus), "queries.jsonl"), texts)
			mi, err := openMeasureIndex(ctx, cmd, a, "bench")
			if err != nil {
				return err
			}
			defer mi.close()
			st, emb := mi.store, mi.embedder
			opt := a.IndexOptions()
			opt.Embedder = emb
			e := a.Engine(st, emb)
			if mode == "" {
				mode = string(e.DefaultMode())
			}
			if !a.Config.JSON {
				fmt.Fprintf(g.stderr, "indexing %d synthetic documents ...\n", chunks)
			}
			res, err := eval.Bench(ctx, index.New(st, opt), e, st, texts, qs,
				eval.BenchOptions{Chunks: chunks, Queries: queries, K: a.Config.Search.K, Mode: search.Mode(mode), Seed: 1})
			if err != nil {
				return err
			}
			if a.Config.JSON {
				return writeJSON(g.stdout, res)
			}
			fmt.Fprintf(g.stdout, "corpus     %d sources, %d chunks, %.1f MB\n", res.Sources, res.Chunks, res.MB)
			fmt.Fprintf(g.stdout, "indexing   %.1f s: %.0f chunks/s, %.2f MB/s\n", res.IndexSeconds, res.ChunksPerSec, res.MBPerSec)
			if res.Embedded > 0 {
				fmt.Fprintf(g.stdout, "embedding  %d chunks at %.0f chunks/s\n", res.Embedded, res.EmbedChunksPerSec)
			}
			if res.WarmSeconds > 0 {
				fmt.Fprintf(g.stdout, "warm-up    %.2f s to load the caches of a long-running process\n", res.WarmSeconds)
			}
			fmt.Fprintf(g.stdout, "queries    %d (%s, k=%d): p50 %.2f ms, p99 %.2f ms\n", res.Queries, res.Mode, a.Config.Search.K, res.Latency.P50, res.Latency.P99)
			fmt.Fprintf(g.stdout, "database   %.1f MB\n", float64(res.DBBytes)/1e6)
			fmt.Fprintf(g.stdout, "memory     peak RSS %.0f MB, peak Go heap %.0f MB\n", res.PeakRSSMB, res.PeakHeapMB)
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&chunks, "chunks", 10000, "corpus size in documents (about one chunk each)")
	f.IntVar(&queries, "queries", 1000, "queries to time")
	f.StringVar(&corpus, "corpus", "../shared/data/scifact/corpus.jsonl", "BEIR corpus.jsonl to draw text from")
	f.StringVar(&mode, "mode", "", "retrieval mode: keyword, semantic, hybrid (default: hybrid with an embedder)")
	addEmbedderFlags(f)
	f.IntP("k", "k", 10, "results per query")
	return cmd
}

// benchQueries reads a BEIR queries.jsonl, or falls back to corpus sentences.
func benchQueries(path string, texts []string) []string {
	if ds, err := eval.ReadTexts(path); err == nil && len(ds) > 0 {
		return ds
	}
	var qs []string
	for i := 0; i < len(texts) && len(qs) < 1000; i += 7 {
		qs = append(qs, snippet(texts[i], 80))
	}
	return qs
}

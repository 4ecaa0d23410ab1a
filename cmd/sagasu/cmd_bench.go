package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/eval"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store/vecindex"
)

func newBenchCmd(g *globals) *cobra.Command {
	var (
		chunks, queries            int
		corpus, mode               string
		vectors, dim, vqueries, ef int
		efSweep                    []int
		vchanges                   int
		buildLimit                 time.Duration
		vectorsFrom                string
		queriesFile, exportChunks  string
		exportVectors              string
		memProfile                 string
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Benchmark indexing and querying on a synthetic corpus of real text",
		Long: `Bench builds a corpus of --chunks documents from real text (each mixes the
sentences of two passages of --corpus, a BEIR corpus.jsonl), indexes it into a
temporary index (or --db), then times queries (the dataset's queries.jsonl when
it sits beside the corpus, else sentences of the corpus). It prints indexing
throughput, query latency p50/p99, database size and peak memory.

With --vectors N it prints a vector section instead (both when --chunks is
also given): N vectors in memory, synthetic clustered ones of --dim
dimensions, or with --vectors-from drawn from the embeddings of an existing
SQLite index (some held out as queries, the rest and mixes of pairs of
them) or from a vector file made by scripts/vecdata (its rows, mixed in
pairs past their number, and its held-out queries). It times
--vector-queries top-k searches on each path: the exact
scan (SIMD and portable Go), int8 with exact re-ranking (AVX2 assembly) and
the HNSW graph, with recall@k against the exact scan, the graph's build time
and the memory of each; then --vector-changes vectors are linked into the
graph one at a time and as many deleted and repaired, and the graph is
timed again. --vector-build-limit bounds the graph's build (at a million
vectors it takes many minutes on two cores): past it the scans' numbers are
printed and the graph's are not. No model server is needed.

--export-chunks FILE writes the chunks --chunks N would index, one JSON
object a line (id, title, heading, text), and indexes nothing: other search
engines fed that file index exactly the same text (scripts/peers.sh).
--export-vectors FILE likewise writes the vectors and queries --vectors N
would search, as a vector file, and measures nothing: scripts/faiss-hnsw.sh
builds FAISS's HNSW over that file.
--queries-file times the queries of another queries.jsonl.`,
		Example: `  sagasu bench --chunks 100000 --corpus ../shared/data/scifact/corpus.jsonl
  sagasu bench --vectors 100000 --dim 384
  sagasu bench --vectors 100000 --vectors-from index-with-embeddings.db`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if vectors < 0 || dim < 1 || vqueries < 1 {
				return usagef("--vectors must not be negative, --dim and --vector-queries must be at least 1")
			}
			vopt := eval.VectorBenchOptions{Vectors: vectors, Dim: dim, Queries: vqueries, K: a.Config.Search.K, Seed: 1, ApproxEf: ef, SweepEf: efSweep, Changes: vchanges, BuildLimit: buildLimit}
			if exportVectors != "" {
				if vectors < 1 {
					return usagef("--export-vectors needs --vectors N, the collection size to write")
				}
				return benchExportVectors(cmd, g, vopt, vectorsFrom, exportVectors, a.Config.JSON)
			}
			var vres *eval.VectorBenchResult
			if vectors > 0 {
				r, err := benchVectors(cmd, g, vopt, vectorsFrom, a.Config.JSON)
				if err != nil {
					return err
				}
				vres = &r
				if !cmd.Flags().Changed("chunks") {
					if a.Config.JSON {
						return writeJSON(g.stdout, vres)
					}
					return nil
				}
			}
			if chunks < 1 {
				return usagef("--chunks must be at least 1")
			}
			texts, err := eval.ReadTexts(corpus)
			if err != nil {
				return err
			}
			if exportChunks != "" {
				return benchExport(g, a, texts, chunks, exportChunks)
			}
			if queriesFile == "" {
				queriesFile = filepath.Join(filepath.Dir(corpus), "queries.jsonl")
			} else if _, err := os.Stat(queriesFile); err != nil {
				return usagef("--queries-file: %v", err)
			}
			qs := benchQueries(queriesFile, texts)
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
			// The cold section opens the index as `sagasu query` does.
			cold := func(ctx context.Context) (*search.Engine, func(), error) {
				cst, err := app.OpenStoreWith(ctx, mi.path, app.StoreOptions{})
				if err != nil {
					return nil, nil, err
				}
				return a.Engine(cst, emb), func() { cst.Close() }, nil
			}
			var heapProfile io.Writer
			if memProfile != "" {
				f, err := os.Create(memProfile)
				if err != nil {
					return err
				}
				defer f.Close()
				heapProfile = f
			}
			res, err := eval.Bench(ctx, index.New(st, opt), e, st, texts, qs,
				eval.BenchOptions{Chunks: chunks, Queries: queries, K: a.Config.Search.K, Mode: search.Mode(mode), Seed: 1, Cold: cold, HeapProfile: heapProfile,
					Serving: func() { app.ServingGC(a.Getenv) }})
			if err != nil {
				return err
			}
			res.Vectors = vres
			if a.Config.JSON {
				return writeJSON(g.stdout, res)
			}
			fmt.Fprintf(g.stdout, "corpus     %d sources, %d chunks, %.1f MB\n", res.Sources, res.Chunks, res.MB)
			fmt.Fprintf(g.stdout, "indexing   %.1f s: %.0f chunks/s, %.2f MB/s (%.1f s of CPU)\n", res.IndexSeconds, res.ChunksPerSec, res.MBPerSec, res.IndexCPUSeconds)
			if res.Embedded > 0 {
				fmt.Fprintf(g.stdout, "embedding  %d chunks at %.0f chunks/s\n", res.Embedded, res.EmbedChunksPerSec)
			}
			if res.WarmSeconds > 0 {
				fmt.Fprintf(g.stdout, "warm-up    %.2f s to load the caches of a long-running process\n", res.WarmSeconds)
			}
			fmt.Fprintf(g.stdout, "queries    %d (%s, k=%d): p50 %.2f ms, p99 %.2f ms from warm caches\n", res.Queries, res.Mode, a.Config.Search.K, res.Latency.P50, res.Latency.P99)
			if s := res.StoreLatency; s != nil {
				fmt.Fprintf(g.stdout, "store      p50 %.2f ms, p99 %.2f ms for chunk IDs and scores alone (no re-rank, no text)\n", s.P50, s.P99)
			}
			if res.Cold != nil {
				fmt.Fprintf(g.stdout, "cold       p50 %.2f ms, p99 %.2f ms without caches (as sagasu query); open+query+close p50 %.2f ms, p99 %.2f ms\n", res.Cold.P50, res.Cold.P99, res.OneShot.P50, res.OneShot.P99)
			}
			fmt.Fprintf(g.stdout, "database   %.1f MB (%.2fx the text)\n", float64(res.DBBytes)/1e6, float64(res.DBBytes)/1e6/max(res.MB, 1e-9))
			fmt.Fprintf(g.stdout, "memory     peak RSS %.0f MB (indexing %.0f MB, serving %.0f MB), peak Go heap %.0f MB\n", res.PeakRSSMB, res.IndexPeakRSSMB, res.ServePeakRSSMB, res.PeakHeapMB)
			fmt.Fprintf(g.stdout, "serving    RSS %.0f MB after the queries, keyword cache %.0f MB\n", res.ServeRSSMB, res.KeywordCacheMB)
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&chunks, "chunks", 10000, "corpus size in documents (about one chunk each)")
	f.IntVar(&queries, "queries", 1000, "queries to time")
	f.StringVar(&corpus, "corpus", "../shared/data/scifact/corpus.jsonl", "BEIR corpus.jsonl to draw text from")
	f.StringVar(&mode, "mode", "", "retrieval mode: keyword, semantic, hybrid (default: hybrid with an embedder)")
	f.IntVar(&vectors, "vectors", 0, "vector section: collection size in vectors (0: no vector section)")
	f.IntVar(&dim, "dim", 384, "dimensions of synthetic vectors")
	f.IntVar(&vqueries, "vector-queries", 200, "queries to time on each vector search path")
	f.IntVar(&ef, "hnsw-ef", 0, "HNSW search list length (0: the default for the graph's size)")
	f.IntSliceVar(&efSweep, "hnsw-ef-sweep", nil, "further HNSW search list lengths to time the built graph with, each with its recall (e.g. 192,256,384)")
	f.IntVar(&vchanges, "vector-changes", 1000, "vectors added to and then deleted from the graph in place, after the build (0: none)")
	f.DurationVar(&buildLimit, "vector-build-limit", 0, "stop the graph's build after this long and report the scans only (0: no limit)")
	f.StringVar(&queriesFile, "queries-file", "", "queries.jsonl to time (default: the one beside --corpus, else corpus sentences)")
	f.StringVar(&exportChunks, "export-chunks", "", "write the chunks --chunks N makes to this JSONL file and index nothing")
	f.StringVar(&exportVectors, "export-vectors", "", "write the vectors and queries --vectors N searches to this vector file and measure nothing (for another engine, e.g. scripts/faiss-hnsw.sh)")
	f.StringVar(&memProfile, "memprofile", "", "write a heap profile taken while serving, after the timed queries (for performance work)")
	_ = f.MarkHidden("memprofile")
	f.StringVar(&vectorsFrom, "vectors-from", "", "SQLite index, or vector file of scripts/vecdata, whose embeddings the vector section draws from (default: synthetic clusters)")
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

// benchExport writes the bench's chunks to path (see eval.ExportChunks)
// and says how many, as JSON with --json.
func benchExport(g *globals, a *app.App, texts []string, n int, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--export-chunks: %w", err)
	}
	sum, err := eval.ExportChunks(f, texts, n, 1, a.ChunkOptions())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("export chunks to %s: %w", path, err)
	}
	if a.Config.JSON {
		return writeJSON(g.stdout, sum)
	}
	fmt.Fprintf(g.stdout, "exported   %d chunks of %d sources (%.1f MB of text) to %s\n", sum.Chunks, sum.Sources, sum.MB, path)
	return nil
}

// benchExportVectors writes the collection and queries the vector section
// would search to path, in the format of eval.WriteVectorFile.
func benchExportVectors(cmd *cobra.Command, g *globals, opt eval.VectorBenchOptions, from, path string, asJSON bool) error {
	var err error
	if opt, err = withVectorsFrom(cmd, opt, from); err != nil {
		return err
	}
	rows, queries, source, err := eval.BenchVectors(opt)
	if err != nil {
		return err
	}
	if err := eval.WriteVectorFile(path, rows, queries); err != nil {
		return fmt.Errorf("--export-vectors: %w", err)
	}
	sum := struct {
		Vectors int    `json:"vectors"`
		Queries int    `json:"queries"`
		Dim     int    `json:"dim"`
		Source  string `json:"source"`
		Path    string `json:"path"`
	}{len(rows), len(queries), len(rows[0]), source, path}
	if asJSON {
		return writeJSON(g.stdout, sum)
	}
	fmt.Fprintf(g.stdout, "exported   %d vectors and %d queries of %d dimensions (%s) to %s\n", sum.Vectors, sum.Queries, sum.Dim, sum.Source, path)
	return nil
}

// withVectorsFrom fills opt's real vectors from a vector file or a SQLite
// index with embeddings; from "" leaves the synthetic clusters.
func withVectorsFrom(cmd *cobra.Command, opt eval.VectorBenchOptions, from string) (eval.VectorBenchOptions, error) {
	if from != "" && eval.IsVectorFile(from) {
		real, queries, err := eval.ReadVectorFile(from)
		if err != nil {
			return opt, err
		}
		opt.Real, opt.RealQueries = real, queries
	} else if from != "" {
		real, err := eval.ReadIndexVectors(cmd.Context(), from)
		if err != nil {
			return opt, err
		}
		opt.Real = real
	}
	return opt, nil
}

// benchVectors runs the vector section and prints it unless JSON output
// is asked for.
func benchVectors(cmd *cobra.Command, g *globals, opt eval.VectorBenchOptions, from string, asJSON bool) (eval.VectorBenchResult, error) {
	ctx := cmd.Context()
	opt, err := withVectorsFrom(cmd, opt, from)
	if err != nil {
		return eval.VectorBenchResult{}, err
	}
	if !asJSON {
		fmt.Fprintf(g.stderr, "building %d vectors and timing searches ...\n", opt.Vectors)
	}
	r, err := eval.VectorBench(ctx, opt)
	if err != nil || asJSON {
		return r, err
	}
	w := g.stdout
	simd := "portable Go"
	if r.SIMD {
		simd = "AVX2 via vek"
	}
	fmt.Fprintf(w, "vectors    %d x %d, %s; %d queries, k=%d, %d cores\n", r.Vectors, r.Dim, r.Source, r.Queries, r.K, r.Cores)
	fmt.Fprintf(w, "exact      p50 %.2f ms, p99 %.2f ms (%s), matrix %.0f MB\n", r.Exact.Latency.P50, r.Exact.Latency.P99, simd, r.Exact.MB)
	fmt.Fprintf(w, "portable   p50 %.2f ms, p99 %.2f ms (exact, plain Go)\n", r.Portable.Latency.P50, r.Portable.Latency.P99)
	int8 := "plain Go"
	if r.Int8SIMD {
		int8 = "AVX2 assembly"
	}
	fmt.Fprintf(w, "int8       p50 %.2f ms, p99 %.2f ms, recall@%d %.4f (%s, %d re-ranked), +%.0f MB\n", r.Int8.Latency.P50, r.Int8.Latency.P99, r.K, r.Int8.Recall, int8, vecindex.DefaultRerank, r.Int8.MB)
	if r.GraphStopped {
		fmt.Fprintf(w, "hnsw       not built: stopped after %.1f s (--vector-build-limit)\n", r.BuildSeconds)
	} else {
		fmt.Fprintf(w, "hnsw       p50 %.2f ms, p99 %.2f ms, recall@%d %.4f at ef %d, built in %.1f s, +%.1f MB\n", r.Approx.Latency.P50, r.Approx.Latency.P99, r.K, r.Approx.Recall, r.Ef, r.BuildSeconds, r.Approx.MB)
		for _, e := range r.EfSweep {
			fmt.Fprintf(w, "  ef %-5d p50 %.2f ms, p99 %.2f ms, recall@%d %.4f\n", e.Ef, e.Latency.P50, e.Latency.P99, r.K, e.Recall)
		}
	}
	if c := r.Changes; c != nil {
		fmt.Fprintf(w, "changes    +%d linked at %.2f ms each, -%d repaired in %.2f s; then p50 %.2f ms, p99 %.2f ms, recall@%d %.4f\n", c.Added, c.LinkMs, c.Deleted, c.RepairSeconds, c.After.Latency.P50, c.After.Latency.P99, r.K, c.After.Recall)
	}
	fmt.Fprintf(w, "memory     peak RSS %.0f MB\n", r.PeakRSSMB)
	return r, nil
}

package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/glob"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

func newQueryCmd(g *globals) *cobra.Command {
	var (
		mode, pathGlob string
		types          []string
		full           bool
		mmr            float64
	)
	cmd := &cobra.Command{
		Use:   "query TEXT",
		Short: "Search the index",
		Long: `Query ranks chunks and prints the best -k with their source, heading path,
line span and score.

  keyword   BM25 over text, heading path and title (scores: BM25). English words
            are stemmed; Japanese, Chinese and Korean match by character bigrams.
  semantic  cosine similarity of embeddings (scores: cosine, -1..1).
  hybrid    both lists fused by reciprocal rank fusion (scores: fused rank).

Hybrid is the default when the index has an embedder, keyword otherwise.`,
		Example: `  sagasu query "dynamic routes"
  sagasu query -k 3 --glob 'docs/**' "sidebar config"
  sagasu query --json "設定ファイル"`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			q := strings.Join(args, " ")
			if strings.TrimSpace(q) == "" {
				return usagef("empty query: give the words to search for")
			}
			k := a.Config.Search.K
			if k < 1 || k > search.MaxK {
				return usagef("-k %d is out of range: use 1 to %d", k, search.MaxK)
			}
			if mmr < 0 || mmr > 1 {
				return usagef("--mmr %v: use a relevance weight between 0 (off) and 1", mmr)
			}
			if pathGlob != "" {
				if err := glob.Valid(pathGlob); err != nil {
					return usagef("--glob: %v", err)
				}
			}
			for _, t := range types {
				// Said in the flag's name, not the MCP argument's the toolset uses.
				if _, err := tools.Filter([]string{t}, "", nil); err != nil {
					return fmt.Errorf("--type %q is not a source type; give file, text, url, github or gist", t)
				}
			}
			ctx := cmd.Context()
			rt, err := a.Open(ctx, app.OpenOptions{NoCache: true})
			if err != nil {
				return err
			}
			defer rt.Close()
			res, err := rt.Tools.Query(ctx, tools.QueryInput{Query: q, K: k, MaxK: search.MaxK, Mode: mode, Types: types, Glob: pathGlob, MMR: mmr})
			if err != nil {
				return err
			}
			resp := search.Response{Query: q, Mode: res.Mode, Took: res.Took}
			for _, h := range res.Hits {
				resp.Hits = append(resp.Hits, h.Hit)
			}
			if a.Config.JSON {
				return writeJSON(g.stdout, resp.View())
			}
			if len(resp.Hits) == 0 {
				fmt.Fprintf(g.stdout, "no results for %q\n", q)
				return nil
			}
			for i, h := range resp.Hits {
				loc := fmt.Sprintf("%s:%d-%d", h.Source.URI, h.Chunk.StartLine, h.Chunk.EndLine)
				fmt.Fprintf(g.stdout, "%2d. %s  score %.2f\n", i+1, loc, h.Score)
				if hp := h.Chunk.HeadingPath(); hp != "" {
					fmt.Fprintf(g.stdout, "    %s\n", hp)
				}
				if full {
					for _, line := range strings.Split(strings.TrimRight(h.Chunk.Text, "\n"), "\n") {
						fmt.Fprintf(g.stdout, "    │ %s\n", line)
					}
				} else {
					fmt.Fprintf(g.stdout, "    %s\n", snippet(h.Chunk.Text, 200))
				}
			}
			fmt.Fprintf(g.stdout, "(%d results in %s)\n", len(resp.Hits), resp.Took.Round(10_000))
			return nil
		},
	}
	f := cmd.Flags()
	f.IntP("k", "k", 10, "number of results")
	f.StringVar(&mode, "mode", "", "retrieval mode: keyword, semantic, hybrid (default: hybrid when the index has an embedder, else keyword)")
	f.Float64Var(&mmr, "mmr", 0, "re-rank for diversity with maximal marginal relevance (relevance weight, e.g. 0.7; needs an embedder)")
	addEmbedderFlags(f)
	f.StringVar(&pathGlob, "glob", "", "only sources whose URI matches this glob")
	f.StringSliceVar(&types, "type", nil, "only sources of these types: file, text, url, github, gist")
	f.BoolVar(&full, "full", false, "print whole chunks instead of snippets")
	return cmd
}

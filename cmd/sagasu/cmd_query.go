package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// queryOptions are `sagasu query`'s flags.
type queryOptions struct {
	k        int
	mode     string
	glob     string
	types    []string
	full     bool
	mmr      float64
	json     bool
	section  bool
	wholeSrc bool
}

func newQueryCmd(g *globals) *cobra.Command {
	var opts queryOptions
	cmd := &cobra.Command{
		Use:   "query TEXT",
		Short: "Search the index",
		Long: `Query ranks chunks and prints the best -k (at most 50) with their source,
heading path, line span and relevance: the score over the best score of the
same search, from 0 to 1.

  keyword   BM25 over text, heading path and title. English words are
            stemmed; Japanese, Chinese and Korean match by words and bigrams.
  semantic  cosine similarity of embeddings.
  hybrid    both lists fused by reciprocal rank fusion.

Hybrid is the default when the index has an embedder, keyword otherwise.
--json prints what sagasu_query answers over MCP and the page's API.`,
		Example: `  sagasu query "dynamic routes"
  sagasu query -k 3 --glob 'docs/**' "sidebar config"
  sagasu query --json "設定ファイル"`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			opts.k, opts.json = a.Config.Search.K, a.Config.JSON
			ctx := cmd.Context()
			rt, err := a.Open(ctx, app.OpenOptions{NoCache: true})
			if err != nil {
				return err
			}
			defer rt.Close()
			return runQuery(ctx, g, rt, opts, args)
		},
	}
	f := cmd.Flags()
	f.IntP("k", "k", 10, "number of results (1 to 50)")
	f.StringVar(&opts.mode, "mode", "", "retrieval mode: keyword, semantic, hybrid (default: hybrid when the index has an embedder, else keyword)")
	f.Float64Var(&opts.mmr, "mmr", 0, "re-rank for variety with maximal marginal relevance (relevance weight, e.g. 0.7; needs an embedder)")
	addEmbedderFlags(f)
	f.StringVar(&opts.glob, "glob", "", "only sources whose URI matches this glob")
	f.StringSliceVar(&opts.types, "type", nil, "only sources of these types: file, text, url, github, gist")
	f.BoolVar(&opts.full, "full", false, "print whole chunks instead of snippets")
	f.BoolVar(&opts.section, "whole-section", false, "add the whole section each result lies in")
	// The old name, which get uses for a heading: one name, one meaning.
	f.BoolVar(&opts.section, "section", false, "add the whole section each result lies in")
	_ = f.MarkDeprecated("section", "use --whole-section (get's --section names a heading)")
	f.BoolVar(&opts.wholeSrc, "whole-source", false, "add each result's whole source")
	return cmd
}

// runQuery runs sagasu_query for the words of args and prints its answer.
func runQuery(ctx context.Context, g *globals, rt *app.Runtime, opts queryOptions, args []string) error {
	in := tools.QueryInput{Query: strings.Join(args, " "), K: opts.k, Mode: opts.mode, Types: opts.types, Glob: opts.glob,
		MMR: opts.mmr, WholeSection: opts.section, WholeSource: opts.wholeSrc}
	if strings.TrimSpace(in.Query) == "" {
		return usagef("empty query: give the words to search for")
	}
	reply, err := callOp(ctx, rt, tools.NameQuery, in, map[string]any{"k": opts.k})
	if err != nil {
		return err
	}
	if opts.json {
		return g.writeReply(reply)
	}
	out := reply.Out.(tools.QueryOutput)
	if len(out.Results) == 0 {
		fmt.Fprintf(g.stdout, "no results for %q\n", in.Query)
		return nil
	}
	text := 200
	if opts.full {
		text = tools.NoLimit
	}
	var b strings.Builder
	tools.WriteResults(&b, out.Results, text)
	fmt.Fprintf(g.stdout, "%s\n(%s, %s)\n", strings.TrimPrefix(b.String(), "\n"), tools.Count(len(out.Results), "result"), out.Mode)
	return nil
}

package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/glob"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

func newListCmd(g *globals) *cobra.Command {
	var (
		typ, pathGlob string
		limit, offset int
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List indexed sources",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			if pathGlob != "" {
				if err := glob.Valid(pathGlob); err != nil {
					return usagef("--glob: %v", err)
				}
			}
			if limit < 0 || offset < 0 {
				return usagef("--limit and --offset must not be negative")
			}
			ctx := cmd.Context()
			rt, err := a.Open(ctx, app.OpenOptions{NoEmbedder: true, NoCache: true})
			if err != nil {
				return err
			}
			defer rt.Close()
			res, err := rt.Tools.List(ctx, tools.ListInput{Type: typ, Glob: pathGlob, Limit: limit, Offset: offset, Unbounded: true})
			if err != nil {
				return err
			}
			srcs := res.Sources
			if a.Config.JSON {
				// The same rows as sagasu_list's.
				return writeJSON(g.stdout, map[string]any{"sources": res.Output(len(srcs), "").Sources})
			}
			if len(srcs) == 0 {
				fmt.Fprintln(g.stdout, "no sources")
				return nil
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tTYPE\tCHUNKS\tURI\tTITLE")
			for _, s := range srcs {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", s.ID, s.Type, s.Chunks, s.URI, snippet(s.Title, 60))
			}
			return tw.Flush()
		},
	}
	f := cmd.Flags()
	f.StringVar(&typ, "type", "", "only sources of this type: file, text, url, github, gist")
	f.StringVar(&pathGlob, "glob", "", "only sources whose URI matches this glob")
	f.IntVar(&limit, "limit", 0, "at most this many sources (0: all)")
	f.IntVar(&offset, "offset", 0, "skip this many sources first")
	return cmd
}

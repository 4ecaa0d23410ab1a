package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/glob"
	"github.com/sagasu-dev/sagasu/internal/store"
)

func newDeleteCmd(g *globals) *cobra.Command {
	var pathGlob string
	cmd := &cobra.Command{
		Use:   "delete [SOURCE]...",
		Short: "Remove sources from the index",
		Long: `Delete removes sources — named by ID, URI or a unique end of the URI — or
every source whose URI matches --glob, with their chunks.`,
		Example: `  sagasu delete docs/old.md
  sagasu delete --glob 'drafts/**'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			if len(args) == 0 && pathGlob == "" {
				return usagef("name the sources to delete, or give --glob")
			}
			if pathGlob != "" {
				if err := glob.Valid(pathGlob); err != nil {
					return usagef("--glob: %v", err)
				}
			}
			ctx := cmd.Context()
			st, err := a.OpenStore(ctx, false)
			if err != nil {
				return err
			}
			defer st.Close()
			e := a.Engine(st, nil)
			var ids, uris []string
			for _, ref := range args {
				src, err := e.Resolve(ctx, ref)
				if err != nil {
					return err
				}
				ids, uris = append(ids, src.ID), append(uris, src.URI)
			}
			if pathGlob != "" {
				srcs, err := st.Sources(ctx, store.ListOptions{PathGlob: pathGlob})
				if err != nil {
					return err
				}
				if len(srcs) == 0 && len(args) == 0 {
					return fmt.Errorf("no source matches %q (see `sagasu list`)", pathGlob)
				}
				for _, s := range srcs {
					ids, uris = append(ids, s.ID), append(uris, s.URI)
				}
			}
			n, err := st.Delete(ctx, ids)
			if err != nil {
				return err
			}
			if a.Config.JSON {
				return writeJSON(g.stdout, map[string]any{"deleted": n, "uris": uris})
			}
			for _, u := range uris {
				fmt.Fprintln(g.stdout, "deleted", u)
			}
			fmt.Fprintf(g.stdout, "%d source(s) deleted\n", n)
			return nil
		},
	}
	cmd.Flags().StringVar(&pathGlob, "glob", "", "delete every source whose URI matches this glob")
	return cmd
}

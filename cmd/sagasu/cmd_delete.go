package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/glob"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

func newDeleteCmd(g *globals) *cobra.Command {
	var pathGlob string
	cmd := &cobra.Command{
		Use:   "delete [SOURCE]...",
		Short: "Remove sources from the index",
		Long: `Delete removes sources — named by ID, URI, a unique end of the URI or the
path of an indexed file in any spelling (see sagasu get) — or every source
whose URI matches --glob, with their chunks. --glob matches URIs as stored
(paths from the index's root, see sagasu index --help).`,
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
			rt, err := a.Open(ctx, app.OpenOptions{NoEmbedder: true, NoCache: true})
			if err != nil {
				return err
			}
			defer rt.Close()
			refs := make([]string, len(args))
			for i, ref := range args {
				refs[i] = rt.SourceRef(ctx, ref)
			}
			res, err := rt.Tools.Delete(ctx, tools.DeleteInput{Sources: refs, Glob: pathGlob})
			if err != nil {
				return err
			}
			n, uris := res.Deleted, res.URIs()
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

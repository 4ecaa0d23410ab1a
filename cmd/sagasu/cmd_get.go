package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

func newGetCmd(g *globals) *cobra.Command {
	var section string
	cmd := &cobra.Command{
		Use:   "get SOURCE",
		Short: "Print a source's original content, whole or one section of it",
		Long: `Get prints the original content of a source, named by its ID, its URI, a
unique end of its URI ("routing.md"), or the path of an indexed file from the
working directory in any spelling ("../project/docs/a.md", an absolute path,
a path through a symlinked folder). --section prints one section with its
subsections: a heading ("Dynamic Routes") or a heading path
("Routing > Dynamic Routes"), matched case-insensitively.`,
		Example: `  sagasu get docs/guide/routing.md
  sagasu get routing.md --section "Dynamic Routes"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			rt, err := a.Open(ctx, app.OpenOptions{NoEmbedder: true, NoCache: true})
			if err != nil {
				return err
			}
			defer rt.Close()
			res, err := rt.Tools.Get(ctx, tools.GetInput{Source: rt.SourceRef(ctx, args[0]), Section: section})
			if err != nil {
				return err
			}
			orig := res.Original
			if a.Config.JSON {
				return writeJSON(g.stdout, map[string]any{
					"source": search.ViewSource(orig.Source), "section": orig.Section,
					"lines": [2]int{orig.StartLine, orig.EndLine}, "content": orig.Content,
				})
			}
			fmt.Fprint(g.stdout, orig.Content)
			if !strings.HasSuffix(orig.Content, "\n") && orig.Content != "" {
				fmt.Fprintln(g.stdout)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&section, "section", "", "print only this section")
	return cmd
}

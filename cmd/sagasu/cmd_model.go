package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/app"
)

func newModelCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Prepare local embedding models",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "import SRC DST",
		Short: "Convert GloVe or word2vec text vectors into sagasu's compact binary",
		Long: `Import reads word vectors in GloVe text ("word v1 v2 ...") or word2vec text
format (first line "count dim") and writes sagasu's compact binary (float16),
which loads several times faster. Use the result with
--embedder static --embedder-path DST.`,
		Example: `  sagasu model import glove.6B.100d.txt models/glove-100d.bin`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := app.ImportWordVectors(args[0], args[1]); err != nil {
				return err
			}
			fi, err := os.Stat(args[1])
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "wrote %s (%.1f MB)\n", args[1], float64(fi.Size())/1e6)
			return nil
		},
	})
	return cmd
}

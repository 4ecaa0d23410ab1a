package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/app"
)

func newModelCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Prepare local embedding models",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "pull NAME",
		Short: "Download a known sentence-transformers model for the local embedder",
		Long: `Pull downloads a known model folder from the Hugging Face hub (https, at a
pinned revision), checks every file against its pinned size and SHA-256,
and keeps it in the model folder (the user's cache, or SAGASU_MODELS_DIR).
HF_ENDPOINT names a mirror of the hub. Then embed with
--embedder local --embedder-model NAME.

Known models: ` + strings.Join(app.KnownModels(), ", ") + ` (sagasu model list).`,
		Example: `  sagasu model pull all-MiniLM-L6-v2
  sagasu index docs/ --embedder local --embedder-model all-MiniLM-L6-v2`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			path, err := app.PullModel(cmd.Context(), args[0], a.Getenv, g.stderr)
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "%s\n", path)
			return nil
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "import SRC [DST]",
		Short: "Add a model folder for the local embedder, or convert word vectors for the static one",
		Long: `With a folder, import copies a sentence-transformers model (config.json,
model.safetensors, tokenizer.json, and 1_Pooling/ and sentence_bert_config.json
when there are) into the model folder, under the name DST or else the name
its files give (a known model's when they are its files, the repository of
a Hugging Face cache snapshot, the title of its README.md), after checking
that the local embedder loads it. Then embed with
--embedder local --embedder-model NAME.

With a file, import reads word vectors in GloVe text ("word v1 v2 ...") or
word2vec text format (first line "count dim") and writes sagasu's compact
binary (float16) to DST, which loads several times faster. Use the result
with --embedder static --embedder-path DST.`,
		Example: `  sagasu model import ~/models/bge-small-en-v1.5
  sagasu model import ./e5-folder multilingual-e5-small
  sagasu model import glove.6B.100d.txt models/glove-100d.bin`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, dst := args[0], ""
			if len(args) == 2 {
				dst = args[1]
			}
			if app.IsModelFolder(src) {
				a, err := g.load(cmd)
				if err != nil {
					return err
				}
				path, err := app.ImportModel(src, dst, a.Getenv)
				if err != nil {
					return err
				}
				fmt.Fprintf(g.stdout, "%s\n", path)
				return nil
			}
			if dst == "" {
				return usagef("import %s: a word-vector file needs DST, the binary file to write (a folder would be imported as a model)", src)
			}
			if err := app.ImportWordVectors(src, dst); err != nil {
				return err
			}
			fi, err := os.Stat(dst)
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "wrote %s (%.1f MB)\n", dst, float64(fi.Size())/1e6)
			return nil
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List the known models and the ones in the model folder",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			dir, models, err := app.ListModels(a.Getenv)
			if err != nil {
				return err
			}
			if g.json {
				return json.NewEncoder(g.stdout).Encode(map[string]any{"dir": dir, "models": models})
			}
			fmt.Fprintf(g.stdout, "model folder %s\n", dir)
			for _, m := range models {
				state := "not pulled"
				switch {
				case !m.Known:
					state = "imported"
				case m.Folder != "":
					state = "imported as " + m.Folder
				case m.Installed:
					state = "installed"
				}
				about := m.About
				if m.Multilingual {
					about += " (recommended for Japanese and other non-English documents)"
				}
				fmt.Fprintf(g.stdout, "%-24s %-10s %s\n", m.Name, state, about)
			}
			fmt.Fprintln(g.stdout, "For documents that are not in English, use a multilingual model (multilingual-e5-small): an English model reads them poorly, and `sagasu index` says so.")
			return nil
		},
	})
	return cmd
}

package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/index"
)

func newReindexCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reindex --embedder DRIVER [--embedder-model M ...]",
		Short: "Re-embed every chunk with another embedder, without re-reading sources",
		Long: `Reindex replaces the index's embeddings: it drops the vectors, pins the new
embedder and embeds every stored chunk again. Sources are not read again, so it
works even when the original files are gone. Keyword search keeps working
throughout; semantic and hybrid search resume when it finishes.`,
		Example: `  sagasu reindex --embedder static --embedder-path .tools/models/glove-100d.bin
  sagasu reindex --embedder local --embedder-model all-MiniLM-L6-v2
  sagasu reindex --embedder openai --embedder-url http://127.0.0.1:11434/v1 --embedder-model nomic-embed-text`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			if a.Config.Embedder.Driver == "" {
				return usagef("reindex needs --embedder (%s)", strings.Join(app.EmbedderDrivers, ", "))
			}
			ctx := cmd.Context()
			st, err := a.OpenStore(ctx, false)
			if err != nil {
				return err
			}
			defer st.Close()
			unlock, err := st.Lock(ctx)
			if err != nil {
				return err
			}
			defer unlock()
			emb, err := app.BuildEmbedder(ctx, a.Config.Embedder, a.Getenv)
			if err != nil {
				return err
			}
			if err := app.Unpin(ctx, st); err != nil {
				return err
			}
			if err := a.PinEmbedder(ctx, st, emb, a.Config.Embedder); err != nil {
				return err
			}
			opt := a.IndexOptions()
			opt.Embedder = emb
			n, err := index.New(st, opt).Reembed(ctx, nil)
			if err != nil {
				return fmt.Errorf("re-embed (after %d chunks; run reindex again to redo it): %w", n, err)
			}
			info := emb.Info()
			if a.Config.JSON {
				return writeJSON(g.stdout, map[string]any{"chunks": n, "driver": info.Driver, "model": info.Model, "dim": info.Dim})
			}
			fmt.Fprintf(g.stdout, "re-embedded %d chunks with %s/%s (%d dimensions)\n", n, info.Driver, info.Model, info.Dim)
			return nil
		},
	}
	addEmbedderFlags(cmd.Flags())
	return cmd
}

package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/app"
)

func newInfoCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "info",
		Short: "Describe the index: size, counts and pinned settings",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			st, err := a.OpenStore(ctx, false)
			if err != nil {
				return err
			}
			defer st.Close()
			s, err := st.Stats(ctx)
			if err != nil {
				return err
			}
			analyzer, err := st.Meta(ctx, "analyzer.version")
			if err != nil {
				return err
			}
			pin, err := app.Pinned(ctx, st)
			if err != nil {
				return err
			}
			var pinned any
			embedder := "none (keyword search only)"
			if pin.Driver != "" {
				pinned = pin
				embedder = fmt.Sprintf("%s, model %s, %d dimensions, %d vectors", pin.Driver, pin.Model, pin.Dim, s.Vectors)
				if pin.URL != "" {
					embedder += ", " + pin.URL
				}
				if pin.Path != "" {
					embedder += ", " + pin.Path
				}
			}
			if a.Config.JSON {
				return writeJSON(g.stdout, map[string]any{
					"db": app.Redact(a.Config.DB), "sources": s.Sources, "chunks": s.Chunks, "terms": s.Terms,
					"contentBytes": s.Bytes, "dbBytes": s.SizeBytes, "vectors": s.Vectors,
					"analyzer": analyzer, "embedder": pinned,
				})
			}
			fmt.Fprintf(g.stdout, "index     %s\n", app.Redact(a.Config.DB))
			fmt.Fprintf(g.stdout, "sources   %d (%.1f MB of content)\n", s.Sources, float64(s.Bytes)/1e6)
			fmt.Fprintf(g.stdout, "chunks    %d\n", s.Chunks)
			fmt.Fprintf(g.stdout, "terms     %d distinct\n", s.Terms)
			fmt.Fprintf(g.stdout, "size      %.1f MB on disk\n", float64(s.SizeBytes)/1e6)
			fmt.Fprintf(g.stdout, "analyzer  %s (this build: %s)\n", analyzer, analyze.New(analyze.Options{}).Signature())
			fmt.Fprintf(g.stdout, "embedder  %s\n", embedder)
			return nil
		},
	}
}

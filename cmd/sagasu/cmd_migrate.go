package main

import (
	"errors"
	"fmt"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/migrate"
)

func newMigrateCmd(g *globals) *cobra.Command {
	var (
		from, to string
		prune    bool
		verify   int
	)
	cmd := &cobra.Command{
		Use:   "migrate --from DB --to DB",
		Short: "Copy an index between stores (SQLite file, PostgreSQL, Qdrant), embeddings included",
		Long: `Migrate copies an index from one store to another: sources with their original
content, chunks, embeddings and the pinned embedder. DB is a SQLite file or
a postgres:// DSN (see docs/postgres.md) or a qdrant://host:6334/prefix (see
docs/qdrant.md), so it moves an index from a laptop to a shared server and back.

It can be stopped and run again: sources already in the destination with the
same content hash are skipped. At the end it checks that both stores hold as
many sources, chunks and vectors, and runs --verify sample queries on both:
their results must be identical (the same source, chunk and score for every
hit; chunk IDs themselves differ between stores). Sources that only the
destination has are kept and reported, or removed with --prune.`,
		Example: `  sagasu migrate --from .sagasu/sagasu.db --to 'postgres://sagasu@db.internal/sagasu'
  sagasu migrate --from 'postgres://sagasu@db.internal/sagasu?schema=team' --to backup.db
  QDRANT_API_KEY=... sagasu migrate --from .sagasu/sagasu.db --to qdrant://qdrant.internal:6334/team`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			if from == "" || to == "" {
				return usagef("migrate needs --from and --to: each a SQLite file, a postgres:// DSN or a qdrant:// location")
			}
			if from == to {
				return usagef("--from and --to name the same index")
			}
			ctx := cmd.Context()
			src, err := a.OpenStoreAt(ctx, from, false)
			if err != nil {
				return fmt.Errorf("--from: %w", err)
			}
			defer src.Close()
			dst, err := a.OpenStoreAt(ctx, to, true)
			if err != nil {
				return fmt.Errorf("--to: %w", err)
			}
			defer dst.Close()
			unlock, err := dst.Lock(ctx)
			if err != nil {
				return fmt.Errorf("--to: %w", err)
			}
			defer unlock()

			opt := migrate.Options{Prune: prune, Verify: verify}
			var bar *progressbar.ProgressBar
			if !a.Config.JSON && isTerminal(g.stderr) {
				opt.Progress = func(p migrate.Progress) {
					if bar == nil {
						bar = progressbar.NewOptions(p.Sources,
							progressbar.OptionSetWriter(g.stderr),
							progressbar.OptionSetDescription("migrating"),
							progressbar.OptionShowCount(),
							progressbar.OptionShowIts(),
							progressbar.OptionSetItsString("sources"),
							progressbar.OptionClearOnFinish(),
							progressbar.OptionThrottle(100_000_000),
						)
					}
					_ = bar.Set(p.Done)
				}
			}
			rep, err := migrate.Copy(ctx, src, dst, opt)
			if bar != nil {
				_ = bar.Finish()
			}
			if err == nil {
				err = app.CarrySourceNames(ctx, from, src, to, dst)
			}
			if err != nil {
				if errors.Is(err, ctx.Err()) || ctx.Err() != nil {
					return fmt.Errorf("interrupted after copying %d sources: run the same command again to finish", rep.Copied)
				}
				return fmt.Errorf("migrate: %w (%d sources were copied and are kept; run the same command again to resume)", err, rep.Copied)
			}
			if a.Config.JSON {
				return writeJSON(g.stdout, rep)
			}
			fmt.Fprintf(g.stdout, "sources    %d: %d copied, %d already there\n", rep.Sources, rep.Copied, rep.Skipped)
			fmt.Fprintf(g.stdout, "written    %d chunks, %d vectors\n", rep.Chunks, rep.Vectors)
			switch {
			case rep.Pruned > 0:
				fmt.Fprintf(g.stdout, "pruned     %d sources only the destination had\n", rep.Pruned)
			case rep.Extra > 0:
				fmt.Fprintf(g.stdout, "kept       %d sources only the destination has (--prune removes them)\n", rep.Extra)
			}
			fmt.Fprintf(g.stdout, "checked    counts match")
			if rep.Verified > 0 {
				fmt.Fprintf(g.stdout, "; %d sample queries give identical results", rep.Verified)
			}
			fmt.Fprintln(g.stdout)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "index to copy: a SQLite file, a postgres:// DSN or a qdrant:// location")
	f.StringVar(&to, "to", "", "index to copy into (created when missing)")
	f.BoolVar(&prune, "prune", false, "remove sources that only the destination has")
	f.IntVar(&verify, "verify", 50, "sample queries to compare on both stores after the copy (0: none)")
	return cmd
}

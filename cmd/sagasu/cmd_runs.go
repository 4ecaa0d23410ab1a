package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/runs"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/userfile"
)

// runLifecycleCmds are delete, prune and export for one kind of run: agent
// runs under `sagasu agent`, chat threads under `sagasu chat`.
func runLifecycleCmds(g *globals, kind string) []*cobra.Command {
	parent, what, list := "agent", "agent runs", "`sagasu agent runs`"
	if kind == store.RunChat {
		parent, what, list = "chat", "chat threads", "`sagasu chat --list`"
	}
	return []*cobra.Command{runDeleteCmd(g, kind, parent, what, list), runPruneCmd(g, kind, parent, what), runExportCmd(g, kind, parent, what, list)}
}

// withRunOps opens the index and runs fn with its lifecycle operations.
func withRunOps(cmd *cobra.Command, g *globals, fn func(ctx context.Context, a *app.App, ops *runs.Ops) error) error {
	a, err := g.load(cmd)
	if err != nil {
		return err
	}
	st, err := a.OpenStore(cmd.Context(), false)
	if err != nil {
		return err
	}
	defer st.Close()
	err = fn(cmd.Context(), a, a.RunOps(st, nil))
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrRunning) {
		return usageError{err}
	}
	return err
}

func runDeleteCmd(g *globals, kind, parent, what, list string) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "delete ID...",
		Short: "Delete " + what + " with their logs",
		Long: `Delete removes ` + what + `, named by ID (` + list + ` lists them), with their whole
logs. Every ID is checked first: an unknown one deletes none. A run whose status
is still "running" is refused, as a process may be driving it; --force deletes
it anyway, for a run a killed process left behind.`,
		Example: "  sagasu " + parent + " delete ID\n  sagasu " + parent + " delete --force ID",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withRunOps(cmd, g, func(ctx context.Context, a *app.App, ops *runs.Ops) error {
				out, err := ops.Delete(ctx, runs.DeleteInput{IDs: args, Kind: kind, Force: force})
				if err != nil {
					return err
				}
				if a.Config.JSON {
					return writeJSON(g.stdout, out)
				}
				for _, h := range out.Deleted {
					fmt.Fprintf(g.stdout, "deleted %s  %s\n", h.ID, snippet(h.Title, 80))
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "also delete a run whose status is still running (left by a killed process)")
	return cmd
}

func runPruneCmd(g *globals, kind, parent, what string) *cobra.Command {
	var (
		olderThan string
		keep      int
		dryRun    bool
	)
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Delete old " + what + " by age or count",
		Long: `Prune deletes the ` + what + ` that a retention rule selects: those not updated
for longer than --older-than (30d, 12h, 90m), or beyond the newest --keep. Without
either flag it applies runs.keep_days and runs.keep from the configuration, and
with none of them it deletes nothing. Runs still running are kept. --dry-run lists
what would be deleted.`,
		Example: "  sagasu " + parent + " prune --older-than 30d --dry-run\n  sagasu " + parent + " prune --keep 100",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if olderThan != "" {
				if _, err := runs.ParseAge(olderThan); err != nil {
					return usagef("--older-than: %v", err)
				}
			}
			if keep < 0 {
				return usagef("--keep %d: give the number of newest %s to keep", keep, what)
			}
			return withRunOps(cmd, g, func(ctx context.Context, a *app.App, ops *runs.Ops) error {
				out, err := ops.Prune(ctx, runs.PruneInput{Kind: kind, OlderThan: olderThan, Keep: keep, DryRun: dryRun})
				if err != nil {
					return usageError{err}
				}
				if a.Config.JSON {
					return writeJSON(g.stdout, out)
				}
				verb := "deleted"
				if dryRun {
					verb = "would delete"
				}
				for _, h := range out.Pruned {
					fmt.Fprintf(g.stdout, "%s %s  %s  %s\n", verb, h.ID, h.Updated.Local().Format("2006-01-02 15:04"), snippet(h.Title, 60))
				}
				fmt.Fprintf(g.stdout, "%s %d %s (%s)\n", verb, len(out.Pruned), what, out.Rule)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&olderThan, "older-than", "", "delete those not updated for longer than this (30d, 12h, 90m)")
	cmd.Flags().IntVar(&keep, "keep", 0, "keep the newest this many and delete the rest")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list what would be deleted and delete nothing")
	return cmd
}

func runExportCmd(g *globals, kind, parent, what, list string) *cobra.Command {
	var format, output string
	cmd := &cobra.Command{
		Use:   "export ID",
		Short: "Export one of the " + what + " as JSON or Markdown",
		Long: `Export writes one of the ` + what + ` (` + list + ` lists them): --format json is its
header, recorded settings and every event of its log; --format md a readable
transcript (a thread's questions and cited answers, an agent run's plan, steps,
answer, sources and outcome). Runs record no API key or password, and every
address in an export is redacted again. -o writes a file instead of stdout.`,
		Example: "  sagasu " + parent + " export ID --format md -o run.md",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != runs.FormatJSON && format != runs.FormatMarkdown {
				return usagef("--format %q: want json or md", format)
			}
			return withRunOps(cmd, g, func(ctx context.Context, _ *app.App, ops *runs.Ops) error {
				out, err := ops.Export(ctx, runs.ExportInput{ID: args[0], Kind: kind, Format: format})
				if err != nil {
					return err
				}
				if output == "" || output == "-" {
					_, err := fmt.Fprint(g.stdout, out.Content)
					return err
				}
				if err := userfile.Write(output, []byte(out.Content)); err != nil {
					return fmt.Errorf("write the export to %s: %w", output, err)
				}
				fmt.Fprintf(g.stderr, "wrote %s\n", output)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&format, "format", runs.FormatJSON, "json or md")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to this file instead of stdout")
	return cmd
}

package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/agentcache"
	"github.com/sagasu-dev/sagasu/internal/app"
)

func newCacheCmd(g *globals) *cobra.Command {
	var af agentFlags
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "List, show and clear the agent cache (evaluations, refinements, stages, sessions)",
		Long: `The agent cache keeps one JSON file per step that sagasu loop, sagasu plan and
the MCP tools took — evaluations/, refinements/, stages/, sessions/ — and
agent-cache.md, a summary regenerated from them. It lives beside the index
(cache/agent in the folder of --db, e.g. .sagasu/cache/agent) unless
--cache-dir says otherwise. Refinements that worked are reused for similar goals.`,
	}
	af.register(cmd.PersistentFlags(), false)
	cmd.AddCommand(newCacheListCmd(g, &af), newCacheShowCmd(g, &af), newCacheClearCmd(g, &af))
	return cmd
}

// openCacheKind loads the configuration, parses --kind ("" for every kind)
// and opens the agent cache.
func (af *agentFlags) openCacheKind(cmd *cobra.Command, g *globals, kind string) (*app.App, *agentcache.Cache, agentcache.Kind, error) {
	a, err := g.load(cmd)
	if err != nil {
		return nil, nil, "", err
	}
	var k agentcache.Kind
	if kind != "" {
		if k, err = agentcache.ParseKind(kind); err != nil {
			return nil, nil, "", usageError{err}
		}
	}
	c, err := af.openCache(a)
	if err != nil {
		return nil, nil, "", err
	}
	return a, c, k, nil
}

func newCacheListCmd(g *globals, af *agentFlags) *cobra.Command {
	var kind, goal string
	var limit int
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List cached records, newest first",
		Example: `  sagasu cache list
  sagasu cache list --kind refinements --goal VitePress --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 0 {
				return usagef("--limit %d: use 0 (all) or more", limit)
			}
			a, c, k, err := af.openCacheKind(cmd, g, kind)
			if err != nil {
				return err
			}
			recs, err := c.List(agentcache.ListOptions{Kind: k, Limit: limit, Goal: goal})
			if err != nil {
				return err
			}
			if a.Config.JSON {
				if recs == nil {
					recs = []agentcache.Record{}
				}
				return writeJSON(g.stdout, recs)
			}
			if len(recs) == 0 {
				fmt.Fprintf(g.stdout, "no records in %s\n", c.Dir())
				return nil
			}
			for _, r := range recs {
				score := "    "
				if r.Score != nil {
					score = fmt.Sprintf("%4.2f", *r.Score)
				}
				fmt.Fprintf(g.stdout, "%s  %s  %-52s %s\n", r.Timestamp.Format("2006-01-02 15:04:05"), score, r.ID, snippet(r.Goal, 40))
				if r.Summary != "" {
					fmt.Fprintf(g.stdout, "    %s\n", snippet(r.Summary, 110))
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&kind, "kind", "", "only this kind: sessions, evaluations, refinements, stages")
	f.StringVar(&goal, "goal", "", "only records whose goal contains this text")
	f.IntVar(&limit, "limit", 50, "newest records to list (0 for all)")
	return cmd
}

func newCacheShowCmd(g *globals, af *agentFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "show ID",
		Short:   "Print one cached record",
		Example: `  sagasu cache show eval-20250114T060000.000000000Z-1234-1`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, c, _, err := af.openCacheKind(cmd, g, "")
			if err != nil {
				return err
			}
			r, err := c.Get(args[0])
			if err != nil {
				return err
			}
			if a.Config.JSON {
				return writeJSON(g.stdout, r)
			}
			fmt.Fprintf(g.stdout, "id        %s\nkind      %s\ntime      %s\ngoal      %s\n", r.ID, r.Kind, r.Timestamp.Format("2006-01-02 15:04:05 MST"), r.Goal)
			if r.Query != "" {
				fmt.Fprintf(g.stdout, "query     %s\n", r.Query)
			}
			if r.Score != nil {
				fmt.Fprintf(g.stdout, "score     %.3f\n", *r.Score)
			}
			if r.Summary != "" {
				fmt.Fprintf(g.stdout, "summary   %s\n", r.Summary)
			}
			var data any
			if len(r.Data) > 0 && json.Unmarshal(r.Data, &data) == nil {
				fmt.Fprintln(g.stdout, "data:")
				b, _ := json.MarshalIndent(data, "  ", "  ")
				fmt.Fprintf(g.stdout, "  %s\n", strings.TrimSpace(string(b)))
			}
			return nil
		},
	}
}

func newCacheClearCmd(g *globals, af *agentFlags) *cobra.Command {
	var kind string
	cmd := &cobra.Command{
		Use:     "clear",
		Short:   "Remove cached records (all, or one kind)",
		Example: `  sagasu cache clear --kind evaluations`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, c, k, err := af.openCacheKind(cmd, g, kind)
			if err != nil {
				return err
			}
			n, err := c.Clear(k)
			if err != nil {
				return err
			}
			if a.Config.JSON {
				return writeJSON(g.stdout, map[string]any{"removed": n, "dir": c.Dir()})
			}
			fmt.Fprintf(g.stdout, "removed %d records from %s\n", n, c.Dir())
			return nil
		},
	}
	cmd.Flags().StringVar(&kind, "kind", "", "only this kind: sessions, evaluations, refinements, stages")
	return cmd
}

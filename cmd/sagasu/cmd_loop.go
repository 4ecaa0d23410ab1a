package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sagasu-dev/sagasu/internal/agentcache"
	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/loop"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// agentFlags are the flags the loop, plan and cache commands share.
type agentFlags struct {
	cacheDir  string
	noCache   bool
	retention int
}

// register adds --cache-dir, and for commands that record steps
// --no-cache and --cache-retention.
func (f *agentFlags) register(fs *pflag.FlagSet, records bool) {
	fs.StringVar(&f.cacheDir, "cache-dir", "", "agent cache folder (default: cache/agent beside the index, e.g. .sagasu/cache/agent)")
	if records {
		fs.BoolVar(&f.noCache, "no-cache", false, "do not record the steps in the agent cache")
		fs.IntVar(&f.retention, "cache-retention", agentcache.DefaultRetention, "records of each kind the agent cache keeps (older ones are removed)")
	}
}

// openCache opens the agent cache for a.
func (f *agentFlags) openCache(a *app.App) (*agentcache.Cache, error) {
	return a.OpenCache(f.cacheDir, f.retention)
}

// open opens the index (with its embedder, if it has one) and its tools,
// recording to the agent cache unless --no-cache. Close the runtime when
// done.
func (f *agentFlags) open(cmd *cobra.Command, a *app.App) (*app.Runtime, error) {
	if f.retention < 1 && !f.noCache {
		return nil, usagef("--cache-retention %d: keep at least 1 record of each kind", f.retention)
	}
	// The loop runs several searches.
	return a.Open(cmd.Context(), app.OpenOptions{LongLived: true, NoCache: f.noCache, CacheDir: f.cacheDir, CacheRetention: f.retention})
}

func newLoopCmd(g *globals) *cobra.Command {
	var (
		goal, query, mode, pathGlob, session string
		aspects                              []string
		maxIt                                int
		minConf                              float64
		verbose                              bool
		af                                   agentFlags
	)
	cmd := &cobra.Command{
		Use:   "loop --goal TEXT",
		Short: "Search in a loop: search, evaluate against a goal, refine, search again",
		Long: `Loop runs the agent-in-the-loop cycle by itself: it searches, evaluates the
merged results against the goal's aspects, refines the query toward the
aspects still missing (from the index's own words and headings), and searches
again — excluding what it has already seen — until the evaluation says the
results are enough or --max-iterations is reached.

Aspects come from the goal, split at "and", "or", commas, と, や, 、; a goal
with one topic is expanded into the sections the index has for it. Give
--aspect (repeatable) to say them yourself. Without --query the first query is
the goal without its boilerplate ("understand how to", "を理解する").

At most 10 searches run (--max-iterations, default 5) and -k is at most 10,
as over MCP (sagasu_loop: the same operation, checked by the same schema). Every evaluation and refinement is recorded in the agent cache,
and the loop as one session record, updated after every iteration (see sagasu
cache; --session names the session). --json prints what sagasu_loop answers over MCP:
the iterations in brief and the top -k merged results, in the shape of sagasu
query --json, each relevance within the search that found it.`,
		Example: `  sagasu loop --goal "VitePressの設定方法を理解する"
  sagasu loop --goal "Deploy to GitHub Pages and generate a sitemap" --query "deploy" --json
  sagasu loop --goal "configure search" --aspect "local search" --aspect "Algolia" -k 5`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			if strings.TrimSpace(goal) == "" {
				return usagef("--goal is required: say what the search should find out")
			}
			rt, err := af.open(cmd, a)
			if err != nil {
				return err
			}
			defer rt.Close()
			env := &tools.Env{}
			if verbose || isTerminal(g.stderr) {
				env.Trace = func(ev loop.Event) { traceEvent(g.stderr, ev) }
			}
			// k, maxIterations and minConfidence as given, zero included:
			// sagasu_loop's schema checks them, as for every face.
			in := tools.LoopInput{Goal: goal, Query: query, Aspects: aspects, Mode: mode, Glob: pathGlob, SessionID: session}
			reply, err := callOpIn(cmd.Context(), env, rt, tools.NameLoop, in,
				map[string]any{"k": a.Config.Search.K, "maxIterations": maxIt, "minConfidence": minConf})
			if err != nil {
				return err
			}
			if a.Config.JSON {
				return g.writeReply(reply)
			}
			fmt.Fprint(g.stdout, tools.LoopText(reply.Out.(tools.LoopOutput), 160))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&goal, "goal", "", "what the search should find out (required)")
	f.StringVar(&query, "query", "", "first query (default: the goal's own words)")
	f.StringArrayVar(&aspects, "aspect", nil, "an aspect the results must cover (repeatable; default: from the goal)")
	f.IntP("k", "k", 10, "number of merged results")
	f.IntVar(&maxIt, "max-iterations", tools.DefaultLoopIterations, fmt.Sprintf("most searches to run (1 to %d)", tools.MaxLoopIterations))
	f.StringVar(&session, "session", "", "record the loop in this agent-cache session (default: a new loop-… session)")
	f.Float64Var(&minConf, "min-confidence", loop.DefaultMinConfidence, "confidence at which the results are enough")
	f.StringVar(&mode, "mode", "", "retrieval mode: keyword, semantic, hybrid (default: the index's, hybrid when it has an embedder)")
	f.StringVar(&pathGlob, "glob", "", "only sources whose URI matches this glob")
	f.BoolVarP(&verbose, "verbose", "v", false, "trace each step to stderr as it happens (on by default when stderr is a terminal)")
	af.register(f, true)
	return cmd
}

// traceEvent writes one step of a loop as it happens.
func traceEvent(w io.Writer, ev loop.Event) {
	switch ev.Kind {
	case loop.EventSearch:
		fmt.Fprintf(w, "[%d] search   %q: %d results, %d new\n", ev.Iteration, ev.Query, ev.Results, ev.NewResults)
	case loop.EventEvaluate:
		e := ev.Evaluation
		fmt.Fprintf(w, "[%d] evaluate confidence %.2f, coverage %.2f; missing %s → %s\n", ev.Iteration, e.Confidence, e.Coverage,
			orNone(strings.Join(e.MissingAspects, " · ")), e.Recommendation.Action)
	case loop.EventRefine:
		r := ev.Refinement
		fmt.Fprintf(w, "[%d] refine   %s from %s → %q\n", ev.Iteration, r.Strategy, r.Origin, r.RefinedQuery)
	case loop.EventStop:
		fmt.Fprintf(w, "[%d] stop     %s\n", ev.Iteration, ev.Stopped)
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// searchK returns the configured -k after checking it and a loop budget
// (sagasu plan and eval goals, which run the loop package directly).
func searchK(a *app.App, maxIterations int) (int, error) {
	k := a.Config.Search.K
	if k < 1 || k > search.MaxK {
		return 0, usagef("-k %d is out of range: use 1 to %d", k, search.MaxK)
	}
	if maxIterations < 1 || maxIterations > tools.MaxLoopIterations {
		return 0, usagef("--max-iterations %d is out of range: use 1 to %d", maxIterations, tools.MaxLoopIterations)
	}
	return k, nil
}

// printResults writes results the way sagasu query does.
func printResults(w io.Writer, rs []tools.Result) {
	if len(rs) == 0 {
		fmt.Fprintln(w, "  no results")
		return
	}
	var b strings.Builder
	tools.WriteResults(&b, rs, 160)
	fmt.Fprint(w, strings.TrimPrefix(b.String(), "\n"))
}

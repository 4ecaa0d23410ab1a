package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/agent/planact"
	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/store"
)

func newAgentCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Plan-and-Act: an agent that plans, acts through MCP servers and sagasu's search, and replans",
		Long: `Agent runs the Plan-and-Act agent: a planner turns the goal into steps, an
executor carries out each step with one tool call (the tools of the MCP
servers you name, such as Playwright MCP for a browser, and sagasu's own
search), and after every step the planner judges the result and goes on,
replans or finishes. Memory recalls similar past runs.

Every step is written to the index's run log as it happens: a run stopped by
Ctrl-C, a crash or kill -9 continues with "agent resume RUN", and a tool call
that completed is never made again. Without a language model the agent runs
research goals over the index alone (one step per aspect of the goal).

MCP servers are configured in sagasu.yaml:

  mcp_servers:
    playwright:
      command: node
      args: [.tools/playwright-mcp/node_modules/@playwright/mcp/cli.js, --headless,
             --isolated, --browser, chromium, --executable-path, /usr/bin/chromium]
      tools: [browser_navigate, browser_snapshot, browser_click]   # what the model may use
      pass_env: [HTTPS_PROXY]                                      # variables it may see

What an agent reads is untrusted. A browser server (Playwright MCP) offers the
model navigate, snapshot, click, type, press key, back and wait only (list
others under tools:), and its browser cannot reach loopback, private,
link-local or cloud-metadata addresses unless --allow-private. A server sees
PATH, HOME, locale and temporary folder, its env: and pass_env:, and no API
key or token of sagasu's.`,
	}
	cmd.AddCommand(newAgentRunCmd(g), newAgentRunsCmd(g), newAgentShowCmd(g), newAgentResumeCmd(g))
	cmd.AddCommand(runLifecycleCmds(g, store.RunAgent)...)
	return cmd
}

// agentFlagsPA are the flags of agent run and resume.
type agentFlagsPA struct {
	goal    string
	mcp     []string
	offline bool
	table   string
	trace   bool
	// endSpan ends the run's trace span (a no-op without tracing).
	endSpan func(error)
}

// open prepares the run: a new one toward goal, or run id to resume with
// its recorded settings (the flags set on this command line over them).
func (f *agentFlagsPA) open(cmd *cobra.Command, g *globals, goal, id string) (*app.PlanActRun, func(), *app.App, error) {
	a, err := g.load(cmd)
	if err != nil {
		return nil, nil, nil, err
	}
	rt, err := a.Open(cmd.Context(), app.OpenOptions{LongLived: true, NoCache: true})
	if err != nil {
		return nil, nil, nil, err
	}
	opt := app.PlanActOptions{Offline: f.offline, Table: f.table, Goal: goal, Face: store.FaceCLI}
	if f.trace || (!a.Config.JSON && isTerminal(g.stderr)) {
		opt.OnEvent = traceTo(g.stderr)
	}
	// The run's span: model and tool calls nest under it.
	ctx, end := a.Tracer.StartAgent(cmd.Context(), "sagasu plan-and-act", "")
	cmd.SetContext(ctx)
	f.endSpan = end
	opt.OnEvent = a.Tracer.OnEvent(ctx, opt.OnEvent)
	var run *app.PlanActRun
	if id == "" {
		opt.MCP = f.mcp
		run, err = rt.NewPlanActRun(ctx, opt)
	} else {
		if cmd.Flags().Changed("mcp") {
			opt.MCP = f.mcp
		}
		if opt.Tuning, err = tuningFlags(cmd.Flags()); err == nil {
			run, err = rt.OpenPlanActRun(ctx, id, opt)
		}
	}
	if err != nil {
		end(err)
		rt.Close()
		if errors.Is(err, planact.ErrNeedsModel) || errors.Is(err, planact.ErrEmptyGoal) {
			err = usageError{err}
		}
		return nil, nil, nil, err
	}
	return run, func() { run.Close(); rt.Close() }, a, nil
}

func (f *agentFlagsPA) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringArrayVar(&f.mcp, "mcp", nil, "MCP server the agent may use, by its name in mcp_servers: (repeatable; on resume: instead of the recorded ones)")
	fs.BoolVar(&f.offline, "offline", false, "run without the configured language model (research goals over the index)")
	fs.StringVar(&f.table, "routing", "", "a JSON routing table that replaces the agent's built-in edges")
	fs.BoolVar(&f.trace, "trace", false, "print the agent's steps to stderr (the default on a terminal)")
	fs.Bool("allow-private", false, "let the browser reach loopback, private and link-local addresses (a site on 127.0.0.1)")
	addLLMFlags(fs)
	addAgentFlags(fs, true)
}

func newAgentRunCmd(g *globals) *cobra.Command {
	var f agentFlagsPA
	cmd := &cobra.Command{
		Use:   "run --goal TEXT",
		Short: "Run the agent toward a goal",
		Example: `  sagasu agent run --goal "find how to deploy to GitHub Pages and which base to set"
  sagasu agent run --mcp playwright --llm openai --llm-url http://127.0.0.1:8080/v1 \
      --allow-private --goal "open http://127.0.0.1:8000 and find the opening hours on Saturdays"
  sagasu agent run --llm gemini --planner-llm-model gemini-2.5-pro --executor-llm-model gemini-2.5-flash \
      --max-tool-calls 50 --goal "..."`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if strings.TrimSpace(f.goal) == "" {
				return usagef("--goal is empty: say what the agent should achieve")
			}
			run, done, a, err := f.open(cmd, g, f.goal, "")
			if err != nil {
				return err
			}
			defer done()
			res, err := run.Start(cmd.Context())
			f.endSpan(err)
			if errors.Is(err, planact.ErrNeedsModel) {
				return usageError{err}
			}
			if err != nil {
				return err
			}
			return printAgentRun(cmd.Context(), g.stdout, a, res)
		},
	}
	cmd.Flags().StringVar(&f.goal, "goal", "", "what the agent should achieve")
	f.register(cmd)
	return cmd
}

func newAgentResumeCmd(g *globals) *cobra.Command {
	var f agentFlagsPA
	cmd := &cobra.Command{
		Use:   "resume RUN",
		Short: "Continue a stopped run from its last completed step, with the settings it was started with",
		Long: `Resume continues a run from its last completed step. It runs with the settings
the run recorded when it started: its MCP servers (by name, as the
configuration defines them now), its models and how they are called, its
limits. Flags given here replace them: --mcp, model names
(--planner-llm-model, --executor-llm-model), --temperature, --max-tokens,
--thinking-budget, --max-tool-calls, --max-duration. A tool call that
completed is not made again.

A run has one driver at a time: while another process drives it (the page,
another terminal, an MCP server), resume is refused with that process named
(face, pid, host, since). A run whose process was killed is taken over at
once.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			run, done, a, err := f.open(cmd, g, "", args[0])
			if err != nil {
				return err
			}
			defer done()
			res, err := run.Resume(cmd.Context())
			f.endSpan(err)
			if err != nil {
				return err
			}
			return printAgentRun(cmd.Context(), g.stdout, a, res)
		},
	}
	f.register(cmd)
	return cmd
}

// printAgentRun prints a run's result: JSON, or a summary for people.
// A run cut short by Ctrl-C (or its context) is printed as stopped and
// then fails with the interruption, so the exit code says it (130) while
// stdout keeps the one result.
func printAgentRun(ctx context.Context, w io.Writer, a *app.App, res *planact.Result) error {
	if err := printAgentResult(w, a, res); err != nil {
		return err
	}
	if cause := ctx.Err(); cause != nil && res.Outcome == planact.OutcomeStopped {
		return reportedError{fmt.Errorf("run %s stopped: %w; continue it with: sagasu agent resume %s", res.Run, cause, res.Run)}
	}
	return nil
}

// printAgentResult prints a run's result: JSON, or a summary for people.
func printAgentResult(w io.Writer, a *app.App, res *planact.Result) error {
	if a.Config.JSON {
		return writeJSON(w, res)
	}
	fmt.Fprintf(w, "run %s: %s", res.Run, res.Outcome)
	if res.Reason != "" {
		fmt.Fprintf(w, " (%s)", res.Reason)
	}
	fmt.Fprintln(w)
	for i, s := range res.Plan {
		fmt.Fprintf(w, "  %d. [%s] %s\n", i+1, s.Status, s.Text)
	}
	if res.Replans > 0 {
		fmt.Fprintf(w, "replans: %d\n", res.Replans)
	}
	if res.Answer != "" {
		fmt.Fprintf(w, "\n%s\n", res.Answer)
	}
	for _, r := range res.Results {
		fmt.Fprintf(w, "  - %s  %s (chunk %d)\n", r.Source.URI, r.Heading, r.ChunkID)
	}
	if res.Outcome == "stopped" {
		fmt.Fprintf(w, "\ncontinue it with: sagasu agent resume %s\n", res.Run)
	}
	return nil
}

func newAgentRunsCmd(g *globals) *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List the agent's runs, the most recent first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			st, err := a.OpenStore(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer st.Close()
			runs, err := st.ListRuns(cmd.Context(), store.RunFilter{Kind: store.RunAgent, Limit: limit})
			if err != nil {
				return err
			}
			if a.Config.JSON {
				return writeJSON(g.stdout, runs)
			}
			if len(runs) == 0 {
				fmt.Fprintln(g.stdout, "no agent runs yet: sagasu agent run --goal \"...\"")
			}
			for _, r := range runs {
				fmt.Fprintf(g.stdout, "%s  %-8s %s  %s\n", r.ID, r.Status, r.Updated.Local().Format("2006-01-02 15:04"), snippet(r.Title, 80))
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 50, "most runs to list")
	return cmd
}

func newAgentShowCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "show RUN",
		Short: "Show a run's steps as they were logged",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			st, err := a.OpenStore(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer st.Close()
			run, err := st.Run(cmd.Context(), args[0])
			if errors.Is(err, store.ErrNotFound) {
				return usagef("no run %q: `sagasu agent runs` lists them", args[0])
			}
			if err != nil {
				return err
			}
			events, err := graph.NewStoreLog(st, store.RunAgent, nil).Events(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			var settings *app.RunSettings
			if len(run.Meta) > 0 {
				settings = new(app.RunSettings)
				if err := json.Unmarshal(run.Meta, settings); err != nil {
					return fmt.Errorf("run %s: its recorded settings cannot be read: %w", run.ID, err)
				}
			}
			lease, err := st.RunLease(cmd.Context(), run.ID)
			if err != nil {
				return err
			}
			driver := driverOf(lease)
			if a.Config.JSON {
				return writeJSON(g.stdout, map[string]any{"run": run.ID, "goal": run.Title, "status": run.Status, "driver": driver, "settings": settings, "events": events})
			}
			fmt.Fprintf(g.stdout, "run %s (%s): %s\n", run.ID, run.Status, run.Title)
			if driver != nil {
				fmt.Fprintf(g.stdout, "%-11s %s, pid %d on %s since %s (lease until %s)\n", "driven by", driver.Face, driver.PID, driver.Host,
					driver.Since.Format(time.RFC3339), driver.Until.Format(time.RFC3339))
			}
			if settings != nil {
				printSettings(g.stdout, settings)
			}
			show := traceTo(g.stdout)
			for _, ev := range events {
				if ev.Type == graph.TypeOutcome {
					var out graph.Outcome
					if json.Unmarshal(ev.Result, &out) == nil {
						fmt.Fprintf(g.stdout, "%-11s %s %s\n", "outcome", out.Status, out.Reason)
					}
					continue
				}
				show(ev)
			}
			return nil
		},
	}
}

// printSettings prints the settings a run recorded.
func printSettings(w io.Writer, s *app.RunSettings) {
	if len(s.MCP) > 0 {
		fmt.Fprintf(w, "%-11s %s\n", "mcp", strings.Join(s.MCP, ", "))
	}
	for _, r := range []struct {
		name string
		m    *app.ModelSettings
	}{{"planner", s.Planner}, {"executor", s.Executor}} {
		if r.m == nil {
			continue
		}
		fmt.Fprintf(w, "%-11s %s %s, temperature %g, max tokens %d", r.name, r.m.Driver, r.m.Model, r.m.Temperature, r.m.MaxTokens)
		if r.m.ThinkingBudget != nil {
			fmt.Fprintf(w, ", thinking budget %d", *r.m.ThinkingBudget)
		}
		fmt.Fprintln(w)
	}
	l := s.Limits
	fmt.Fprintf(w, "%-11s %d tool calls, %s per start or resume\n", "limits", l.MaxToolCalls, l.MaxDuration)
}

// runDriver is who drives a run, as `agent show` prints it (its lease
// without the owner's token).
type runDriver struct {
	Face  string    `json:"face"`
	Host  string    `json:"host"`
	PID   int       `json:"pid"`
	Since time.Time `json:"since"`
	Until time.Time `json:"until"`
}

// driverOf is the driver a lease names, nil when nobody drives the run.
func driverOf(l store.Lease) *runDriver {
	if !l.Held() {
		return nil
	}
	o := l.Owner
	return &runDriver{Face: o.Face, Host: o.Host, PID: o.PID, Since: o.Since, Until: l.Until}
}

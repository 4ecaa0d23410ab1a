// Command sagasu turns documents into a knowledge base that people and agents
// can search: index files, folders, URLs and repositories; query them by
// keyword, meaning or both; answer questions with cited passages (ask, chat);
// run agents that plan and act (agent); and serve it all over MCP.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/telemetry"
)

// exit codes
const (
	exitOK          = 0
	exitError       = 1
	exitUsage       = 2
	exitInterrupted = 130
)

// globals are the flags every command shares.
type globals struct {
	configPath string
	stdout     io.Writer
	stderr     io.Writer
	stdin      io.Reader
	environ    []string

	cpuProfile  string
	stopProfile func()
	// tracer exports spans when OTEL_EXPORTER_OTLP_ENDPOINT is set (nil: off).
	tracer *telemetry.Tracer
	// json is set once the configuration asks for JSON output.
	json bool
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Environ())
	stop()
	os.Exit(code)
}

// usageError marks errors in how a command was called (exit code 2).
type usageError struct{ error }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// reportedError is a failure the command has already reported on stdout
// (doctor's report says what failed): with --json, stdout stays one JSON
// document, so no error object follows it.
type reportedError struct{ error }

// run executes one sagasu command line and returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, environ []string) int {
	g := &globals{stdout: stdout, stderr: stderr, stdin: stdin, environ: environ}
	tracer, err := telemetry.New(ctx, telemetry.Options{Environ: environ, Version: appVersion()})
	if err != nil {
		fmt.Fprintln(stderr, "sagasu: tracing is off:", err)
	}
	g.tracer = tracer
	defer func() {
		// Send the spans still buffered, even when ctx was interrupted.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := tracer.Shutdown(sctx); err != nil {
			fmt.Fprintln(stderr, "sagasu: sending traces:", err)
		}
	}()
	root := newRootCmd(g)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err = root.ExecuteContext(ctx)
	if g.stopProfile != nil {
		g.stopProfile()
	}
	if err == nil {
		return exitOK
	}
	code, name := exitError, "error"
	var ue usageError
	switch {
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		code, name = exitInterrupted, "interrupted"
	case errors.As(err, &ue):
		code, name = exitUsage, "usage"
	case errors.Is(err, store.ErrLeased):
		name = "leased" // another process drives the run
	}
	var reported reportedError
	if (g.json || slices.Contains(args, "--json")) && !errors.As(err, &reported) {
		// A tool reading --json output gets the error as JSON too (and
		// people reading stderr still see it).
		_ = writeJSON(stdout, map[string]any{"error": map[string]any{"code": name, "message": err.Error()}})
	}
	fmt.Fprintln(stderr, "sagasu:", err)
	return code
}

func newRootCmd(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "sagasu",
		Short: "Search your documents, and let agents search them in the loop",
		Long: `sagasu (探す, "to search") indexes documents — markdown, code, text, web pages,
GitHub repositories and gists — into a local knowledge base and answers
queries over it: BM25 keyword search that understands English and Japanese
out of the box (no network, API key or model file needed), and semantic or
hybrid search when you bring an embedding model. It answers questions with
cited passages (ask, chat; offline, or with a language model), runs a
Plan-and-Act agent that acts through MCP servers such as Playwright MCP, and
lets agents search in the loop — evaluate results against a goal, refine the
query, run staged plans — from the command line or over MCP.

  sagasu index README.md docs/          # index files and folders (incremental)
  sagasu query "how do I configure it"   # search
  sagasu get docs/guide.md --section "Install"
  sagasu ask "how do I deploy?"          # a cited answer (add --llm for a model)
  sagasu agent run --goal "..."          # Plan-and-Act, with MCP servers
  sagasu loop --goal "understand how to deploy"
  sagasu mcp                             # serve it all to an MCP client

The index lives in ./.sagasu/sagasu.db unless --db says otherwise (a file, or a
postgres:// DSN, or a qdrant://host:6334/prefix). Settings come from your user
config (~/.config/sagasu/config.yaml), the project's sagasu.yaml, SAGASU_*
environment variables and flags (flags win). A sagasu.yaml found in the working
directory cannot start programs, send keys elsewhere or lower a guard until you
run sagasu trust (see sagasu trust --help).`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	pf := root.PersistentFlags()
	pf.String("db", app.Defaults().DB, "index: a SQLite file, a postgres:// DSN or qdrant://host:6334/prefix")
	pf.Bool("json", false, "print machine-readable JSON")
	pf.String("log-level", app.Defaults().LogLevel, "log level: debug, info, warn, error")
	pf.StringVar(&g.configPath, "config", "", "config file (default ./sagasu.yaml when present)")
	pf.StringVar(&g.cpuProfile, "cpuprofile", "", "write a CPU profile to this file (for performance work)")
	_ = pf.MarkHidden("cpuprofile")
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if g.cpuProfile == "" {
			return nil
		}
		f, err := os.Create(g.cpuProfile)
		if err != nil {
			return err
		}
		g.stopProfile = func() { pprof.StopCPUProfile(); f.Close() }
		return pprof.StartCPUProfile(f)
	}
	root.AddCommand(
		newIndexCmd(g), newQueryCmd(g), newSearchCmd(g), newGetCmd(g), newListCmd(g), newInfoCmd(g),
		newDeleteCmd(g), newEvalCmd(g), newBenchCmd(g), newVersionCmd(g),
		newReindexCmd(g), newModelCmd(g),
		newLoopCmd(g), newPlanCmd(g), newCacheCmd(g), newMCPCmd(g), newMigrateCmd(g),
		newAskCmd(g), newChatCmd(g), newAgentCmd(g), newDoctorCmd(g), newServeCmd(g),
		newTrustCmd(g), newToolsCmd(g),
	)
	usageArgs(root)
	return root
}

// usageArgs makes every wrong command line a usage error (exit code 2): a
// command given arguments it does not take, including an unknown
// subcommand of a group such as "sagasu agent bogus", which would otherwise
// print the group's help and succeed.
func usageArgs(c *cobra.Command) {
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
	if c.HasSubCommands() && c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2
	}
	if !c.Runnable() && c.HasSubCommands() {
		c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		if c.Args == nil {
			c.Args = cobra.NoArgs
		}
	}
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				if cmd.HasSubCommands() && len(args) > 0 {
					if near := cmd.SuggestionsFor(args[0]); len(near) > 0 {
						return usagef("%v: did you mean %s? (see %s --help)", err, strings.Join(near, " or "), cmd.CommandPath())
					}
				}
				return usagef("%v (see %s --help)", err, cmd.CommandPath())
			}
			return nil
		}
	}
}

// addEmbedderFlags adds the flags that select an embedding model.
func addEmbedderFlags(f *pflag.FlagSet) {
	f.String("embedder", "", "embedding driver: "+strings.Join(app.EmbedderDrivers, ", ")+" (openai also serves Ollama, llama.cpp, vLLM, LM Studio)")
	f.String("embedder-model", "", "embedding model name (local: a model in the model folder, see sagasu model list)")
	f.String("embedder-url", "", "base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1")
	f.String("embedder-path", "", "static embedder: word-vector file or Model2Vec folder; local: sentence-transformers model folder")
	f.Int("embedder-dim", 0, "embedding dimension (0: the model's own)")
	f.Bool("embedder-int8", false, "local embedder: keep the model's weights as int8 (a quarter of the memory, slightly different vectors)")
	f.String("embedder-query-prefix", "", `text put before each query before it is embedded (default: the model's known one, e.g. "query: " for E5)`)
	f.String("embedder-document-prefix", "", `text put before each document before it is embedded (default: the model's known one, e.g. "passage: " for E5)`)
	f.Int("embedder-batch-size", 0, "texts per embedding request (0: the driver's default; small local servers want 8 or less)")
}

// addLLMFlags adds the flags that select a chat model.
func addLLMFlags(f *pflag.FlagSet) {
	f.String("llm", "", "chat model driver: "+strings.Join(app.LLMDrivers, ", ")+" (openai also serves llama.cpp, Ollama, vLLM, LM Studio); none: offline")
	f.String("llm-model", "", "chat model name (default: the driver's)")
	f.String("llm-url", "", "base URL of the model's API, e.g. http://127.0.0.1:8080/v1 for llama-server")
}

// addAgentFlags adds the flags that tune the agents' model calls (agent.*
// in the configuration), and with planAct Plan-and-Act's limits and its
// roles' models.
func addAgentFlags(f *pflag.FlagSet, planAct bool) {
	f.Float64("temperature", 0, "temperature of the agents' model calls (default: 0.2 for ask and chat, 0 for Plan-and-Act)")
	f.Int("max-tokens", 0, "most tokens of one model reply (default: 400 for ask and chat, 1024 for Plan-and-Act)")
	f.Int("thinking-budget", 0, "tokens a thinking model (Gemini 2.5) may think before each reply, on top of --max-tokens (default 1024 for Gemini 2.5; 0: no thinking)")
	if !planAct {
		return
	}
	f.Int("max-tool-calls", 0, "most tool calls of a Plan-and-Act run (default 30)")
	f.Duration("max-duration", 0, "most time a Plan-and-Act run may take per start or resume (default 15m)")
	for _, role := range []string{"planner", "executor"} {
		f.String(role+"-llm", "", "the "+role+"'s chat model driver (default: --llm's)")
		f.String(role+"-llm-model", "", "the "+role+"'s chat model name (default: --llm-model's)")
		f.String(role+"-llm-url", "", "the "+role+"'s model API address (default: --llm-url's, on the same driver)")
	}
}

// tuningFlags returns the agent settings set by flags on this command
// line, for a run that has settings of its own (a resumed one).
func tuningFlags(fs *pflag.FlagSet) (app.Tuning, error) {
	var t app.Tuning
	var err error
	if fs.Changed("temperature") {
		v, e := fs.GetFloat64("temperature")
		t.Temperature, err = &v, errors.Join(err, e)
	}
	if fs.Changed("thinking-budget") {
		v, e := fs.GetInt("thinking-budget")
		t.ThinkingBudget, err = &v, errors.Join(err, e)
	}
	get := func(name string, into *int) {
		if fs.Changed(name) {
			v, e := fs.GetInt(name)
			*into, err = v, errors.Join(err, e)
		}
	}
	get("max-tokens", &t.MaxTokens)
	get("max-tool-calls", &t.MaxToolCalls)
	if fs.Changed("max-duration") {
		v, e := fs.GetDuration("max-duration")
		t.MaxDuration, err = v, errors.Join(err, e)
	}
	if fs.Changed("planner-llm-model") {
		t.PlannerModel, _ = fs.GetString("planner-llm-model")
	}
	if fs.Changed("executor-llm-model") {
		t.ExecutorModel, _ = fs.GetString("executor-llm-model")
	}
	return t, err
}

// load reads the configuration for cmd.
func (g *globals) load(cmd *cobra.Command) (*app.App, error) {
	cfg, err := app.Load(g.configPath, g.environ, cmd.Flags())
	if err != nil {
		return nil, usageError{err}
	}
	g.json = cfg.JSON
	if w := cfg.Origin.Warning(); w != "" && cmd.Name() != "trust" {
		fmt.Fprintln(g.stderr, "sagasu:", w)
	}
	a := app.New(cfg, g.stderr, g.environ)
	a.Tracer = g.tracer
	return a, nil
}

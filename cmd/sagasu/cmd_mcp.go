package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/agent/react"
	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/mcpserver"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

func newMCPCmd(g *globals) *cobra.Command {
	var (
		httpAddr, token, encoding    string
		roots, origins               []string
		maxTokens, maxCalls, maxRuns int
		margin                       float64
		noToken, allowDotfiles       bool
		watchRoots                   bool
		af                           agentFlags
	)
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the index to LLM agents over MCP (stdio, or streamable HTTP with --http)",
		Long: `Mcp serves the index to LLM agents (Claude Code, Claude Desktop, VS Code, any
MCP client) over the Model Context Protocol. Without --http it speaks on
standard input and output, as clients that start it expect; logs go to stderr.

Tools come in groups; --tools (or mcp.tools in the config) picks them, the
default being search,loop, which costs a client under 5,000 tokens of
context:
  search  sagasu_search (goal-aware; detail summary, detailed, full),
          sagasu_query, sagasu_get, sagasu_list
  loop    sagasu_evaluate, sagasu_refine_query, sagasu_plan_execute_stage,
          sagasu_loop, sagasu_read_cache
  index   sagasu_index, sagasu_delete
  agents  sagasu_ask (a cited answer from the ReAct + Reflection agent: with
          the configured --llm, else offline), sagasu_agent_start, _status,
          _resume and _stop (Plan-and-Act runs in the background, resumable)
  runs    sagasu_runs_list, _delete, _prune, _export
"all" offers every group; sagasu tools lists them. Resources:
sagasu://source/{id} and sagasu://chunk/{id}. Every result is measured with a tokenizer and fitted
to its budget: summary 5,000 tokens, detailed 15,000, anything at most
--max-output-tokens. sagasu mcp config CLIENT prints (or --write merges) the
configuration for Claude Code, Claude Desktop, VS Code, Cursor or Codex.

sagasu_index reads only files under the allowed roots (--root, repeatable;
default the working directory). No tool indexes or reads dotfiles and
dot-folders (.env, .ssh/, .git/), which often hold secrets, unless
--allow-dotfiles.

--watch indexes the roots and keeps the index in step with them while the
server runs: edits, new, renamed and deleted files are written within about a
second, each burst (a git checkout) as one transaction, so a query answers
from before or after it, never half of it. sagasu_list reports when each root
was last in step and whether a sync is running.

--http serves streamable HTTP at /mcp, on loopback unless told otherwise.
Every request needs "Authorization: Bearer TOKEN", even on loopback, so
that other users and programs on this machine cannot call the tools: the
token is --token or SAGASU_MCP_TOKEN, else one kept in your configuration
folder (~/.config/sagasu/mcp-token, made on first use, readable by you
alone), which the server prints for configuring clients. --no-token serves
without one on loopback (unsafe on a machine others use). Requests from
browser origins other than loopback ones are refused unless allowed with
--allow-origin.`,
		Example: `  claude mcp add sagasu -- sagasu mcp --db /abs/path/.sagasu/sagasu.db
  sagasu mcp --http 127.0.0.1:8765
  claude mcp add --transport http sagasu http://127.0.0.1:8765/mcp --header "Authorization: Bearer $(cat ~/.config/sagasu/mcp-token)"
  SAGASU_MCP_TOKEN=$(openssl rand -hex 32) sagasu mcp --http 0.0.0.0:8765 --root /srv/docs`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			if token == "" {
				token = envValue(g.environ, "SAGASU_MCP_TOKEN")
			}
			if noToken && token != "" {
				return usagef("--no-token and a token (--token or SAGASU_MCP_TOKEN) were both given: give one")
			}
			if httpAddr != "" {
				if err := mcpserver.CheckAddr(httpAddr, token); err != nil {
					return usageError{err}
				}
			}
			kept := ""
			if httpAddr != "" && token == "" && !noToken {
				if token, kept, err = mcpToken(a.Getenv); err != nil {
					return err
				}
			}
			groups, err := tools.SelectGroups(a.Config.MCP.Tools)
			if err != nil {
				return usagef("--tools: %v", err)
			}
			counter, err := budget.New(budget.Options{Encoding: encoding, Margin: margin})
			if err != nil {
				return usageError{err}
			}
			limits, err := budget.WithCap(maxTokens)
			if err != nil {
				return usageError{err}
			}
			if err := tools.CheckRoots(roots); err != nil {
				return usageError{err}
			}
			ctx := cmd.Context()
			// A server answers many queries; an empty index takes the
			// configured embedder for good, as `sagasu index --embedder` would.
			rt, err := a.Open(ctx, app.OpenOptions{Create: true, LongLived: true, PinEmpty: true, Roots: roots,
				NoCache: af.noCache, CacheDir: af.cacheDir, CacheRetention: af.retention})
			if err != nil {
				return err
			}
			defer rt.Close()
			defer startWatch(ctx, a, rt, allowDotfiles, watchRoots)()
			stats, err := rt.Store.Stats(ctx)
			if err != nil {
				return err
			}
			ask := func(ctx context.Context, q string, o mcpserver.AskOptions) (*react.Result, error) {
				ctx, end := a.Tracer.StartAgent(ctx, "sagasu ask", "")
				res, err := rt.Asker(app.AskOptions{Offline: o.Offline, MaxTurns: o.MaxTurns, OnEvent: a.Tracer.OnEvent(ctx, nil)}).Ask(ctx, q, nil)
				end(err)
				return res, err
			}
			// Agent runs go on between tool calls; when the server ends they
			// stop (resumable) and log their outcome before the index closes.
			runCtx, stopRuns := context.WithCancel(ctx)
			runs := rt.BackgroundRuns(runCtx, maxRuns, nil)
			defer func() { stopRuns(); runs.Wait(context.WithoutCancel(ctx)) }()
			srv, err := mcpserver.New(mcpserver.Options{Tools: rt.Tools, Counter: counter, Limits: limits, Logger: a.Log, Version: appVersion(), Ask: ask,
				Agents: mcpRuns{runs}, Runs: a.RunOps(rt.Store, runs.Running), MaxConcurrentCalls: maxCalls, AllowDotfiles: allowDotfiles, Middleware: a.Tracer.MCPMiddleware(), Groups: groups})
			if err != nil {
				return usageError{err}
			}
			if httpAddr == "" {
				a.Log.Info("serving MCP over stdio", "db", app.Redact(a.Config.DB), "sources", stats.Sources)
				return srv.ServeIO(ctx, g.stdin, g.stdout)
			}
			ln, err := net.Listen("tcp", httpAddr)
			if err != nil {
				return fmt.Errorf("listen on %s: %w", httpAddr, err)
			}
			fmt.Fprintf(g.stderr, "sagasu mcp: serving %s on http://%s%s\n", app.Redact(a.Config.DB), ln.Addr(), mcpserver.Path)
			switch {
			case noToken:
				fmt.Fprintf(g.stderr, "sagasu mcp: no token (--no-token): any user or program on this machine can call the tools\n")
			case kept != "":
				fmt.Fprintf(g.stderr, "sagasu mcp: clients must send the header Authorization: Bearer %s (the token is kept in %s)\n", token, kept)
			default:
				fmt.Fprintf(g.stderr, "sagasu mcp: clients must send the header Authorization: Bearer TOKEN, with the token given (--token or SAGASU_MCP_TOKEN)\n")
			}
			return srv.ServeHTTP(ctx, ln, mcpserver.HTTPOptions{Token: token, NoToken: noToken, AllowedOrigins: origins})
		},
	}
	f := cmd.Flags()
	f.String("tools", "", "groups of tools to offer, comma-separated: search, loop, index, agents, runs, default (search,loop) or all (config mcp.tools)")
	f.StringVar(&httpAddr, "http", "", "serve streamable HTTP on this address (e.g. 127.0.0.1:8765) instead of stdio")
	f.StringVar(&token, "token", "", "bearer token HTTP clients must send (default $SAGASU_MCP_TOKEN, else one kept in ~/.config/sagasu/mcp-token); a fixed one is required off loopback")
	f.BoolVar(&noToken, "no-token", false, "serve HTTP on loopback without a token: unsafe on a machine others use, since any local user or program can then call the tools")
	f.BoolVar(&allowDotfiles, "allow-dotfiles", false, "let clients index and read dotfiles and dot-folders (.env, .ssh/, .git/), which often hold secrets")
	f.BoolVar(&watchRoots, "watch", false, "index the roots and keep the index in step with their changes while serving")
	f.Bool("no-ignore", false, "also index what .gitignore, .ignore and .sagasuignore files and the global git excludes leave out")
	f.StringArrayVar(&origins, "allow-origin", nil, "browser origin allowed to call the HTTP server besides loopback ones (repeatable)")
	f.StringArrayVar(&roots, "root", nil, "folder sagasu_index may read (repeatable; default the working directory)")
	f.IntVar(&maxTokens, "max-output-tokens", budget.DefaultCap, "most tokens any tool result may take")
	f.IntVar(&maxRuns, "max-agent-runs", 4, "Plan-and-Act runs (sagasu_agent_start, sagasu_agent_resume) run at once")
	f.IntVar(&maxCalls, "max-concurrent-calls", 0, "tool calls run at once; the rest wait their turn (default: one per processor)")
	f.StringVar(&encoding, "tokenizer", budget.Cl100k, "tokenizer that measures results: cl100k_base or o200k_base")
	f.Float64Var(&margin, "token-margin", budget.DefaultMargin, "safety margin added to every count for other vendors' tokenizers (0.2 = 20%)")
	f.Int("chunk-size", 0, "sagasu_index default: maximum tokens per chunk (default 512)")
	f.Int("chunk-overlap", 0, "sagasu_index default: tokens repeated between pieces of a long section (default 64)")
	f.Int64("max-file-size", 0, "sagasu_index: skip files larger than this many bytes (default 10 MiB)")
	f.StringSlice("exclude", nil, "sagasu_index: glob patterns to skip (repeatable)")
	f.Bool("allow-private", false, "sagasu_index: let URLs reach loopback, private and link-local addresses")
	addEmbedderFlags(f)
	addLLMFlags(f)
	addAgentFlags(f, true)
	af.register(f, true)
	cmd.AddCommand(newMCPConfigCmd(g))
	return cmd
}

// mcpToken returns the token kept for `sagasu mcp --http` in the user's
// configuration folder (made on first use) and the file's path.
func mcpToken(getenv func(string) string) (token, path string, err error) {
	dir := app.UserConfigDir(getenv)
	if dir == "" {
		return "", "", errors.New("no token to keep (the environment names no home folder): give one with --token or SAGASU_MCP_TOKEN")
	}
	path = filepath.Join(dir, "mcp-token")
	token, err = keptToken(path)
	return token, path, err
}

// envValue reads one variable from environ ("KEY=value" entries).
func envValue(environ []string, key string) string {
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// mcpRuns serves the MCP server's agent tools from the background runs.
type mcpRuns struct{ *app.BackgroundRuns }

func (m mcpRuns) StartRun(ctx context.Context, in mcpserver.AgentStartInput) (string, error) {
	opt, err := m.Options(in.Goal, in.MCP, in.Offline, in.Settings)
	if err != nil {
		return "", err
	}
	opt.Face = store.FaceMCP
	return m.Start(ctx, opt)
}

func (m mcpRuns) ResumeRun(ctx context.Context, in mcpserver.AgentResumeInput) error {
	opt, err := m.Options("", in.MCP, false, in.Settings)
	if err != nil {
		return err
	}
	opt.Face = store.FaceMCP
	return m.Resume(ctx, in.ID, opt)
}

func (m mcpRuns) StopRun(id string) bool { return m.Stop(id) }

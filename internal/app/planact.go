package app

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/agent/planact"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/loop"
	"github.com/sagasu-dev/sagasu/internal/mcpclient"
	"github.com/sagasu-dev/sagasu/internal/source/fetch"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// PlanActOptions configure a Plan-and-Act agent.
type PlanActOptions struct {
	// MCP names the configured MCP servers (mcp_servers:) the agent may use;
	// empty uses none.
	MCP []string
	// Offline runs without the configured model (the research brain).
	Offline bool
	// Table is a routing table file replacing the built-in edges.
	Table   string
	OnEvent func(graph.Event)
	// Goal titles the run in the run log.
	Goal string
}

// PlanAct returns the Plan-and-Act agent over the runtime's index, with its
// run log in the index's store (so runs can be listed, shown and resumed)
// and its memory in the agent cache folder. Call close when done: it stops
// the MCP servers the agent started.
func (r *Runtime) PlanAct(opt PlanActOptions) (agent *planact.Agent, close func(), err error) {
	a := r.app
	var mcp *mcpclient.Manager
	if len(opt.MCP) > 0 {
		servers := map[string]mcpclient.ServerConfig{}
		for _, name := range opt.MCP {
			cfg, ok := a.Config.MCPServers[name]
			if !ok && name == "playwright" {
				// Not configured: the one scripts/playwright-mcp.sh installed.
				cfg, err = mcpclient.Playwright(a.PlaywrightTools(), filepath.Join(a.CacheDir(), "playwright"))
				if err != nil {
					return nil, nil, fmt.Errorf("MCP server %q: %w; or set SAGASU_PLAYWRIGHT_TOOLS to the .tools folder that holds it, or configure mcp_servers.playwright in your user config (~/.config/sagasu/config.yaml)", name, err)
				}
				ok = true
			}
			if !ok {
				if hint := a.Config.Origin.ignoredHint("mcp_servers." + name); hint != "" {
					return nil, nil, fmt.Errorf("MCP server %q: %s", name, hint)
				}
				return nil, nil, fmt.Errorf("no MCP server %q in the configuration (mcp_servers: in sagasu.yaml); configured: %s", name, configured(a.Config.MCPServers))
			}
			if cfg.Name == "" {
				cfg.Name = name
			}
			servers[name] = cfg
		}
		// Browser servers reach internal addresses only with --allow-private
		// (index.allow_private), the switch the URL loaders obey too.
		network := fetch.Options{AllowPrivate: a.Config.Index.AllowPrivate}
		if mcp, err = mcpclient.New(servers, mcpclient.Options{Logger: a.Log, Network: network}); err != nil {
			return nil, nil, err
		}
	}
	a.noteLocalCache()
	memory, err := planact.NewFileMemory(filepath.Join(a.CacheDir(), "memory"))
	if err != nil {
		return nil, nil, err
	}
	fns, err := r.Tools.Functions()
	if err != nil {
		return nil, nil, err
	}
	popt := planact.Options{
		Functions: fns,
		Research:  planact.NewLoopResearch(r.Engine, loop.Options{Logger: a.Log}),
		Memory:    memory,
		Log:       graph.NewStoreLog(r.Store, store.RunAgent, func(string) string { return opt.Goal }),
		OnEvent:   opt.OnEvent,
		Table:     opt.Table,
	}
	if mcp != nil {
		popt.MCP = mcp
	}
	if !opt.Offline {
		popt.Model = r.LLM
	}
	agent, err = planact.New(popt)
	if err != nil {
		if mcp != nil {
			mcp.Close()
		}
		return nil, nil, err
	}
	return agent, func() {
		if mcp != nil {
			mcp.Close()
		}
	}, nil
}

func configured(m map[string]mcpclient.ServerConfig) string {
	if len(m) == 0 {
		return "none"
	}
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(slices.Clip(names), ", ")
}

// PlaywrightTools is the .tools folder that holds the Playwright MCP
// scripts/playwright-mcp.sh installed: $SAGASU_PLAYWRIGHT_TOOLS when set,
// else .tools in the checkout the sagasu binary was built in (the folder
// above bin/). Never the working directory's: a cloned repository could
// ship a .tools of its own, and --mcp playwright would run its code.
func (a *App) PlaywrightTools() string {
	if dir := a.Getenv("SAGASU_PLAYWRIGHT_TOOLS"); dir != "" {
		return dir
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return filepath.Join(filepath.Dir(filepath.Dir(exe)), ".tools")
}

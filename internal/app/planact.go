package app

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/agent/planact"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/loop"
	"github.com/sagasu-dev/sagasu/internal/mcpclient"
	"github.com/sagasu-dev/sagasu/internal/search"
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
func (r *Runtime) PlanAct(a *App, opt PlanActOptions) (agent *planact.Agent, close func(), err error) {
	var mcp *mcpclient.Manager
	if len(opt.MCP) > 0 {
		servers := map[string]mcpclient.ServerConfig{}
		for _, name := range opt.MCP {
			cfg, ok := a.Config.MCPServers[name]
			if !ok && name == "playwright" {
				// Not configured: the one scripts/playwright-mcp.sh installs
				// beside the working directory, if it is there.
				cfg, err = mcpclient.Playwright(".tools", filepath.Join(a.CacheDir(), "playwright"))
				ok = err == nil
			}
			if !ok {
				return nil, nil, fmt.Errorf("no MCP server %q in the configuration (mcp_servers: in sagasu.yaml); configured: %s", name, configured(a.Config.MCPServers))
			}
			if cfg.Name == "" {
				cfg.Name = name
			}
			servers[name] = cfg
		}
		if mcp, err = mcpclient.New(servers, mcpclient.Options{Logger: a.Log}); err != nil {
			return nil, nil, err
		}
	}
	memory, err := planact.NewFileMemory(filepath.Join(a.CacheDir(), "memory"))
	if err != nil {
		return nil, nil, err
	}
	popt := planact.Options{
		Research: planact.NewLoopResearch(r.Engine, loop.Options{Logger: a.Log}),
		Memory:   memory,
		Log:      graph.NewStoreLog(r.Store, store.RunAgent, func(string) string { return opt.Goal }),
		OnEvent:  opt.OnEvent,
		Table:    opt.Table,
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

// ResearchHits returns what Plan-and-Act's research brain (no model, no MCP
// servers, no memory) cites for a goal over the index e searches, as the
// index's hits: the measure `sagasu eval goals --research` takes.
func ResearchHits(e *search.Engine, log *slog.Logger) func(ctx context.Context, goal string) ([]doc.Hit, error) {
	return func(ctx context.Context, goal string) ([]doc.Hit, error) {
		agent, err := planact.New(planact.Options{Research: planact.NewLoopResearch(e, loop.Options{Logger: log}), Log: graph.NewMemLog()})
		if err != nil {
			return nil, err
		}
		res, err := agent.Run(ctx, planact.RunInput{Goal: goal})
		if err != nil {
			return nil, err
		}
		ids := make([]int64, 0, len(res.Results))
		for _, c := range res.Results {
			ids = append(ids, c.ChunkID)
		}
		return e.Store().Hits(ctx, ids)
	}
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

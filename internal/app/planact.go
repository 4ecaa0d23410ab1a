package app

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sagasu-dev/sagasu/internal/agent/planact"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/loop"
	"github.com/sagasu-dev/sagasu/internal/mcpclient"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/source/fetch"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// PlanActOptions configure a Plan-and-Act run.
type PlanActOptions struct {
	// Goal is what the run should achieve; it titles the run in the log.
	Goal string
	// MCP names the configured MCP servers (mcp_servers:) the agent may use;
	// empty uses none.
	MCP []string
	// Offline runs without the configured model (the research brain).
	Offline bool
	// Table is a routing table file replacing the built-in edges.
	Table string
	// Tuning overrides the configuration's agent settings for this run.
	Tuning Tuning
	// OnEvent receives every event of the run as it happens.
	OnEvent func(graph.Event)
	// Face is the face that drives the run (store.FaceCLI, FacePage,
	// FaceMCP), as its lease names it to a second driver.
	Face string
}

// Tuning is what one run may change of the configured agent settings:
// the roles' model names (on their configured driver and address), the
// temperature, the reply cap, the thinking budget and the limits. It names
// no address and no driver: a run started from the page or over MCP picks
// among the models the user configured, it does not name new endpoints.
type Tuning struct {
	PlannerModel   string        `json:"plannerModel,omitempty"`
	ExecutorModel  string        `json:"executorModel,omitempty"`
	Temperature    *float64      `json:"temperature,omitempty"`
	MaxTokens      int           `json:"maxTokens,omitempty"`
	ThinkingBudget *int          `json:"thinkingBudget,omitempty"`
	MaxToolCalls   int           `json:"maxToolCalls,omitempty"`
	MaxDuration    time.Duration `json:"maxDuration,omitempty"`
}

// apply returns c with t's settings over it.
func (t Tuning) apply(c AgentConfig) AgentConfig {
	if t.PlannerModel != "" {
		c.Planner.Model = t.PlannerModel
	}
	if t.ExecutorModel != "" {
		c.Executor.Model = t.ExecutorModel
	}
	if t.Temperature != nil {
		c.Temperature = t.Temperature
	}
	if t.MaxTokens != 0 {
		c.MaxTokens = t.MaxTokens
	}
	if t.ThinkingBudget != nil {
		c.ThinkingBudget = t.ThinkingBudget
	}
	if t.MaxToolCalls != 0 {
		c.MaxToolCalls = t.MaxToolCalls
	}
	if t.MaxDuration != 0 {
		c.MaxDuration = t.MaxDuration
	}
	return c
}

// RunSettings, ModelSettings and LimitSettings are planact's (see there):
// what a run runs with, recorded with it and restored on resume.
type (
	RunSettings   = planact.RunSettings
	ModelSettings = planact.ModelSettings
	LimitSettings = planact.LimitSettings
)

// PlanActRun is a Plan-and-Act run wired with its settings, ready to
// start (NewPlanActRun) or to continue (OpenPlanActRun). Close it when
// done: it stops the MCP servers it started.
type PlanActRun struct {
	ID       string
	Goal     string
	Settings RunSettings
	agent    *planact.Agent
	mcp      *mcpclient.Manager
	log      *graph.StoreLog // holds the run's lease from when it is prepared
	rt       *Runtime
	// planner and executor are the roles' models (nil offline).
	planner, executor llm.Model
}

// Start runs the agent toward the goal.
func (p *PlanActRun) Start(ctx context.Context) (*planact.Result, error) {
	return p.agent.Run(ctx, planact.RunInput{Goal: p.Goal, RunID: p.ID})
}

// Resume continues the run from its last checkpoint.
func (p *PlanActRun) Resume(ctx context.Context) (*planact.Result, error) {
	return p.agent.Resume(ctx, p.ID)
}

// Close stops the run's MCP servers and gives up its lease.
func (p *PlanActRun) Close() {
	if p.mcp != nil {
		p.mcp.Close()
	}
	if p.log != nil && p.ID != "" {
		p.log.Release(context.Background(), p.ID)
	}
}

// newRunID names a new run: the time, and a random part so that two
// processes starting runs at once do not collide.
func newRunID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("planact-%d-%x", time.Now().UnixNano(), b)
}

// NewPlanActRun prepares a new run toward opt.Goal with the configuration
// and opt's tuning, and records it with its settings in the index's run
// log, so that it can be listed, shown and resumed with them.
func (r *Runtime) NewPlanActRun(ctx context.Context, opt PlanActOptions) (*PlanActRun, error) {
	goal := strings.TrimSpace(opt.Goal)
	if goal == "" {
		return nil, planact.ErrEmptyGoal
	}
	cfg := opt.Tuning.apply(r.app.Config.Agent)
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	set := RunSettings{MCP: opt.MCP, Offline: opt.Offline, Routing: opt.Table}
	var planner, executor llm.Model
	if !opt.Offline && r.LLM != nil {
		var err error
		if planner, set.Planner, err = r.roleModel(RolePlanner, cfg); err != nil {
			return nil, err
		}
		if executor, set.Executor, err = r.roleModel(RoleExecutor, cfg); err != nil {
			return nil, err
		}
	}
	if executor == nil && (len(opt.MCP) > 0 || planact.NeedsBrowser(goal)) {
		return nil, planact.ErrNeedsModel
	}
	set.Limits = limitsOf(cfg)
	p, err := r.planAct(goal, set, planner, executor, opt.OnEvent, r.runLog(goal, opt.Face))
	if err != nil {
		return nil, err
	}
	p.ID = newRunID()
	meta, err := json.Marshal(set)
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("record the run's settings: %w", err)
	}
	if err := r.Store.CreateRun(ctx, store.Run{ID: p.ID, Kind: store.RunAgent, Title: goal, Status: "running", Meta: meta}); err != nil {
		p.Close()
		return nil, fmt.Errorf("record run %s: %w", p.ID, err)
	}
	if err := p.log.Claim(ctx, p.ID); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// OpenPlanActRun prepares run id to continue with the settings it was
// recorded with, opt's (MCP servers, offline, routing, tuning) over them,
// and records what changed.
func (r *Runtime) OpenPlanActRun(ctx context.Context, id string, opt PlanActOptions) (*PlanActRun, error) {
	rec, err := r.Store.Run(ctx, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && rec.Kind != store.RunAgent {
		return nil, fmt.Errorf("no agent run %q: `sagasu agent runs` lists them", id)
	}
	if err != nil {
		return nil, err
	}
	// The lease first: a second driver is refused before it changes the
	// run's settings or starts its MCP servers.
	log := r.runLog(rec.Title, opt.Face)
	if err := log.Claim(ctx, id); err != nil {
		return nil, err
	}
	p, err := r.openPlanAct(ctx, rec, opt, log)
	if err != nil {
		log.Release(context.WithoutCancel(ctx), id)
		return nil, err
	}
	return p, nil
}

// runLog is the run log a Plan-and-Act run driven from face appends to
// (and holds its lease through).
func (r *Runtime) runLog(goal, face string) *graph.StoreLog {
	return graph.NewStoreLog(r.Store, store.RunAgent, func(string) string { return goal }).As(face)
}

// openPlanAct is OpenPlanActRun once it holds the run's lease.
func (r *Runtime) openPlanAct(ctx context.Context, rec store.Run, opt PlanActOptions, log *graph.StoreLog) (*PlanActRun, error) {
	id := rec.ID
	var set RunSettings
	var err error
	if len(rec.Meta) > 0 {
		if err := json.Unmarshal(rec.Meta, &set); err != nil {
			return nil, fmt.Errorf("run %s: its recorded settings cannot be read: %w", id, err)
		}
	}
	if opt.MCP != nil {
		set.MCP = opt.MCP
	}
	if opt.Table != "" {
		set.Routing = opt.Table
	}
	set.Offline = set.Offline || opt.Offline
	if err := opt.Tuning.apply(r.app.Config.Agent).validate(); err != nil {
		return nil, err
	}
	var planner, executor llm.Model
	if !set.Offline && (r.LLM != nil || set.Executor != nil) {
		if planner, set.Planner, err = r.restoreModel(RolePlanner, set.Planner, opt.Tuning, opt.Tuning.PlannerModel); err != nil {
			return nil, err
		}
		if executor, set.Executor, err = r.restoreModel(RoleExecutor, set.Executor, opt.Tuning, opt.Tuning.ExecutorModel); err != nil {
			return nil, err
		}
	}
	set.Limits = restoreLimits(set.Limits, opt.Tuning)
	p, err := r.planAct(rec.Title, set, planner, executor, opt.OnEvent, log)
	if err != nil {
		return nil, err
	}
	p.ID = id
	if meta, err := json.Marshal(set); err == nil && string(meta) != string(rec.Meta) {
		if err := r.Store.UpdateRun(ctx, id, store.RunUpdate{Meta: meta}); err != nil {
			p.Close()
			return nil, fmt.Errorf("record the settings of run %s: %w", id, err)
		}
	}
	return p, nil
}

// roleModel builds a role's model from the configuration: the runtime's
// model when the role has none of its own (and the same name), else one
// built from the role's configuration.
func (r *Runtime) roleModel(role string, cfg AgentConfig) (llm.Model, *ModelSettings, error) {
	c := r.app.Config
	c.Agent = cfg
	lc := c.roleLLM(role)
	m := r.LLM
	if lc != c.LLM {
		var err error
		if m, err = r.app.buildLLM(lc); err != nil {
			return nil, nil, fmt.Errorf("the %s's model: %w", role, err)
		}
	}
	return m, modelSettings(m, cfg.Generation(role, m.Info())), nil
}

// restoreModel builds a role's model for a resumed run from its record.
// When the record names the endpoint the configuration gives the role now,
// the configured model is used (with the API key the configuration
// allows); else the recorded driver, model and address, which get no API
// key unless they are a vendor's own host: an address read from a record
// is not one the user named. The recorded settings of its calls stand,
// with what the resume's tuning sets over them.
func (r *Runtime) restoreModel(role string, rec *ModelSettings, t Tuning, name string) (llm.Model, *ModelSettings, error) {
	cfg := t.apply(r.app.Config.Agent)
	if rec == nil {
		if r.LLM == nil {
			return nil, nil, nil
		}
		return r.roleModel(role, cfg)
	}
	if name == "" {
		name = rec.Model
	}
	var m llm.Model
	if r.LLM != nil {
		configured, _, err := r.roleModel(role, cfg)
		if err != nil {
			return nil, nil, err
		}
		if inf := configured.Info(); inf.Driver == rec.Driver && sameEndpoint(inf.Endpoint, rec.URL) {
			m = configured
			if inf.Model != name {
				c := r.app.Config
				c.Agent = cfg
				lc := c.roleLLM(role)
				lc.Model = name
				if m, err = r.app.buildLLM(lc); err != nil {
					return nil, nil, fmt.Errorf("the %s's model: %w", role, err)
				}
			}
		}
	}
	if m == nil {
		if strings.Contains(rec.URL, "***") {
			return nil, nil, fmt.Errorf("the %s's recorded model address %s hid a secret, and the configuration names no such model now: configure it again (llm:, or agent.%s:) to resume", role, rec.URL, role)
		}
		var err error
		if m, err = r.app.buildLLM(LLMConfig{Driver: rec.Driver, Model: name, URL: rec.URL, Timeout: r.app.Config.LLM.Timeout}); err != nil {
			return nil, nil, fmt.Errorf("the %s's recorded model: %w", role, err)
		}
	}
	g := rec.Generation
	if t.Temperature != nil {
		g.Temperature = *t.Temperature
	}
	if t.MaxTokens > 0 {
		g.MaxTokens = t.MaxTokens
	}
	if t.ThinkingBudget != nil {
		g.ThinkingBudget = t.ThinkingBudget
	}
	return m, modelSettings(m, g), nil
}

// sameEndpoint reports whether a model's endpoint is the one a record
// names (as recorded: redacted).
func sameEndpoint(endpoint, recorded string) bool {
	red := store.Redact(endpoint)
	return red == recorded || sameAddress(red, recorded)
}

func modelSettings(m llm.Model, g Generation) *ModelSettings {
	inf := m.Info()
	return &ModelSettings{Driver: inf.Driver, Model: inf.Model, URL: store.Redact(inf.Endpoint), Generation: g}
}

// limitsOf are a run's limits from the agent configuration (planact's
// defaults where it sets none).
func limitsOf(c AgentConfig) LimitSettings {
	d := planact.DefaultLimits()
	l := LimitSettings{MaxToolCalls: d.MaxToolCalls, MaxDuration: d.MaxDuration.String(), MaxSteps: d.MaxSteps, MaxTokens: d.MaxTokens}
	if c.MaxToolCalls > 0 {
		l.MaxToolCalls = c.MaxToolCalls
	}
	if c.MaxDuration > 0 {
		l.MaxDuration = c.MaxDuration.String()
	}
	return l
}

// restoreLimits are a resumed run's limits: the recorded ones, with what
// the resume asks for over them.
func restoreLimits(l LimitSettings, t Tuning) LimitSettings {
	d := planact.DefaultLimits()
	if l.MaxToolCalls == 0 {
		l.MaxToolCalls = d.MaxToolCalls
	}
	if l.MaxDuration == "" {
		l.MaxDuration = d.MaxDuration.String()
	}
	if l.MaxSteps == 0 {
		l.MaxSteps = d.MaxSteps
	}
	if l.MaxTokens == 0 {
		l.MaxTokens = d.MaxTokens
	}
	if t.MaxToolCalls > 0 {
		l.MaxToolCalls = t.MaxToolCalls
	}
	if t.MaxDuration > 0 {
		l.MaxDuration = t.MaxDuration.String()
	}
	return l
}

// planAct wires the agent of a run: its MCP servers (by name, through the
// configuration), sagasu's functions, memory and run log, and the roles'
// models and settings.
func (r *Runtime) planAct(goal string, set RunSettings, planner, executor llm.Model, onEvent func(graph.Event), log *graph.StoreLog) (*PlanActRun, error) {
	a := r.app
	p := &PlanActRun{Goal: goal, Settings: set, rt: r, planner: planner, executor: executor, log: log}
	if len(set.MCP) > 0 {
		servers, err := a.mcpServers(set.MCP)
		if err != nil {
			return nil, err
		}
		// Browser servers reach internal addresses only with --allow-private
		// (index.allow_private), the switch the URL loaders obey too.
		network := fetch.Options{AllowPrivate: a.Config.Index.AllowPrivate}
		if p.mcp, err = mcpclient.New(servers, mcpclient.Options{Logger: a.Log, Network: network}); err != nil {
			return nil, err
		}
	}
	a.noteLocalCache()
	memory, err := planact.NewFileMemory(filepath.Join(a.CacheDir(), "memory"))
	if err != nil {
		p.Close()
		return nil, err
	}
	fns, err := r.Tools.Functions()
	if err != nil {
		p.Close()
		return nil, err
	}
	popt := planact.Options{
		Functions: fns,
		Research:  planact.NewLoopResearch(r.Engine, loop.Options{Logger: a.Log}),
		Memory:    memory,
		Log:       log,
		OnEvent:   onEvent,
		Table:     set.Routing,
		Limits:    set.Limits.Graph(),
		Model:     executor,
	}
	if p.mcp != nil {
		popt.MCP = p.mcp
	}
	if set.Planner != nil {
		popt.Planner = role(planner, set.Planner.Generation)
	}
	if set.Executor != nil {
		popt.Executor = role(executor, set.Executor.Generation)
	}
	if p.agent, err = planact.New(popt); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

func role(m llm.Model, g Generation) planact.Role {
	t := g.Temperature
	return planact.Role{Model: m, Temperature: &t, MaxTokens: g.MaxTokens, ThinkingBudget: g.ThinkingBudget}
}

// ErrNoMCPServer marks a run that names an MCP server the configuration
// does not have (errors.Is).
var ErrNoMCPServer = errors.New("no such MCP server")

// mcpServers resolves MCP server names through the configuration (the
// trust-filtered one): mcp_servers:, or the Playwright MCP the repository's
// script installed for "playwright" when none is configured.
func (a *App) mcpServers(names []string) (map[string]mcpclient.ServerConfig, error) {
	servers := map[string]mcpclient.ServerConfig{}
	for _, name := range names {
		cfg, ok := a.Config.MCPServers[name]
		if !ok && name == "playwright" {
			// Not configured: the one scripts/playwright-mcp.sh installed.
			var err error
			cfg, err = mcpclient.Playwright(a.PlaywrightTools(), filepath.Join(a.CacheDir(), "playwright"))
			if err != nil {
				return nil, fmt.Errorf("MCP server %q: %w; or set SAGASU_PLAYWRIGHT_TOOLS to the .tools folder that holds it, or configure mcp_servers.playwright in your user config (~/.config/sagasu/config.yaml)", name, err)
			}
			ok = true
		}
		if !ok {
			if hint := a.Config.Origin.ignoredHint("mcp_servers." + name); hint != "" {
				return nil, fmt.Errorf("MCP server %q: %s: %w", name, hint, ErrNoMCPServer)
			}
			return nil, fmt.Errorf("no MCP server %q in the configuration (mcp_servers: in sagasu.yaml); configured: %s: %w", name, configured(a.Config.MCPServers), ErrNoMCPServer)
		}
		if cfg.Name == "" {
			cfg.Name = name
		}
		servers[name] = cfg
	}
	return servers, nil
}

// ResearchHits returns what Plan-and-Act's research brain (no model, no MCP
// servers, no memory) cites for a goal over the index e searches, as the
// index's hits: the measure `sagasu eval goals --research` takes.
func ResearchHits(e *search.Engine, log *slog.Logger) func(ctx context.Context, goal string) ([]doc.Hit, error) {
	return func(ctx context.Context, goal string) ([]doc.Hit, error) {
		ts, err := tools.New(tools.Options{Engine: e, Logger: log})
		if err != nil {
			return nil, err
		}
		fns, err := ts.Functions()
		if err != nil {
			return nil, err
		}
		agent, err := planact.New(planact.Options{Research: planact.NewLoopResearch(e, loop.Options{Logger: log}), Functions: fns, Log: graph.NewMemLog()})
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

// MCPServerNames are the MCP servers a run may name: the configured ones
// (as trust left them), and playwright when none is configured by that
// name and the repository's script installed it.
func (a *App) MCPServerNames() []string {
	names := make([]string, 0, len(a.Config.MCPServers)+1)
	for n := range a.Config.MCPServers {
		names = append(names, n)
	}
	if _, ok := a.Config.MCPServers["playwright"]; !ok {
		if _, err := mcpclient.Playwright(a.PlaywrightTools(), filepath.Join(a.CacheDir(), "playwright")); err == nil {
			names = append(names, "playwright")
		}
	}
	sort.Strings(names)
	return names
}

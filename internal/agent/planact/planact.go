// Package planact is the Plan-and-Act agent: a planner writes a plan for a
// goal, an executor carries out one step at a time with one tool call (the
// connected MCP servers' tools, such as Playwright MCP, and sagasu's own
// functions sagasu_query, sagasu_get and sagasu_evaluate, the toolset's
// operations as every face offers them), and after every step the planner judges the
// result and goes on, replans, finishes with an answer or gives up. It runs
// on internal/graph, so every run is traced, bounded by limits and guards,
// and resumable from its log. Without a language model a deterministic
// research brain plans and executes over the knowledge base alone.
package planact

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/sagasu-dev/sagasu/internal/clip"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// Node names of the Plan-and-Act graph (the seed's graph).
const (
	NodePlannerInit     = "planner_init"
	NodeDispatch        = "executor_dispatch"
	NodeRun             = "executor_run"
	NodeProcessResult   = "executor_process_result"
	NodeMemoryUpdate    = "memory_update"
	NodePlannerEvaluate = "planner_evaluate"
	NodePlannerReplan   = "planner_replan"
	NodeFinish          = "finish"
)

// Branch names, for routing tables (graph.LoadTableFile).
const (
	BranchAfterPlan     = "after_plan"     // plan | retry | finish
	BranchAfterDispatch = "after_dispatch" // call | text
	BranchAfterEvaluate = "after_evaluate" // continue | next | replan | done | fail | retry
	BranchAfterReplan   = "after_replan"   // plan | retry | finish
)

// ToolSearch is sagasu's search, offered beside the MCP servers' tools;
// the research brain searches with it too.
const ToolSearch = tools.NameQuery

// Defaults.
const (
	DefaultMaxReplans  = 5
	DefaultCallTimeout = 2 * time.Minute
	// DefaultMaxRefines bounds the research brain's refined searches per aspect.
	DefaultMaxRefines = 2
	recallN           = 3
	searchK           = 5
)

// Functions are the knowledge base's operations as model functions
// (*tools.Functions), and how a resumed run reads its passages back.
type Functions interface {
	// List returns the functions (sagasu_query, sagasu_get, sagasu_evaluate).
	List() []llm.Function
	// Passages reads chunks by ID as the index holds them now (cite.Loader).
	Passages(ctx context.Context, ids []int64) ([]doc.Hit, error)
}

// MCP gives the tools of the configured MCP servers as functions
// (*mcpclient.Manager): with some servers failing, the others' functions
// and the failures.
type MCP interface {
	Functions(ctx context.Context) ([]llm.Function, error)
}

// Options configure an Agent.
type Options struct {
	// Model plans and executes (the planner's model is Planner.Model when
	// set). Without one the research brain runs, and goals that need a
	// browser are refused.
	Model llm.Model
	// Planner and Executor say how each role's model calls are made: the
	// planner writes the plan, judges every step and replans; the executor
	// turns a step into a tool call. Zero fields take the defaults
	// (temperature 0, replies of at most 1,024 tokens, Model).
	Planner, Executor Role
	// MCP gives the tools of the configured MCP servers (nil: none).
	MCP MCP
	// Functions are sagasu's own tools (sagasu_query, sagasu_get,
	// sagasu_evaluate), offered beside the MCP servers'; the research brain
	// searches with sagasu_query.
	Functions Functions
	// Research plans, judges and refines for the brain that runs without a
	// model.
	Research Research
	// Memory recalls similar past runs for the planner and remembers this
	// one (nil: no memory).
	Memory Memory
	// Log keeps the trace and checkpoints; Resume needs the same log. Nil
	// keeps them in memory.
	Log graph.Log
	// OnEvent receives every trace event of every run as it happens.
	OnEvent func(graph.Event)
	// Limits and Guards bound a run; zero fields take this package's
	// defaults (see DefaultLimits and DefaultGuards).
	Limits graph.Limits
	Guards graph.Guards
	// MaxReplans bounds replanning (default 5); the run fails after it.
	MaxReplans int
	// CallTimeout bounds one tool call (default 2 minutes).
	CallTimeout time.Duration
	// Table, when set, is a routing table file (graph.LoadTableFile) that
	// replaces the built-in edges.
	Table string
	// Now stamps run ids and recollections (default time.Now).
	Now func() time.Time
}

// Role is how one role's model calls are made.
type Role struct {
	// Model answers the role's calls (nil: Options.Model).
	Model       llm.Model
	Temperature *float64
	// MaxTokens caps one reply's text (default 1,024), and ThinkingBudget
	// is what a thinking model may spend before it (see llm.Request).
	MaxTokens      int
	ThinkingBudget *int
}

// DefaultReplyTokens caps one reply of the planner or the executor.
const DefaultReplyTokens = 1024

func (r Role) resolved(model llm.Model) Role {
	if r.Model == nil {
		r.Model = model
	}
	if r.Temperature == nil {
		t := 0.0
		r.Temperature = &t
	}
	if r.MaxTokens <= 0 {
		r.MaxTokens = DefaultReplyTokens
	}
	return r
}

// DefaultLimits are the limits of a run: the reference code's 30 executor
// actions, and node steps for them (five nodes per action) plus replans.
func DefaultLimits() graph.Limits {
	return graph.Limits{MaxSteps: 200, MaxDuration: 15 * time.Minute, MaxToolCalls: 30, MaxTokens: 1_000_000}
}

// DefaultGuards are the guards of a run: 5 identical actions, 3 parse
// failures in a row, and three executor rounds (15 nodes) that learn nothing.
func DefaultGuards() graph.Guards {
	return graph.Guards{RepeatMax: 5, RepeatWindow: 20, NoProgressSteps: 15, MaxParseFailures: 3}
}

// Agent runs Plan-and-Act. It is safe for concurrent use by runs with
// different ids.
type Agent struct {
	opt      Options
	compiled *graph.Compiled[State]
}

// ErrEmptyGoal is returned for a goal without text.
var ErrEmptyGoal = errors.New("the goal is empty: say what the agent should do, e.g. \"find the opening hours on https://example.org\"")

// ErrNeedsModel is returned for a goal that needs a browser (or MCP
// servers) when no language model is configured.
var ErrNeedsModel = errors.New("this goal needs a browser (MCP tools), which only a language model can drive: " +
	"configure one with --llm openai --llm-url http://127.0.0.1:PORT/v1 (any OpenAI-compatible server), " +
	"or start the local models with eval \"$(scripts/local-models.sh start)\"; " +
	"without a model the agent only researches the knowledge base")

// New checks the options and builds the graph.
func New(opt Options) (*Agent, error) {
	if opt.Model == nil && opt.Research == nil {
		return nil, errors.New("plan-and-act: give a language model, or a knowledge base to research (Research), or both")
	}
	if opt.Research != nil && opt.Functions == nil {
		return nil, errors.New("plan-and-act: the research brain searches through the knowledge base's functions: give Functions")
	}
	if opt.MaxReplans <= 0 {
		opt.MaxReplans = DefaultMaxReplans
	}
	if opt.CallTimeout <= 0 {
		opt.CallTimeout = DefaultCallTimeout
	}
	opt.Planner, opt.Executor = opt.Planner.resolved(opt.Model), opt.Executor.resolved(opt.Model)
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Log == nil {
		opt.Log = graph.NewMemLog()
	}
	a := &Agent{opt: opt}
	g := a.graph()
	if opt.Table != "" {
		if err := g.LoadTableFile(opt.Table); err != nil {
			return nil, fmt.Errorf("plan-and-act: %w", err)
		}
	}
	c, err := g.Compile(opt.Log,
		graph.WithLimits(merge(opt.Limits, DefaultLimits())),
		graph.WithGuards(mergeGuards(opt.Guards, DefaultGuards())))
	if err != nil {
		return nil, fmt.Errorf("plan-and-act: build the graph: %w", err)
	}
	a.compiled = c
	return a, nil
}

func merge(l, d graph.Limits) graph.Limits {
	return graph.Limits{MaxSteps: or(l.MaxSteps, d.MaxSteps), MaxDuration: or(l.MaxDuration, d.MaxDuration),
		MaxToolCalls: or(l.MaxToolCalls, d.MaxToolCalls), MaxTokens: or(l.MaxTokens, d.MaxTokens)}
}

func mergeGuards(g, d graph.Guards) graph.Guards {
	return graph.Guards{RepeatMax: or(g.RepeatMax, d.RepeatMax), RepeatWindow: or(g.RepeatWindow, d.RepeatWindow),
		NoProgressSteps: or(g.NoProgressSteps, d.NoProgressSteps), MaxParseFailures: or(g.MaxParseFailures, d.MaxParseFailures)}
}

// or is v, or d when v is zero (a negative v, which turns a limit off, stays).
func or[T comparable](v, d T) T {
	var zero T
	if v == zero {
		return d
	}
	return v
}

// RunInput is one run's request.
type RunInput struct {
	Goal string
	// RunID names the run in the log (default "planact-<unix nanoseconds>").
	RunID string
}

// Result is how a run ended; `sagasu agent --json` prints it.
type Result struct {
	Run     string       `json:"run"`
	Goal    string       `json:"goal"`
	Outcome string       `json:"outcome"` // success | failure | stopped
	Reason  string       `json:"reason,omitempty"`
	Answer  string       `json:"answer,omitempty"`
	Plan    []Step       `json:"plan"`
	Steps   []Record     `json:"steps"`
	Replans int          `json:"replans"`
	Results []Cited      `json:"results"`
	Usage   graph.Tokens `json:"usage"`
	// Guard names the limit or guard that stopped the run.
	Guard string `json:"guard,omitempty"`
	// Trace is the run's events (without checkpoints) in this call.
	Trace []graph.Event `json:"-"`
}

// browserRE finds goals that need a browser: a URL or words of web actions.
var browserRE = regexp.MustCompile(`(?i)(https?://|www\.|\bclick|\bnavigate|\bopen (the|a|this) (page|site|website|url|link)\b|\bbrowse\b|\blog ?in to\b|\bsign ?in to\b|\bfill (in|out) the\b|\bsubmit the form|\bscreenshot|クリック|ページを開|サイトを開|ブラウザで|ログインして)`)

// NeedsBrowser reports whether goal asks for web actions (a URL, click,
// navigate, open the page, ...).
func NeedsBrowser(goal string) bool { return browserRE.MatchString(goal) }

// Run plans and carries out in.Goal.
func (a *Agent) Run(ctx context.Context, in RunInput) (*Result, error) {
	goal := strings.TrimSpace(in.Goal)
	if goal == "" {
		return nil, ErrEmptyGoal
	}
	if a.opt.Model == nil && (a.opt.MCP != nil || NeedsBrowser(goal)) {
		return nil, ErrNeedsModel
	}
	run := in.RunID
	if run == "" {
		run = fmt.Sprintf("planact-%d", a.opt.Now().UnixNano())
	}
	var trace []graph.Event
	final, out := a.compiled.Invoke(ctx, run, State{Goal: goal, Research: a.opt.Model == nil}, a.observer(&trace))
	var se *graph.StartError
	if errors.As(out.Err, &se) {
		return nil, se
	}
	return a.result(ctx, run, final, out, trace), nil
}

// Resume continues run from its last checkpoint in the log (after a crash
// or a stop); a tool call that completed before is not made again.
func (a *Agent) Resume(ctx context.Context, run string) (*Result, error) {
	if strings.TrimSpace(run) == "" {
		return nil, errors.New("resume: the run id is empty; give the id a run printed")
	}
	var trace []graph.Event
	final, out := a.compiled.Resume(ctx, run, a.observer(&trace))
	var se *graph.StartError
	if errors.As(out.Err, &se) {
		return nil, se
	}
	return a.result(ctx, run, final, out, trace), nil
}

// result turns the final state and the graph's outcome into a Result and
// remembers the run.
func (a *Agent) result(ctx context.Context, run string, s State, out graph.Outcome, trace []graph.Event) *Result {
	r := &Result{
		Run: run, Goal: s.Goal, Outcome: s.Outcome, Reason: s.Reason, Answer: s.Answer,
		Plan: s.Plan, Steps: s.History, Replans: s.Replans, Results: s.Results, Usage: out.Tokens,
		Trace: trace,
	}
	switch out.Status {
	case graph.Stopped:
		r.Outcome, r.Guard = OutcomeStopped, out.Guard
		r.Reason = out.Reason
		if out.Guard != "" {
			r.Reason = out.Guard + ": " + out.Reason
		}
	case graph.Failure:
		r.Outcome, r.Reason = OutcomeFailure, out.Reason
	}
	if r.Outcome == "" {
		r.Outcome = OutcomeFailure
	}
	if r.Plan == nil {
		r.Plan = []Step{}
	}
	if r.Steps == nil {
		r.Steps = []Record{}
	}
	if r.Results == nil {
		r.Results = []Cited{}
	}
	if a.opt.Memory != nil && s.Goal != "" {
		rec := Recollection{Run: run, Goal: s.Goal, Outcome: r.Outcome, Reason: r.Reason, Answer: clip.Runes(r.Answer, 500), At: a.opt.Now().UTC()}
		for _, st := range s.Plan {
			rec.Plan = append(rec.Plan, st.Text)
			if st.Status == StatusFailed {
				rec.Failed = append(rec.Failed, st.Text+": "+clip.Runes(st.Result, 200))
			}
		}
		// The memory is a help, not part of the result: a failure to write
		// it is a trace event, not an error.
		if err := a.opt.Memory.Remember(context.WithoutCancel(ctx), rec); err != nil {
			r.Trace = append(r.Trace, graph.Event{Run: run, Type: graph.TypeError, Text: "remember the run: " + err.Error()})
		}
	}
	return r
}

// observer collects a call's trace events (not its checkpoints and Once
// records) into trace and forwards them to OnEvent.
func (a *Agent) observer(trace *[]graph.Event) graph.RunOption {
	return graph.Observe(func(ev graph.Event) {
		if ev.Type == graph.TypeCheckpoint || ev.Type == graph.TypeOnce {
			return
		}
		*trace = append(*trace, ev)
		if a.opt.OnEvent != nil {
			a.opt.OnEvent(ev)
		}
	})
}

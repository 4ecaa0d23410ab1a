package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sagasu-dev/sagasu/internal/agent/planact"
	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/clip"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// Names of the tools that drive Plan-and-Act runs.
const (
	ToolAgentStart  = "sagasu_agent_start"
	ToolAgentStatus = "sagasu_agent_status"
	ToolAgentResume = "sagasu_agent_resume"
	ToolAgentStop   = "sagasu_agent_stop"
)

// AgentRuns drives Plan-and-Act runs in the background for the agent
// tools (the application's background runs): a start or a resume returns
// once the run is under way, so no tool call waits for a long run. An
// unknown run's error says so.
type AgentRuns interface {
	StartRun(ctx context.Context, in AgentStartInput) (id string, err error)
	ResumeRun(ctx context.Context, in AgentResumeInput) error
	StopRun(id string) bool
	Report(ctx context.Context, id string) (planact.Report, error)
}

// AgentStartInput is sagasu_agent_start's input.
type AgentStartInput struct {
	Goal     string              `json:"goal" jsonschema:"what the agent should achieve"`
	MCP      []string            `json:"mcp,omitempty" jsonschema:"configured MCP servers the agent may use, by name (such as playwright for a browser)"`
	Offline  bool                `json:"offline,omitempty" jsonschema:"research the index without the server's language model"`
	Settings planact.TuningInput `json:"settings,omitzero" jsonschema:"the run's models, temperature, reply cap, thinking budget and limits over the configured ones"`
}

// AgentResumeInput is sagasu_agent_resume's input.
type AgentResumeInput struct {
	ID       string              `json:"id" jsonschema:"the run to continue"`
	MCP      []string            `json:"mcp,omitempty" jsonschema:"MCP servers to use instead of the ones the run recorded"`
	Settings planact.TuningInput `json:"settings,omitzero" jsonschema:"settings over the ones the run recorded"`
}

// AgentRunInput names a run (sagasu_agent_status, sagasu_agent_stop).
type AgentRunInput struct {
	ID string `json:"id" jsonschema:"the run's ID, as sagasu_agent_start returned it"`
}

// AgentStarted answers a start or a resume.
type AgentStarted struct {
	ID     string `json:"id"`
	Status string `json:"status" jsonschema:"running"`
	Next   string `json:"next" jsonschema:"how to follow the run"`
	tools.Measured
}

// AgentStopped answers sagasu_agent_stop.
type AgentStopped struct {
	ID       string `json:"id"`
	Stopping bool   `json:"stopping"`
	tools.Measured
}

// AgentStatus is a run as sagasu_agent_status reports it.
type AgentStatus struct {
	planact.Report
	// OmittedResults were left out to fit the budget.
	OmittedResults int `json:"omittedResults,omitempty"`
	tools.Measured
}

// agentOps are the Plan-and-Act operations over agents (nil: listed, not
// callable).
func agentOps(agents AgentRuns) []tools.Op {
	nonEmpty := func(name string) func(*jsonschema.Schema) {
		return func(in *jsonschema.Schema) { tools.NotEmpty(tools.Prop(in, name)) }
	}
	defStart := tools.Define[AgentStartInput](tools.Def{Name: ToolAgentStart, Title: "Start an agent run",
		Description: "Start a Plan-and-Act run toward a goal and return its ID at once; the run goes on in the server, with the configured MCP servers it names " +
			"(a browser through Playwright MCP, for one). Follow it with " + ToolAgentStatus + "."},
		nonEmpty("goal"))
	defStatus := tools.Define[AgentRunInput](tools.Def{Name: ToolAgentStatus, Title: "Read an agent run", ReadOnly: true, Idempotent: true,
		Description: "Read a Plan-and-Act run: whether it is running, its plan and each step's status, its answer and cited chunks, its outcome and recorded settings."},
		nonEmpty("id"))
	defResume := tools.Define[AgentResumeInput](tools.Def{Name: ToolAgentResume, Title: "Resume an agent run",
		Description: "Continue a stopped or failed Plan-and-Act run from its last completed step, in the background, with the settings it recorded and any given here over them."},
		nonEmpty("id"))
	defStop := tools.Define[AgentRunInput](tools.Def{Name: ToolAgentStop, Title: "Stop an agent run", Idempotent: true,
		Description: "Stop a Plan-and-Act run this server is running; " + ToolAgentResume + " continues it later."},
		nonEmpty("id"))
	if agents == nil {
		return []tools.Op{
			tools.Bind[AgentStartInput](defStart, tools.GroupAgents, tools.OutputOf[AgentStarted](), nil),
			tools.Bind[AgentRunInput](defStatus, tools.GroupAgents, tools.OutputOf[AgentStatus](), nil),
			tools.Bind[AgentResumeInput](defResume, tools.GroupAgents, tools.OutputOf[AgentStarted](), nil),
			tools.Bind[AgentRunInput](defStop, tools.GroupAgents, tools.OutputOf[AgentStopped](), nil),
		}
	}
	return []tools.Op{
		tools.Bind(defStart, tools.GroupAgents, tools.OutputOf[AgentStarted](), func(ctx context.Context, env *tools.Env, in AgentStartInput) (tools.Reply, error) {
			id, err := agents.StartRun(ctx, in)
			if errors.Is(err, planact.ErrNeedsModel) {
				return tools.Reply{}, fmt.Errorf("%w (this server has no language model for the agent; pass offline to research the index)", err)
			}
			if err != nil {
				return tools.Reply{}, fmt.Errorf("start the agent: %w", err)
			}
			return started(env, id)
		}),
		tools.Bind(defStatus, tools.GroupAgents, tools.OutputOf[AgentStatus](), func(ctx context.Context, env *tools.Env, in AgentRunInput) (tools.Reply, error) {
			return agentStatus(ctx, env, agents, in)
		}),
		tools.Bind(defResume, tools.GroupAgents, tools.OutputOf[AgentStarted](), func(ctx context.Context, env *tools.Env, in AgentResumeInput) (tools.Reply, error) {
			if err := agents.ResumeRun(ctx, in); err != nil {
				return tools.Reply{}, fmt.Errorf("resume run %s: %w", in.ID, err)
			}
			return started(env, in.ID)
		}),
		tools.Bind(defStop, tools.GroupAgents, tools.OutputOf[AgentStopped](), func(ctx context.Context, env *tools.Env, in AgentRunInput) (tools.Reply, error) {
			if !agents.StopRun(in.ID) {
				if _, err := agents.Report(ctx, in.ID); err != nil {
					return tools.Reply{}, err
				}
				return tools.Reply{}, fmt.Errorf("run %s is not running on this server", in.ID)
			}
			return tools.Fit(env, env.Budget().Mode(ModeSummary), budget.Shape{}, 0, func(_ budget.Shape, est int) tools.View[AgentStopped] {
				out := AgentStopped{ID: in.ID, Stopping: true, Measured: tools.Measured{EstimatedTokens: est}}
				return tools.View[AgentStopped]{Out: out, Text: fmt.Sprintf("Run %s is stopping; %s continues it.\n", in.ID, ToolAgentResume)}
			})
		}),
	}
}

func started(env *tools.Env, id string) (tools.Reply, error) {
	return tools.Fit(env, env.Budget().Mode(ModeSummary), budget.Shape{}, 0, func(_ budget.Shape, est int) tools.View[AgentStarted] {
		out := AgentStarted{ID: id, Status: "running", Next: fmt.Sprintf("call %s with id %q until it is no longer running", ToolAgentStatus, id)}
		out.EstimatedTokens = est
		return tools.View[AgentStarted]{Out: out, Text: fmt.Sprintf("Run %s is running. %s.\n", id, out.Next)}
	})
}

func agentStatus(ctx context.Context, env *tools.Env, agents AgentRuns, in AgentRunInput) (tools.Reply, error) {
	rep, err := agents.Report(ctx, in.ID)
	if err != nil {
		return tools.Reply{}, err
	}
	// What may grow without bound is cut to fit: the step results, the
	// answer and the cited chunks.
	lens := []int{utf8.RuneCountInString(rep.Answer)}
	for _, st := range rep.Plan {
		lens = append(lens, utf8.RuneCountInString(st.Result))
	}
	limit := env.Budget().Mode(ModeDetailed)
	full := budget.Shape{Items: len(rep.Results), Text: budget.TextBound(lens, limit)}
	return tools.Fit(env, limit, full, 200, func(sh budget.Shape, est int) tools.View[AgentStatus] {
		out := AgentStatus{Report: rep, OmittedResults: len(rep.Results) - sh.Items}
		out.Results = rep.Results[:sh.Items]
		out.Answer = clip.Runes(rep.Answer, sh.Text)
		out.Plan = make([]planact.Step, len(rep.Plan))
		for i, st := range rep.Plan {
			st.Result = clip.Runes(st.Result, sh.Text)
			st.Tried = nil
			out.Plan[i] = st
		}
		out.EstimatedTokens = est
		return tools.View[AgentStatus]{Out: out, Text: statusText(out)}
	})
}

// statusText renders a run's status for people and models.
func statusText(r AgentStatus) string {
	var b strings.Builder
	fmt.Fprintf(&b, "run %s: %s", r.ID, r.Status)
	if r.Running {
		b.WriteString(" (running now)")
	}
	if r.Goal != "" {
		fmt.Fprintf(&b, "\ngoal: %s", r.Goal)
	}
	b.WriteString("\n")
	if o := r.Outcome; o != nil {
		fmt.Fprintf(&b, "outcome: %s", o.Status)
		if o.Reason != "" {
			fmt.Fprintf(&b, " (%s)", o.Reason)
		}
		fmt.Fprintf(&b, "; %d steps, %d tool calls\n", o.Steps, o.ToolCalls)
	}
	if r.Error != "" {
		fmt.Fprintf(&b, "failed: %s\n", r.Error)
	}
	if set := r.Settings; set != nil && len(set.MCP) > 0 {
		fmt.Fprintf(&b, "MCP servers: %s\n", strings.Join(set.MCP, ", "))
	}
	for i, st := range r.Plan {
		fmt.Fprintf(&b, "  %d. [%s] %s\n", i+1, st.Status, st.Text)
		if st.Result != "" {
			fmt.Fprintf(&b, "     %s\n", st.Result)
		}
	}
	if r.Answer != "" {
		fmt.Fprintf(&b, "\n%s\n", r.Answer)
	}
	for _, c := range r.Results {
		fmt.Fprintf(&b, "  - %s  %s (%s)\n", c.Source.URI, c.Heading, tools.ChunkURI(c.ChunkID))
	}
	if r.OmittedResults > 0 {
		fmt.Fprintf(&b, "… %d more cited chunks left out to fit the budget.\n", r.OmittedResults)
	}
	if !r.Running && r.Outcome != nil && r.Outcome.Status != graph.Success || r.Error != "" {
		fmt.Fprintf(&b, "continue it with %s\n", ToolAgentResume)
	}
	return b.String()
}

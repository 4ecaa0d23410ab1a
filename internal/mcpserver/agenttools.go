package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

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

func (s *Server) addAgentTools() {
	if s.opt.Agents == nil {
		return
	}
	nonEmpty := func(name string) func(*jsonschema.Schema) {
		return func(in *jsonschema.Schema) { tools.NotEmpty(tools.Prop(in, name)) }
	}
	addTool(s, tools.Define[AgentStartInput](tools.Def{Name: ToolAgentStart, Title: "Start an agent run",
		Description: "Start a Plan-and-Act run toward a goal and return its ID at once; the run goes on in the server, with the configured MCP servers it names " +
			"(a browser through Playwright MCP, for one) and its settings over the configured ones. Follow it with " + ToolAgentStatus + "; continue a stopped run with " + ToolAgentResume + "."},
		nonEmpty("goal")), s.agentStart)
	addTool(s, tools.Define[AgentRunInput](tools.Def{Name: ToolAgentStatus, Title: "Read an agent run", ReadOnly: true, Idempotent: true,
		Description: "Read a Plan-and-Act run: whether it is running, its plan with each step's status, its answer and cited chunks, its outcome (success, stopped by a limit or a stop, failure) " +
			"and the settings it recorded (MCP servers, models, limits)."},
		nonEmpty("id")), s.agentStatus)
	addTool(s, tools.Define[AgentResumeInput](tools.Def{Name: ToolAgentResume, Title: "Resume an agent run",
		Description: "Continue a stopped or failed Plan-and-Act run from its last completed step, in the background, with the settings it recorded (its MCP servers, models, limits) " +
			"and any given here over them; a tool call that completed is not made again. Returns at once; follow it with " + ToolAgentStatus + "."},
		nonEmpty("id")), s.agentResume)
	addTool(s, tools.Define[AgentRunInput](tools.Def{Name: ToolAgentStop, Title: "Stop an agent run", Idempotent: true,
		Description: "Stop a Plan-and-Act run this server is running; it can be resumed later with " + ToolAgentResume + "."},
		nonEmpty("id")), s.agentStop)
}

func (s *Server) agentStart(ctx context.Context, req *mcp.CallToolRequest, in AgentStartInput) (*mcp.CallToolResult, AgentStarted, error) {
	id, err := s.opt.Agents.StartRun(ctx, in)
	if errors.Is(err, planact.ErrNeedsModel) {
		return nil, AgentStarted{}, fmt.Errorf("%w (this server has no language model for the agent; pass offline to research the index)", err)
	}
	if err != nil {
		return nil, AgentStarted{}, fmt.Errorf("start the agent: %w", err)
	}
	return s.started(req, id)
}

func (s *Server) agentResume(ctx context.Context, req *mcp.CallToolRequest, in AgentResumeInput) (*mcp.CallToolResult, AgentStarted, error) {
	if err := s.opt.Agents.ResumeRun(ctx, in); err != nil {
		return nil, AgentStarted{}, fmt.Errorf("resume run %s: %w", in.ID, err)
	}
	return s.started(req, in.ID)
}

func (s *Server) started(req *mcp.CallToolRequest, id string) (*mcp.CallToolResult, AgentStarted, error) {
	limit := s.limits.Mode(ModeSummary)
	return fit(s, req, limit, budget.Shape{}, 0, func(_ budget.Shape, est int) view[AgentStarted] {
		out := AgentStarted{ID: id, Status: "running", Next: fmt.Sprintf("call %s with id %q until it is no longer running", ToolAgentStatus, id)}
		out.Measured = tools.Measured{EstimatedTokens: est, Budget: limit}
		return view[AgentStarted]{Out: out, Text: fmt.Sprintf("Run %s is running. %s.\n", id, out.Next)}
	})
}

func (s *Server) agentStop(ctx context.Context, req *mcp.CallToolRequest, in AgentRunInput) (*mcp.CallToolResult, AgentStopped, error) {
	if !s.opt.Agents.StopRun(in.ID) {
		if _, err := s.opt.Agents.Report(ctx, in.ID); err != nil {
			return nil, AgentStopped{}, err
		}
		return nil, AgentStopped{}, fmt.Errorf("run %s is not running on this server", in.ID)
	}
	limit := s.limits.Mode(ModeSummary)
	return fit(s, req, limit, budget.Shape{}, 0, func(_ budget.Shape, est int) view[AgentStopped] {
		out := AgentStopped{ID: in.ID, Stopping: true, Measured: tools.Measured{EstimatedTokens: est, Budget: limit}}
		return view[AgentStopped]{Out: out, Text: fmt.Sprintf("Run %s is stopping; %s continues it.\n", in.ID, ToolAgentResume)}
	})
}

func (s *Server) agentStatus(ctx context.Context, req *mcp.CallToolRequest, in AgentRunInput) (*mcp.CallToolResult, AgentStatus, error) {
	rep, err := s.opt.Agents.Report(ctx, in.ID)
	if err != nil {
		return nil, AgentStatus{}, err
	}
	// What may grow without bound is cut to fit: the step results, the
	// answer and the cited chunks.
	lens := []int{utf8.RuneCountInString(rep.Answer)}
	for _, st := range rep.Plan {
		lens = append(lens, utf8.RuneCountInString(st.Result))
	}
	limit := s.limits.Mode(ModeDetailed)
	full := budget.Shape{Items: len(rep.Results), Text: budget.TextBound(lens, limit)}
	return fit(s, req, limit, full, 200, func(sh budget.Shape, est int) view[AgentStatus] {
		out := AgentStatus{Report: rep, OmittedResults: len(rep.Results) - sh.Items}
		out.Results = rep.Results[:sh.Items]
		out.Answer = clip.Runes(rep.Answer, sh.Text)
		out.Plan = make([]planact.Step, len(rep.Plan))
		for i, st := range rep.Plan {
			st.Result = clip.Runes(st.Result, sh.Text)
			st.Tried = nil
			out.Plan[i] = st
		}
		out.Measured = tools.Measured{EstimatedTokens: est, Budget: limit}
		return view[AgentStatus]{Out: out, Text: statusText(out)}
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

package app

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sagasu-dev/sagasu/internal/agent/planact"
	"github.com/sagasu-dev/sagasu/internal/llm"
)

// AgentConfig tunes the agents' model calls and limits. Unset fields take
// the defaults that suit the agent and the model's vendor (Generation).
type AgentConfig struct {
	// Temperature of every model call; unset: 0.2 for ask and chat, 0 for
	// Plan-and-Act's planner and executor.
	Temperature *float64 `koanf:"temperature" json:"temperature,omitempty" flag:"temperature"`
	// MaxTokens caps the text of one reply; 0: 400 for ask and chat, 1,024
	// for the planner and the executor.
	MaxTokens int `koanf:"max_tokens" json:"maxTokens,omitempty" flag:"max-tokens"`
	// ThinkingBudget is what a thinking model may spend thinking before a
	// reply, on top of MaxTokens (Gemini 2.5); unset: 1,024 for Gemini 2.5
	// models, the model's own behaviour otherwise; 0 turns thinking off
	// where the model allows it.
	ThinkingBudget *int `koanf:"thinking_budget" json:"thinkingBudget,omitempty" flag:"thinking-budget"`
	// MaxToolCalls and MaxDuration bound a Plan-and-Act run (0: 30 tool
	// calls and 15 minutes per start or resume).
	MaxToolCalls int           `koanf:"max_tool_calls" json:"maxToolCalls,omitempty" flag:"max-tool-calls"`
	MaxDuration  time.Duration `koanf:"max_duration" json:"maxDuration,omitempty" flag:"max-duration"`
	// Planner and Executor give Plan-and-Act's roles models of their own
	// (the planner also judges each step and replans); an unset driver,
	// model or address is llm:'s.
	Planner  LLMConfig `koanf:"planner" json:"planner,omitzero" flagprefix:"planner-"`
	Executor LLMConfig `koanf:"executor" json:"executor,omitzero" flagprefix:"executor-"`
}

// Roles of the agents' model calls.
const (
	RoleAsk      = "ask"      // ReAct + Reflection (ask, chat, sagasu_ask)
	RolePlanner  = "planner"  // Plan-and-Act: plan, judge each step, replan
	RoleExecutor = "executor" // Plan-and-Act: one tool call per step
)

// ErrBadSetting marks an agent setting out of its range (errors.Is).
var ErrBadSetting = errors.New("an agent setting is out of range")

func (c AgentConfig) validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%s: %w", fmt.Sprintf(format, a...), ErrBadSetting)
	}
	if t := c.Temperature; t != nil && (*t < 0 || *t > 2) {
		return bad("agent.temperature %g: give a number from 0 to 2", *t)
	}
	if c.MaxTokens < 0 || c.MaxTokens > 65536 {
		return bad("agent.max_tokens %d: give a number of tokens from 1 to 65536, or 0 for the default", c.MaxTokens)
	}
	if b := c.ThinkingBudget; b != nil && (*b < 0 || *b > 32768) {
		return bad("agent.thinking_budget %d: give a number of tokens from 0 (no thinking) to 32768", *b)
	}
	if c.MaxToolCalls < 0 || c.MaxDuration < 0 {
		return bad("agent.max_tool_calls and agent.max_duration must not be negative (0: the defaults, 30 calls and 15 minutes)")
	}
	for role, l := range map[string]LLMConfig{RolePlanner: c.Planner, RoleExecutor: c.Executor} {
		if l.Driver != "" && !slices.Contains(LLMDrivers, l.Driver) {
			return bad("agent.%s.driver %q: use openai, gemini or anthropic", role, l.Driver)
		}
	}
	return nil
}

// Generation is how one role's model calls are made (planact's).
type Generation = planact.Generation

// Generation returns role's settings for calls to the model info names:
// the configured ones, else the role's and the vendor's defaults.
func (c AgentConfig) Generation(role string, info llm.Info) Generation {
	g := Generation{MaxTokens: 1024}
	if role == RoleAsk {
		g.Temperature, g.MaxTokens = 0.2, 400
	}
	if c.Temperature != nil {
		g.Temperature = *c.Temperature
	}
	if c.MaxTokens > 0 {
		g.MaxTokens = c.MaxTokens
	}
	switch {
	case c.ThinkingBudget != nil:
		b := *c.ThinkingBudget
		g.ThinkingBudget = &b
	case thinks(info):
		// A 2.5 model thinks before it answers, and its thinking counts
		// toward the reply's cap: give it a budget of its own, or it may
		// spend the whole cap before any text.
		b := 1024
		g.ThinkingBudget = &b
	}
	return g
}

// thinks reports whether a model thinks by default before it answers and
// takes a thinking budget (Gemini 2.5).
func thinks(info llm.Info) bool {
	return info.Driver == "gemini" && strings.Contains(info.Model, "gemini-2.5")
}

// roleLLM is the model configuration of a Plan-and-Act role: its own, with
// what it leaves unset taken from llm:. A role that names another driver
// takes nothing of llm:'s address.
func (c Config) roleLLM(role string) LLMConfig {
	r := c.LLM
	var own LLMConfig
	switch role {
	case RolePlanner:
		own = c.Agent.Planner
	case RoleExecutor:
		own = c.Agent.Executor
	default:
		return r
	}
	if own.Driver != "" && own.Driver != r.Driver {
		r = LLMConfig{Driver: own.Driver, Timeout: r.Timeout}
	}
	if own.Model != "" {
		r.Model = own.Model
	}
	if own.URL != "" {
		r.URL = own.URL
	}
	if own.Timeout != 0 {
		r.Timeout = own.Timeout
	}
	return r
}

// TuningOf reads what a face received (the web page, the MCP tools); a
// duration that cannot be read is ErrBadSetting.
func TuningOf(in planact.TuningInput) (Tuning, error) {
	out := Tuning{PlannerModel: in.PlannerModel, ExecutorModel: in.ExecutorModel, Temperature: in.Temperature,
		MaxTokens: in.MaxTokens, ThinkingBudget: in.ThinkingBudget, MaxToolCalls: in.MaxToolCalls}
	if in.MaxDuration != "" {
		d, err := time.ParseDuration(in.MaxDuration)
		if err != nil || d <= 0 {
			return out, fmt.Errorf("maxDuration %q: give a duration such as 10m: %w", in.MaxDuration, ErrBadSetting)
		}
		out.MaxDuration = d
	}
	return out, nil
}

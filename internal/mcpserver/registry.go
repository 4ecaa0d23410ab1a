package mcpserver

import (
	"github.com/sagasu-dev/sagasu/internal/runs"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// RegistryOptions are what the agents' operations run on; a nil one leaves
// its operations listed but not callable.
type RegistryOptions struct {
	// Cap is the most tokens a response may take (sagasu_get's maxTokens).
	Cap    int
	Ask    Asker
	Agents AgentRuns
	Runs   *runs.Ops
}

// Registry is every operation sagasu offers: the toolset's (t nil: listed,
// not callable) and the agents' (sagasu_ask, sagasu_agent_*, sagasu_runs_*),
// in the order faces list them.
func Registry(t *tools.Toolset, opt RegistryOptions) tools.Registry {
	r := t.Registry(tools.DefOptions{Cap: opt.Cap})
	var agents tools.Registry
	agents = append(agents, askOp(opt.Ask))
	agents = append(agents, agentOps(opt.Agents)...)
	agents = append(agents, runOps(opt.Runs)...)
	for i := range agents {
		// A program acts on these answers (a run's ID and status, the
		// runs listed or exported): their schemas pay for themselves.
		// sagasu_ask's answer is read.
		agents[i].Typed = agents[i].Name != ToolAsk
	}
	return append(r, agents...)
}

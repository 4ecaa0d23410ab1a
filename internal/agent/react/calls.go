package react

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// called is what one tool call gave the run.
type called struct {
	Observation string
	Hits        []doc.Hit // the passages it returned, now numbered in ps
	OK          bool
	Err         error // the operation's failure, when not OK
}

// toolCall runs one tool call through the toolset's functions and records
// it in the run: the action, then the observation, whose passages are
// numbered in ps (found are the run's passages so far, for an evaluation).
// A bad call (an unknown tool, arguments that do not fit) is an
// observation too, so that a model can correct itself, and counts as a
// parse failure; a failed operation is an observation that says why. Only
// a stop from the runner is an error.
func (a *Agent) toolCall(ctx context.Context, rc *graph.RunContext, ps *Passages, call llm.ToolCall) (called, error) {
	args := call.Arguments
	if !json.Valid(args) {
		args, _ = json.Marshal(string(call.Arguments))
	}
	if err := rc.Action(call.Name, args); err != nil {
		return called{}, err
	}
	start := time.Now()
	out, err := a.fns.Call(ctx, call, ps.All())
	if err != nil {
		var stop *graph.StopError
		if errors.As(err, &stop) {
			return called{}, err
		}
		obs := "ERROR: " + err.Error()
		if errors.Is(err, tools.ErrBadCall) {
			if perr := rc.ParseFailure(obs); perr != nil {
				return called{}, perr
			}
		}
		return called{Observation: obs, Err: err}, rc.Observation(call.Name, obs, false, time.Since(start))
	}
	ns := ps.Add(out.Hits...)
	obs := tools.Observation(out, ns)
	return called{Observation: obs, Hits: out.Hits, OK: true}, rc.Observation(call.Name, obs, true, time.Since(start))
}

// searchCall is the call of sagasu_query for query with the agent's k and
// retrieval mode.
func (a *Agent) searchCall(id, query string, k int) llm.ToolCall {
	args := map[string]any{"query": query, "k": k}
	mode := a.opt.Mode
	if mode == "" && a.fns != nil {
		mode = a.fns.DefaultMode() // the trace says how it searched
	}
	if mode != "" {
		args["mode"] = string(mode)
	}
	raw, _ := json.Marshal(args)
	return llm.ToolCall{ID: id, Name: ToolSearch, Arguments: raw}
}

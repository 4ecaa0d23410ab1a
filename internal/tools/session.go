package tools

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/sagasu-dev/sagasu/internal/agentcache"
)

// A loop an agent drives itself — sagasu_search, sagasu_evaluate,
// sagasu_refine_query calls toward one goal — is recorded as a session in
// the agent cache, like the loop sagasu_loop runs: one record per session
// ID, updated after every step. The agent names the session (sessionId);
// the MCP server derives one per MCP session and goal when it does not,
// so a client that never heard of sessions still leaves one per goal.

// maxSessionSteps bounds a session's record: beyond it the oldest steps
// are dropped (and counted), so a client looping forever keeps a record of
// bounded size.
const maxSessionSteps = 200

// SessionStep is one call of a session an agent drives.
type SessionStep struct {
	Tool           string    `json:"tool"`
	At             time.Time `json:"at"`
	Query          string    `json:"query,omitempty"`
	Iteration      int       `json:"iteration,omitempty"`
	Results        int       `json:"results,omitempty"`
	Confidence     *float64  `json:"confidence,omitempty"`
	FoundAspects   []string  `json:"foundAspects,omitempty"`
	MissingAspects []string  `json:"missingAspects,omitempty"`
	Action         string    `json:"action,omitempty" jsonschema:"what the step recommended next"`
	RefinedQuery   string    `json:"refinedQuery,omitempty"`
	Strategy       string    `json:"strategy,omitempty"`
}

// recordStep appends step to the session's record, keeping what else the
// record holds (the iterations of a sagasu_loop run in the same session).
// A session that cannot be written costs a warning, not the call.
func (t *Toolset) recordStep(session, goal string, step SessionStep) {
	c := t.opt.Cache
	if c == nil || session == "" {
		return
	}
	step.At = time.Now().UTC()
	_, err := c.Upsert(agentcache.Sessions, session, func(old agentcache.Record, found bool) (agentcache.Record, error) {
		data := map[string]json.RawMessage{}
		var steps []SessionStep
		dropped := 0
		if found {
			if err := json.Unmarshal(old.Data, &data); err != nil {
				return agentcache.Record{}, fmt.Errorf("session %q: record %s: %w", session, old.ID, err)
			}
			if raw, ok := data["steps"]; ok {
				if err := json.Unmarshal(raw, &steps); err != nil {
					return agentcache.Record{}, fmt.Errorf("session %q: record %s: steps: %w", session, old.ID, err)
				}
			}
			if raw, ok := data["droppedSteps"]; ok {
				_ = json.Unmarshal(raw, &dropped)
			}
		}
		steps = append(steps, step)
		if over := len(steps) - maxSessionSteps; over > 0 {
			steps, dropped = steps[over:], dropped+over
		}
		set := func(k string, v any) {
			raw, _ := json.Marshal(v) // plain data: never fails
			data[k] = raw
		}
		set("sessionId", session)
		set("goal", goal)
		set("steps", steps)
		if dropped > 0 {
			set("droppedSteps", dropped)
		}
		raw, err := json.Marshal(data)
		if err != nil {
			return agentcache.Record{}, err
		}
		rec := agentcache.Record{Goal: goal, Query: step.Query, Score: step.Confidence, Data: raw,
			Summary: fmt.Sprintf("session %s: %d steps; last %s", session, len(steps)+dropped, step.Tool)}
		if step.Action != "" {
			rec.Summary += " → " + step.Action
		}
		if found && rec.Score == nil {
			rec.Score = old.Score
		}
		return rec, nil
	})
	if err != nil {
		t.log.Warn("agent cache: session step not saved", "session", session, "err", err)
	}
}

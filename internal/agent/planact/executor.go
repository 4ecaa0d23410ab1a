package planact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sagasu-dev/sagasu/internal/cite"
	"github.com/sagasu-dev/sagasu/internal/clip"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// keepExchanges is how many recent messages (tool calls and their results)
// the executor sees again: enough for the page it is on.
const keepExchanges = 6

// maxHistoryObservation bounds an observation kept in the history (the
// whole text is in the log's Once record).
const maxHistoryObservation = 4000

// functions lists the tools the executor may call, one list whatever
// serves them: the MCP servers' tools with their schemas as the servers
// declared them, then sagasu's functions with the schemas of its toolset.
// Servers that fail are reported in the trace (when rc is given); their
// tools are missing.
func (a *Agent) functions(ctx context.Context, rc *graph.RunContext) ([]llm.Function, error) {
	var out []llm.Function
	if a.opt.MCP != nil {
		fns, err := a.opt.MCP.Functions(ctx)
		if err != nil && rc != nil {
			if terr := rc.Trace(graph.TypeError, "MCP servers: "+err.Error()); terr != nil {
				return nil, terr
			}
		}
		out = append(out, fns...)
	}
	if a.opt.Functions != nil {
		out = append(out, a.opt.Functions.List()...)
	}
	return out, nil
}

// toolset lists the declarations of the executor's tools (functions).
func (a *Agent) toolset(ctx context.Context, rc *graph.RunContext) ([]llm.Tool, error) {
	fns, err := a.functions(ctx, rc)
	return llm.Tools(fns), err
}

// dispatch turns the current step into one tool call (or a text reply).
func (a *Agent) dispatch(ctx context.Context, rc *graph.RunContext, s State) (State, error) {
	step := s.current()
	if step == nil {
		return s, fmt.Errorf("no step to run: step %d of a %d-step plan", s.StepIdx+1, len(s.Plan))
	}
	step.Status = StatusRunning
	step.Tries++
	s.Attempt++
	s.Pending, s.Text = nil, ""
	if s.Research {
		args, _ := json.Marshal(map[string]any{"k": searchK, "query": step.Query})
		step.Tried = append(step.Tried, step.Query)
		s.Pending = &Call{ID: fmt.Sprintf("call-%d-%d", s.StepIdx+1, s.Attempt), Tool: ToolSearch, Args: args}
		return s, nil
	}
	tools, err := a.toolset(ctx, rc)
	if err != nil {
		return s, err
	}
	msgs := append([]llm.Message{{Role: llm.RoleUser, Content: a.executorContext(s, tools)}}, s.Exchanges...)
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: fmt.Sprintf(
		"Current step %d: %s\nCall one tool to do it. If what is shown above already answers the step, reply in text with what you read instead.",
		s.StepIdx+1, step.Text)})
	resp, err := a.chat(ctx, rc, &s, a.opt.Executor, llm.Request{System: systemExecutor, Messages: msgs, Tools: tools, ToolChoice: llm.ToolChoiceAuto})
	if err != nil {
		return s, err
	}
	msg := resp.Message
	if m, ok := llm.CallsInText(msg, tools); ok {
		// A small model writes its call as JSON in the text.
		msg = m
		if err := rc.Trace(graph.TypeThought, fmt.Sprintf("The model wrote its call to %s as text; it is run as a call.", m.ToolCalls[0].Name)); err != nil {
			return s, err
		}
	}
	text := strings.TrimSpace(msg.Content)
	if len(msg.ToolCalls) == 0 {
		if text == "" {
			text = "ERROR: the executor replied with neither a tool call nor text"
		}
		s.Text = text
		return s, rc.Trace(graph.TypeThought, "Step answered in text: "+clip.Runes(text, 300))
	}
	if text != "" {
		if err := rc.Trace(graph.TypeThought, text); err != nil {
			return s, err
		}
	}
	call := msg.ToolCalls[0]
	if len(msg.ToolCalls) > 1 {
		if err := rc.Trace(graph.TypeThought, fmt.Sprintf("The model asked for %d tool calls; one step runs one, the first (%s).", len(msg.ToolCalls), call.Name)); err != nil {
			return s, err
		}
	}
	args := call.Arguments
	if len(strings.TrimSpace(string(args))) == 0 {
		args = json.RawMessage("{}")
	}
	if !json.Valid(args) {
		// Keep the state encodable: invalid arguments travel as a string.
		args, _ = json.Marshal(string(call.Arguments))
	}
	c := &Call{ID: call.ID, Tool: call.Name, Args: args}
	if c.ID == "" {
		c.ID = fmt.Sprintf("call-%d-%d-%d", s.Replans, s.StepIdx+1, s.Attempt)
	}
	if _, err := llm.CheckToolCall(tools, call); err != nil {
		c.Invalid = strings.TrimPrefix(err.Error(), "error: ")
	}
	s.Pending = c
	return s, nil
}

// executorContext is the first message the executor reads: the goal, the
// plan and what happened so far.
func (a *Agent) executorContext(s State, tools []llm.Tool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Goal: %s\n\nPlan:\n%s", s.Goal, planText(s))
	if len(s.History) > 0 {
		b.WriteString("\nDone so far:\n")
		b.WriteString(historyText(s.History, 6, 200))
	}
	if len(tools) == 0 {
		b.WriteString("\nNo tools are available: answer in text.\n")
	}
	return b.String()
}

// onceRecord is a tool call's outcome as the log's Once record keeps it:
// its passages by chunk ID (the index holds their text; a resumed run
// reads them back), the rest as the tool returned it.
type onceRecord struct {
	Text      string        `json:"text"`
	Full      string        `json:"full,omitempty"`
	IsError   bool          `json:"isError,omitempty"`
	Restarted bool          `json:"restarted,omitempty"`
	Hits      cite.Passages `json:"hits,omitzero"`
	Next      string        `json:"next,omitempty"`
}

// onceKey names a tool call for rc.Once: a resumed run never repeats a
// call that completed.
func onceKey(run string, s State) string {
	return fmt.Sprintf("%s/replan-%d/step-%d/attempt-%d", run, s.Replans, s.StepIdx+1, s.Attempt)
}

// run makes the dispatched call, once.
func (a *Agent) run(ctx context.Context, rc *graph.RunContext, s State) (State, error) {
	c := s.Pending
	if c == nil {
		return s, errors.New("no call was dispatched")
	}
	if err := rc.Action(c.Tool, c.Args); err != nil {
		return s, err
	}
	start := time.Now()
	var out llm.Outcome
	if c.Invalid != "" {
		out = llm.Outcome{Tool: c.Tool, Text: "ERROR: " + c.Invalid, IsError: true}
	} else {
		live := false
		raw, err := rc.Once(onceKey(rc.Run(), s), func() (json.RawMessage, error) {
			out, live = a.callTool(ctx, c, s.pool()), true
			return json.Marshal(onceRecord{Text: out.Text, Full: out.Full, IsError: out.IsError, Restarted: out.Restarted, Hits: *cite.NewPassages(out.Hits...), Next: out.NextCursor})
		})
		if err != nil {
			return s, err
		}
		if !live { // a resumed run: the call was made before
			if out, err = a.replayed(ctx, c.Tool, raw); err != nil {
				return s, err
			}
		}
	}
	if !out.IsError {
		s.LastHits = s.addPassages(out.Hits)
		ns := make([]int, len(s.LastHits))
		for i, p := range s.LastHits {
			ns[i] = p + 1
		}
		out.Text = tools.Observation(out, ns)
	}
	s.Observation, s.ObsOK, s.Restarted = out.Text, !out.IsError, out.Restarted
	return s, rc.Observation(c.Tool, out.Text, !out.IsError, time.Since(start))
}

// replayed reads a call's outcome back from its Once record, with its
// passages' text from the index.
func (a *Agent) replayed(ctx context.Context, tool string, raw json.RawMessage) (llm.Outcome, error) {
	var rec onceRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		return llm.Outcome{}, fmt.Errorf("read the logged result of %s: %w", tool, err)
	}
	if err := rec.Hits.Restore(ctx, a.loader()); err != nil {
		return llm.Outcome{}, fmt.Errorf("the logged result of %s: %w", tool, err)
	}
	return llm.Outcome{Tool: tool, Text: rec.Text, Full: rec.Full, IsError: rec.IsError, Restarted: rec.Restarted, Hits: rec.Hits.All(), NextCursor: rec.Next}, nil
}

// loader reads passages back from the index (nil without functions).
func (a *Agent) loader() cite.Loader {
	if a.opt.Functions == nil {
		return nil
	}
	return a.opt.Functions.Passages
}

// function finds the tool named name: sagasu's own first, so that calling
// one asks no MCP server for its list.
func (a *Agent) function(ctx context.Context, name string) (llm.Function, bool) {
	if a.opt.Functions != nil {
		if fn, ok := llm.Find(a.opt.Functions.List(), name); ok {
			return fn, true
		}
	}
	if a.opt.MCP == nil {
		return nil, false
	}
	fns, _ := a.opt.MCP.Functions(ctx) // the servers that failed were reported at dispatch
	return llm.Find(fns, name)
}

// callTool calls the function the call names, whoever serves it. Every
// failure is an outcome with IsError, so that it becomes an observation
// the planner can react to, never a hang or a crash of the run.
func (a *Agent) callTool(ctx context.Context, c *Call, found []doc.Hit) llm.Outcome {
	ctx, cancel := context.WithTimeout(ctx, a.opt.CallTimeout)
	defer cancel()
	fn, ok := a.function(ctx, c.Tool)
	if !ok {
		return llm.Outcome{Tool: c.Tool, Text: fmt.Sprintf("ERROR: no tool named %q is offered (an MCP server that failed to start, or a name the model made up)", c.Tool), IsError: true}
	}
	out, err := fn.Call(ctx, c.Args, found)
	if err != nil {
		return llm.Outcome{Tool: c.Tool, Text: "ERROR: " + err.Error(), IsError: true}
	}
	out.Tool = c.Tool
	return out
}

// processResult formats the observation and decides whether it calls for
// a new plan (should_replan): a tool error, an "ERROR:" text, or an
// unexpected observation (nothing at all, or a restarted server whose
// page is gone).
func (a *Agent) processResult(_ context.Context, rc *graph.RunContext, s State) (State, error) {
	if s.Pending == nil {
		s.Observation, s.ObsOK, s.Restarted = s.Text, !strings.Contains(s.Text, "ERROR:"), false
		ok := s.ObsOK
		if err := rc.Emit(graph.Event{Type: graph.TypeObservation, Text: "text reply", Observation: s.Text, OK: &ok}); err != nil {
			return s, err
		}
	}
	var why string
	switch {
	case !s.ObsOK:
		why = "the tool call failed"
	case strings.Contains(s.Observation, "ERROR:"):
		why = "the observation reports an error"
	case s.Restarted:
		why = "the MCP server had died and was restarted: the page it had open is gone"
	case strings.TrimSpace(s.Observation) == "":
		why = "the observation is empty"
	}
	s.NeedsReplan = why != ""
	s.Why = ""
	if s.NeedsReplan {
		s.Why = fmt.Sprintf("step %d (%s): %s: %s", s.StepIdx+1, s.Plan[s.StepIdx].Text, why, clip.Runes(s.Observation, 300))
		return s, rc.Trace(graph.TypeThought, "Should replan: "+s.Why)
	}
	return s, nil
}

// memoryUpdate records the step in the history and the executor's
// exchanges, and reports progress when the observation is new.
func (a *Agent) memoryUpdate(_ context.Context, rc *graph.RunContext, s State) (State, error) {
	step := s.Plan[s.StepIdx]
	rec := Record{Step: step.Text, Observation: clip.Runes(s.Observation, maxHistoryObservation), OK: s.ObsOK && !s.NeedsReplan}
	if c := s.Pending; c != nil {
		rec.Tool, rec.Arguments = c.Tool, c.Args
	}
	seen := false
	for _, h := range s.History {
		if h.Observation == rec.Observation {
			seen = true
			break
		}
	}
	s.History = append(s.History, rec)
	if !s.Research {
		if c := s.Pending; c != nil {
			s.Exchanges = append(s.Exchanges,
				llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: c.ID, Name: c.Tool, Arguments: c.Args}}},
				llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Name: c.Tool, Content: s.Observation})
		} else {
			s.Exchanges = append(s.Exchanges, llm.Message{Role: llm.RoleAssistant, Content: s.Text})
		}
		for len(s.Exchanges) > keepExchanges || len(s.Exchanges) > 0 && s.Exchanges[0].Role == llm.RoleTool {
			s.Exchanges = s.Exchanges[1:]
		}
	}
	s.Pending, s.Text = nil, ""
	if rec.OK && !seen {
		return s, rc.Progress(fmt.Sprintf("step %d observed something new", s.StepIdx+1))
	}
	return s, nil
}

// planText lists the plan with each step's status.
func planText(s State) string {
	var b strings.Builder
	for i, st := range s.Plan {
		mark := ""
		if i == s.StepIdx && !s.Finished {
			mark = "  <- current"
		}
		fmt.Fprintf(&b, "%d. [%s] %s", i+1, st.Status, st.Text)
		if st.Result != "" {
			fmt.Fprintf(&b, " — %s", clip.Runes(st.Result, 200))
		}
		b.WriteString(mark + "\n")
	}
	return b.String()
}

// historyText lists the last n records, observations cut to clip runes.
func historyText(h []Record, n, maxObs int) string {
	var b strings.Builder
	for _, r := range h[max(0, len(h)-n):] {
		status := "ok"
		if !r.OK {
			status = "failed"
		}
		tool := "text reply"
		if r.Tool != "" {
			tool = r.Tool + " " + string(r.Arguments)
		}
		fmt.Fprintf(&b, "- %s: %s (%s) → %s\n", r.Step, tool, status, strings.ReplaceAll(clip.Runes(r.Observation, maxObs), "\n", " "))
	}
	return b.String()
}

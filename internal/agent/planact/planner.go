package planact

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/cite"
	"github.com/sagasu-dev/sagasu/internal/clip"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/llm"
)

// System prompts of the model's four roles.
const (
	systemPlanner = "You are the planner of a Plan-and-Act agent. Write a short plan of concrete steps that reaches the user's goal with the tools listed. " +
		"Each step is one action the executor can do with one tool call (open a URL, click an element, type text, search the knowledge base), " +
		"or reading a fact from what the previous step showed. Write each step as a task in words, such as \"Search the knowledge base for how to upload a file\", never as a list of tool names. " +
		"Learn from the past runs shown, if any: avoid what failed. " +
		`Reply with JSON only: {"plan": ["step 1", "step 2", ...]}. If the tools cannot reach the goal, reply {"fail": "why"}.`
	systemExecutor = "You are the executor of a Plan-and-Act agent. Carry out the current step of the plan with exactly one tool call, " +
		"with arguments that fit the tool's schema; use element references from the latest page snapshot. " +
		"If the step only needs reading something already shown (a fact on the page), reply in plain text with what you read, without a tool call."
	systemEvaluator = "You are the planner of a Plan-and-Act agent, judging the step the executor just ran. " +
		`Reply with JSON only: {"decision": "next|continue|replan|done|fail", "result": "what the step achieved", "answer": "the final answer, when done", "reason": "why"}. ` +
		"next: the step is done, go on to the next one. continue: the step needs another tool call. " +
		"replan: the step failed or showed something unexpected, so the plan must change. " +
		"done: the goal is reached; give the answer, with the facts found. fail: the goal cannot be reached; give the reason."
	systemReplanner = "You are the planner of a Plan-and-Act agent. A step failed or showed something unexpected. " +
		"Rewrite the rest of the plan from what the history shows, reaching the goal another way; do not repeat what failed. " +
		"Write each step as a task in words, never as a list of tool names. " +
		`Reply with JSON only: {"plan": ["next step", ...]}. If the goal cannot be reached, reply {"fail": "why"}.`
)

// maxPlanSteps caps a plan: the schema asks for at most this many steps,
// and a longer plan from a model that ignored it is cut with a note. A
// small model left free wrote plans that repeated tool names until its
// token cap.
const maxPlanSteps = 12

// Reply schemas of the planner's structured answers. A server that can
// hold the model to a schema (llama-server's grammar, OpenAI's and
// Gemini's response formats) then cannot produce prose, a repetition past
// the bounds, or a decision that is not one of the five.
var (
	planSchema = &llm.Schema{Name: "plan", Schema: json.RawMessage(fmt.Sprintf(`{"anyOf":[
		{"type":"object","properties":{"plan":{"type":"array","items":{"type":"string","minLength":1,"maxLength":300},"minItems":1,"maxItems":%d}},"required":["plan"],"additionalProperties":false},
		{"type":"object","properties":{"fail":{"type":"string","minLength":1,"maxLength":400}},"required":["fail"],"additionalProperties":false}]}`, maxPlanSteps))}
	decisionSchema = &llm.Schema{Name: "decision", Schema: json.RawMessage(`{"type":"object","properties":{
		"decision":{"type":"string","enum":["next","continue","replan","done","fail"]},
		"result":{"type":"string","maxLength":600},
		"answer":{"type":"string","maxLength":4000},
		"reason":{"type":"string","maxLength":400}},
		"required":["decision"],"additionalProperties":false}`)}
)

// maxAttempts bounds the executor calls of one step before the planner
// must replan.
const maxAttempts = 4

// chat calls the role's model and records its tokens, in the run log and
// in s.
func (a *Agent) chat(ctx context.Context, rc *graph.RunContext, s *State, role Role, req llm.Request) (*llm.Response, error) {
	req.Temperature, req.MaxTokens, req.ThinkingBudget = role.Temperature, role.MaxTokens, role.ThinkingBudget
	resp, err := role.Model.Chat(ctx, req)
	if err != nil {
		var stop *graph.StopError
		if errors.As(err, &stop) {
			return nil, err
		}
		_ = rc.Emit(graph.Event{Type: graph.TypeError, Text: "model: " + err.Error()})
		return nil, fmt.Errorf("ask the model (%s): %w", role.Model.Info().Model, err)
	}
	s.Usage.In += int64(resp.Usage.InputTokens)
	s.Usage.Out += int64(resp.Usage.OutputTokens)
	if err := rc.Usage(int64(resp.Usage.InputTokens), int64(resp.Usage.OutputTokens)); err != nil {
		return nil, err
	}
	return resp, nil
}

// plannerInit writes the first plan from the goal, the recollections of
// similar runs and the tools.
func (a *Agent) plannerInit(ctx context.Context, rc *graph.RunContext, s State) (State, error) {
	if a.opt.Memory != nil && s.Memory == nil {
		recs, err := a.opt.Memory.Recall(ctx, s.Goal, recallN)
		if err != nil {
			if terr := rc.Trace(graph.TypeError, "recall past runs: "+err.Error()); terr != nil {
				return s, terr
			}
		}
		s.Memory = append([]Recollection{}, recs...)
		if len(recs) > 0 {
			if err := rc.Trace(graph.TypeThought, fmt.Sprintf("Recalled %d similar past runs: %s", len(recs), recollectionsText(recs))); err != nil {
				return s, err
			}
		}
	}
	if s.Research {
		return a.researchPlan(ctx, rc, s)
	}
	tools, err := a.toolset(ctx, rc)
	if err != nil {
		return s, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Goal: %s\n\nTools:\n", s.Goal)
	for _, t := range tools {
		fmt.Fprintf(&b, "- %s: %s\n", t.Name, firstLine(t.Description))
	}
	if len(tools) == 0 {
		b.WriteString("(none: the plan can only reason over what is known)\n")
	}
	if len(s.Memory) > 0 {
		b.WriteString("\nPast runs with similar goals:\n" + recollectionsText(s.Memory))
	}
	resp, err := a.chat(ctx, rc, &s, a.opt.Planner, llm.Request{System: systemPlanner, Messages: []llm.Message{{Role: llm.RoleUser, Content: b.String()}}, Reply: planSchema})
	if err != nil {
		return s, err
	}
	steps, fail, err := parsePlan(resp.Message.Content)
	if err != nil {
		return s, rc.ParseFailure("plan: " + err.Error())
	}
	if fail != "" {
		s.Outcome, s.Reason = OutcomeFailure, "the planner says the goal cannot be reached: "+fail
		return s, rc.Trace(graph.TypeThought, s.Reason)
	}
	steps, cut := capPlan(steps)
	for _, t := range steps {
		s.Plan = append(s.Plan, Step{Text: t, Status: StatusPending})
	}
	s.StepIdx = 0
	return s, rc.Trace(graph.TypePlan, planText(s)+cut)
}

// plannerEvaluate judges the step after every execution, as the
// Plan-and-Act paper's planner does.
func (a *Agent) plannerEvaluate(ctx context.Context, rc *graph.RunContext, s State) (State, error) {
	s.Decision = ""
	if s.Research {
		return a.researchEvaluate(ctx, rc, s)
	}
	step := s.current()
	var b strings.Builder
	fmt.Fprintf(&b, "Goal: %s\n\nPlan:\n%s\nHistory:\n%s\n", s.Goal, planText(s), historyText(s.History, 8, 300))
	var last Record // none when a routing table skips the executor
	if len(s.History) > 0 {
		last = s.History[len(s.History)-1]
	}
	status := "ok"
	if !last.OK {
		status = "failed"
	}
	if step == nil {
		return s, fmt.Errorf("no step to judge: step %d of a %d-step plan", s.StepIdx+1, len(s.Plan))
	}
	fmt.Fprintf(&b, "Step just run: %d. %s\nAction: ", s.StepIdx+1, step.Text)
	if last.Tool != "" {
		fmt.Fprintf(&b, "%s %s\n", last.Tool, last.Arguments)
	} else {
		b.WriteString("text reply\n")
	}
	fmt.Fprintf(&b, "Observation (%s):\n%s\n", status, clip.Runes(s.Observation, 6000))
	if s.NeedsReplan {
		fmt.Fprintf(&b, "\nShould replan: %s\n", s.Why)
	}
	resp, err := a.chat(ctx, rc, &s, a.opt.Planner, llm.Request{System: systemEvaluator, Messages: []llm.Message{{Role: llm.RoleUser, Content: b.String()}}, Reply: decisionSchema})
	if err != nil {
		return s, err
	}
	d, err := parseDecision(resp.Message.Content)
	if err != nil {
		return s, rc.ParseFailure("evaluate: " + err.Error())
	}
	if err := rc.Trace(graph.TypeThought, fmt.Sprintf("Decision after step %d: %s. %s", s.StepIdx+1, d.Decision, firstNonEmpty(d.Reason, d.Result))); err != nil {
		return s, err
	}
	a.apply(&s, d)
	return s, nil
}

// decision is the evaluator's reply.
type decision struct {
	Decision string `json:"decision"`
	Result   string `json:"result"`
	Answer   string `json:"answer"`
	Reason   string `json:"reason"`
}

// apply carries out a decision on the state.
func (a *Agent) apply(s *State, d decision) {
	step := s.current()
	switch d.Decision {
	case DecideContinue:
		if s.Attempt >= maxAttempts {
			d.Decision, d.Reason = DecideReplan, fmt.Sprintf("step %d took %d tool calls without finishing", s.StepIdx+1, s.Attempt)
			s.Why = d.Reason
			break
		}
		s.Decision = DecideContinue
		return
	case DecideNext:
		step.Status, step.Result = StatusDone, firstNonEmpty(d.Result, clip.Runes(s.Observation, 200))
		s.advance()
		if s.current() != nil {
			s.Decision = DecideNext
			return
		}
		if d.Answer == "" {
			d.Decision, d.Reason = DecideReplan, "every step is done but the goal is not reported reached"
			s.Why = d.Reason
			break
		}
		d.Decision = DecideDone
	case DecideDone:
		step.Status, step.Result = StatusDone, firstNonEmpty(d.Result, step.Result)
	case DecideFail, DecideReplan:
	}
	switch d.Decision {
	case DecideDone:
		for i := range s.Plan {
			if s.Plan[i].Status == StatusPending || s.Plan[i].Status == StatusRunning {
				s.Plan[i].Status = StatusSkipped
			}
		}
		s.Answer = firstNonEmpty(d.Answer, d.Result, s.Observation)
		s.Outcome, s.Reason, s.Decision = OutcomeSuccess, d.Reason, DecideDone
	case DecideFail:
		if step != nil && step.Status == StatusRunning {
			step.Status, step.Result = StatusFailed, firstNonEmpty(d.Reason, d.Result)
		}
		s.Outcome, s.Reason, s.Decision = OutcomeFailure, firstNonEmpty(d.Reason, "the planner gave up without a reason"), DecideFail
	case DecideReplan:
		if s.Why == "" {
			s.Why = firstNonEmpty(d.Reason, d.Result, "the planner asked for a new plan")
		} else if d.Reason != "" && !strings.Contains(s.Why, d.Reason) {
			s.Why += "; " + d.Reason
		}
		if s.Replans >= a.opt.MaxReplans {
			if step != nil && step.Status == StatusRunning {
				step.Status, step.Result = StatusFailed, s.Why
			}
			s.Outcome, s.Decision = OutcomeFailure, DecideFail
			s.Reason = fmt.Sprintf("gave up after %d replans; the last problem: %s", s.Replans, s.Why)
			return
		}
		s.Decision = DecideReplan
	}
}

// plannerReplan rewrites the rest of the plan from the goal, the history
// and what failed.
func (a *Agent) plannerReplan(ctx context.Context, rc *graph.RunContext, s State) (State, error) {
	if s.Research {
		return a.researchReplan(ctx, rc, s)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Goal: %s\n\nPlan so far:\n%s\nHistory:\n%s\nWhat went wrong: %s\n", s.Goal, planText(s), historyText(s.History, 8, 1500), s.Why)
	if len(s.Memory) > 0 {
		b.WriteString("\nPast runs with similar goals:\n" + recollectionsText(s.Memory))
	}
	resp, err := a.chat(ctx, rc, &s, a.opt.Planner, llm.Request{System: systemReplanner, Messages: []llm.Message{{Role: llm.RoleUser, Content: b.String()}}, Reply: planSchema})
	if err != nil {
		return s, err
	}
	steps, fail, err := parsePlan(resp.Message.Content)
	if err != nil {
		// The plan stays as it is and Decision stays "replan":
		// after_replan sends the run back here.
		return s, rc.ParseFailure("replan: " + err.Error())
	}
	if fail != "" {
		s.Outcome, s.Reason = OutcomeFailure, "the planner gave up: "+fail
		return s, rc.Trace(graph.TypeThought, s.Reason)
	}
	steps, cut := capPlan(steps)
	s.rewrite(steps)
	return s, rc.Trace(graph.TypeReplan, fmt.Sprintf("Replan %d (%s):\n%s%s", s.Replans, s.Why, planText(s), cut))
}

// capPlan keeps the first maxPlanSteps steps, dropping steps that repeat
// an earlier one word for word, and says what it cut ("" when nothing).
func capPlan(steps []string) ([]string, string) {
	seen := map[string]bool{}
	out := steps[:0:0]
	repeats := 0
	for _, t := range steps {
		k := strings.ToLower(strings.Join(strings.Fields(t), " "))
		if seen[k] {
			repeats++
			continue
		}
		seen[k] = true
		out = append(out, t)
	}
	var notes []string
	if repeats > 0 {
		notes = append(notes, fmt.Sprintf("%d repeated step(s) dropped", repeats))
	}
	if len(out) > maxPlanSteps {
		notes = append(notes, fmt.Sprintf("%d step(s) past the cap of %d dropped", len(out)-maxPlanSteps, maxPlanSteps))
		out = out[:maxPlanSteps]
	}
	if len(notes) == 0 {
		return out, ""
	}
	return out, "\n(" + strings.Join(notes, "; ") + ")"
}

// rewrite replaces the steps from the current one on: the current step is
// kept as failed (it is why the plan changes) and the new steps follow.
func (s *State) rewrite(steps []string) {
	keep := min(s.StepIdx, len(s.Plan))
	for keep < len(s.Plan) && s.Plan[keep].Status != StatusPending {
		if s.Plan[keep].Status == StatusRunning {
			s.Plan[keep].Status, s.Plan[keep].Result = StatusFailed, clip.Runes(s.Why, 300)
		}
		keep++
	}
	s.Plan = s.Plan[:keep]
	for _, t := range steps {
		s.Plan = append(s.Plan, Step{Text: t, Status: StatusPending})
	}
	s.StepIdx = keep
	s.Replans++
	s.NeedsReplan, s.Attempt, s.Decision = false, 0, ""
}

// finish closes the run: the outcome, the answer's citations, the answer event.
func (a *Agent) finish(_ context.Context, rc *graph.RunContext, s State) (State, error) {
	s.Finished = true
	if s.Outcome == "" {
		s.Outcome, s.Reason = OutcomeFailure, "the run ended without an answer"
	}
	if !s.Research && s.Passages.Len() > 0 {
		// The grammar both agents share: [1], [1, 2], [1][3]; not arr[1] in code.
		for _, n := range cite.Numbers(s.Answer) {
			s.cite(n - 1)
		}
	}
	text := s.Answer
	if s.Outcome != OutcomeSuccess {
		text = s.Outcome + ": " + s.Reason
	}
	ok := s.Outcome == OutcomeSuccess
	return s, rc.Emit(graph.Event{Type: graph.TypeAnswer, Text: text, OK: &ok})
}

func recollectionsText(rs []Recollection) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "- goal %q ended in %s", r.Goal, r.Outcome)
		if r.Reason != "" {
			fmt.Fprintf(&b, " (%s)", clip.Runes(r.Reason, 200))
		}
		if len(r.Plan) > 0 {
			fmt.Fprintf(&b, "; plan: %s", strings.Join(r.Plan, " / "))
		}
		if len(r.Failed) > 0 {
			fmt.Fprintf(&b, "; failed: %s", strings.Join(r.Failed, " / "))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return clip.Runes(s, 200)
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if t := strings.TrimSpace(s); t != "" {
			return t
		}
	}
	return ""
}

// decodeObject finds the first JSON object in a model's reply (bare, in a
// code fence, or after some words) and decodes it into v.
func decodeObject(text string, v any) error {
	t := strings.TrimSpace(text)
	if t == "" {
		return errors.New("the reply is empty")
	}
	for i := 0; i < len(t); i++ {
		if t[i] != '{' {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(t[i:]))
		var raw json.RawMessage
		if dec.Decode(&raw) == nil && json.Unmarshal(raw, v) == nil {
			return nil
		}
	}
	return fmt.Errorf("no JSON object in the reply: %q", clip.Runes(t, 200))
}

// listItemRE matches a numbered or bulleted line of a plan written as text.
var listItemRE = regexp.MustCompile(`^\s*(?:\d+[.)]|[-*•])\s+(.+)$`)

// parsePlan reads a plan reply: {"plan": [...]} (steps as strings or as
// objects with a text, step or description), {"steps": [...]}, or
// {"fail": "..."}; failing JSON, a numbered or bulleted list.
func parsePlan(text string) (steps []string, fail string, err error) {
	var reply struct {
		Plan   []json.RawMessage `json:"plan"`
		Steps  []json.RawMessage `json:"steps"`
		Fail   string            `json:"fail"`
		Reason string            `json:"reason"`
	}
	if jerr := decodeObject(text, &reply); jerr == nil {
		if f := strings.TrimSpace(reply.Fail); f != "" {
			return nil, f, nil
		}
		for _, raw := range append(reply.Plan, reply.Steps...) {
			if s := stepText(raw); s != "" {
				steps = append(steps, s)
			}
		}
		if len(steps) > 0 {
			return steps, "", nil
		}
		return nil, "", fmt.Errorf("the reply has no steps: %q", clip.Runes(text, 200))
	}
	for _, line := range strings.Split(text, "\n") {
		if m := listItemRE.FindStringSubmatch(line); m != nil {
			steps = append(steps, strings.TrimSpace(m[1]))
		}
	}
	if len(steps) > 0 {
		return steps, "", nil
	}
	return nil, "", fmt.Errorf("expected {\"plan\": [steps]}, got %q", clip.Runes(text, 200))
}

func stepText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	var o struct {
		Text, Step, Description, Action string
	}
	if json.Unmarshal(raw, &o) == nil {
		return firstNonEmpty(o.Text, o.Step, o.Description, o.Action)
	}
	return ""
}

// decisionWords maps what models write to decisions.
var decisionWords = map[string]string{
	"next": DecideNext, "next_step": DecideNext, "proceed": DecideNext, "step_done": DecideNext,
	"continue": DecideContinue, "retry": DecideContinue, "again": DecideContinue,
	"replan": DecideReplan, "re-plan": DecideReplan, "revise": DecideReplan,
	"done": DecideDone, "complete": DecideDone, "completed": DecideDone, "finish": DecideDone, "finished": DecideDone, "success": DecideDone,
	"fail": DecideFail, "failed": DecideFail, "failure": DecideFail, "give_up": DecideFail, "impossible": DecideFail,
}

// parseDecision reads the evaluator's reply.
func parseDecision(text string) (decision, error) {
	var d decision
	if err := decodeObject(text, &d); err != nil {
		return d, err
	}
	key := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(d.Decision)), " ", "_")
	got, ok := decisionWords[key]
	if !ok {
		return d, fmt.Errorf("decision %q is none of next, continue, replan, done, fail", d.Decision)
	}
	d.Decision = got
	return d, nil
}

package planact

import (
	"encoding/json"
	"slices"

	"github.com/sagasu-dev/sagasu/internal/cite"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/llm"
)

// Step statuses.
const (
	StatusPending = "pending"
	StatusRunning = "running"
	StatusDone    = "done"
	StatusFailed  = "failed"
	StatusSkipped = "skipped"
)

// Outcomes of a run.
const (
	OutcomeSuccess = "success"
	OutcomeFailure = "failure"
	OutcomeStopped = "stopped"
)

// Planner decisions after a step (State.Decision), which are also the
// route keys of the after_evaluate branch.
const (
	DecideContinue = "continue" // run the same step again (another tool call)
	DecideNext     = "next"     // the step is done: go on to the next one
	DecideReplan   = "replan"   // rewrite the remaining plan
	DecideDone     = "done"     // the goal is reached; Answer holds the answer
	DecideFail     = "fail"     // the goal cannot be reached; Reason says why
	DecideRetry    = "retry"    // the planner's reply could not be read: ask again
)

// Step is one step of the plan.
type Step struct {
	Text   string `json:"text"`
	Status string `json:"status"`
	// Result is what the step found or why it failed.
	Result string `json:"result,omitempty"`
	// Aspect and Query are the research brain's: the aspect of the goal the
	// step looks for and the query it searches with.
	Aspect string `json:"aspect,omitempty"`
	Query  string `json:"query,omitempty"`
	// Tries counts the step's executions (research: searches) and Tried
	// holds the research brain's queries so far.
	Tries int      `json:"tries,omitempty"`
	Tried []string `json:"tried,omitempty"`
}

// Record is one executed step in the history: the tool call the executor
// made for it (none when the model answered the step in text) and what it
// observed.
type Record struct {
	Step        string          `json:"step"`
	Tool        string          `json:"tool,omitempty"`
	Arguments   json.RawMessage `json:"arguments,omitempty"`
	Observation string          `json:"observation"`
	OK          bool            `json:"ok"`
}

// Cited is a chunk of the knowledge base a result rests on.
type Cited struct {
	ChunkID int64     `json:"chunkId"`
	Source  SourceRef `json:"source"`
	Heading string    `json:"heading,omitempty"`
}

// SourceRef names a cited source.
type SourceRef struct {
	URI string `json:"uri"`
}

// Call is the tool call executor_dispatch chose for executor_run.
type Call struct {
	ID   string          `json:"id,omitempty"`
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args,omitempty"`
	// Invalid, when set, says why the call cannot be made (an unknown tool,
	// arguments that do not fit the schema); it becomes the observation.
	Invalid string `json:"invalid,omitempty"`
}

// State is the Plan-and-Act run's state: the seed's fields (goal, plan,
// step_idx, observation, history, needs_replan, finished) and what the
// result needs. It is checkpointed as JSON after every node.
type State struct {
	Goal        string   `json:"goal"`
	Plan        []Step   `json:"plan"`
	StepIdx     int      `json:"step_idx"`
	Observation string   `json:"observation"`
	History     []Record `json:"history"`
	NeedsReplan bool     `json:"needs_replan"`
	Finished    bool     `json:"finished"`

	Outcome string       `json:"outcome,omitempty"`
	Reason  string       `json:"reason,omitempty"`
	Answer  string       `json:"answer,omitempty"`
	Replans int          `json:"replans"`
	Usage   graph.Tokens `json:"usage"`
	// Memory holds recollections of similar past runs, for the planner.
	Memory []Recollection `json:"memory,omitempty"`
	// Results are the chunks the answer rests on.
	Results []Cited `json:"results,omitempty"`

	// Research is set when the run has no language model: the
	// deterministic research brain plans and executes.
	Research bool `json:"research,omitempty"`
	// Pending is the call dispatched for the current step.
	Pending *Call `json:"pending,omitempty"`
	// ObsOK is false when the last call failed; Restarted is set when its
	// MCP server had to be started again (a browser's page is gone).
	ObsOK     bool `json:"obs_ok"`
	Restarted bool `json:"restarted,omitempty"`
	// Why says why the plan must change (for planner_replan).
	Why string `json:"why,omitempty"`
	// Text is the executor's text reply for the current step (no tool call).
	Text string `json:"text,omitempty"`
	// Attempt numbers the executor calls of the current step, for Once keys.
	Attempt int `json:"attempt"`
	// Decision is the planner's last decision (a route key).
	Decision string `json:"decision,omitempty"`
	// Exchanges are the executor's recent tool calls and results, which
	// the model sees again at the next dispatch (a page's snapshot).
	Exchanges []llm.Message `json:"exchanges,omitempty"`
	// Passages are the knowledge-base chunks retrieved, in first-seen order;
	// LastHits are the positions (0-based) of the last search's hits.
	// A checkpoint holds the passages' chunk IDs (the graph's restore reads
	// their text back when a run resumes).
	Passages cite.Passages `json:"passages,omitzero"`
	LastHits []int         `json:"last_hits,omitempty"`
	// Failures counts planner replies that could not be parsed in a row.
	Failures int `json:"failures,omitempty"`
}

// current returns the step being worked on, or nil past the plan's end.
func (s *State) current() *Step {
	if s.StepIdx < 0 || s.StepIdx >= len(s.Plan) {
		return nil
	}
	return &s.Plan[s.StepIdx]
}

// Clone copies the state deeply (graph.Cloner): each node gets its own
// copy and may change steps, lists and the pending call in place, while the
// state from before the node, which the runner keeps when a node fails,
// stays as it was.
func (s State) Clone() State {
	s.Plan = slices.Clone(s.Plan)
	for i := range s.Plan {
		s.Plan[i].Tried = slices.Clone(s.Plan[i].Tried)
	}
	s.History = slices.Clone(s.History)
	s.Memory = slices.Clone(s.Memory)
	s.Results = slices.Clone(s.Results)
	s.Exchanges = slices.Clone(s.Exchanges)
	s.Passages = s.Passages.Clone()
	s.LastHits = slices.Clone(s.LastHits)
	if s.Pending != nil {
		p := *s.Pending
		s.Pending = &p
	}
	return s
}

// advance moves to the next pending step.
func (s *State) advance() {
	s.StepIdx++
	for s.StepIdx < len(s.Plan) && s.Plan[s.StepIdx].Status != StatusPending {
		s.StepIdx++
	}
	s.Attempt = 0
}

// addPassages numbers the passages not seen before and returns the
// positions (0-based) of all of them.
func (s *State) addPassages(hits []doc.Hit) []int {
	ns := s.Passages.Add(hits...)
	for i := range ns {
		ns[i]--
	}
	return ns
}

// cite adds passage i (0-based) to the results once.
func (s *State) cite(i int) {
	h, ok := s.Passages.Get(i + 1)
	if !ok {
		return
	}
	for _, c := range s.Results {
		if c.ChunkID == h.Chunk.ID {
			return
		}
	}
	s.Results = append(s.Results, Cited{ChunkID: h.Chunk.ID, Source: SourceRef{URI: h.Source.URI}, Heading: h.Chunk.HeadingPath()})
}

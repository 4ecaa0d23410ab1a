package planact

import (
	"time"

	"github.com/sagasu-dev/sagasu/internal/graph"
)

// RunSettings are what a run runs with. The faces record them with the
// run in the log when it starts, never with a secret (addresses pass
// through store.Redact), and restore them when it is resumed: the MCP
// servers by name, through the configuration as it is then; the models
// through the same key rule as any model, so an address from the record
// gets no API key unless the configuration names it.
type RunSettings struct {
	MCP      []string       `json:"mcp,omitempty"`
	Offline  bool           `json:"offline,omitempty"`
	Routing  string         `json:"routing,omitempty"`
	Planner  *ModelSettings `json:"planner,omitempty"`
	Executor *ModelSettings `json:"executor,omitempty"`
	Limits   LimitSettings  `json:"limits"`
}

// ModelSettings are one role's model and how it is called.
type ModelSettings struct {
	Driver string `json:"driver"`
	Model  string `json:"model"`
	URL    string `json:"url,omitempty"`
	Generation
}

// Generation is how one role's model calls are made.
type Generation struct {
	Temperature    float64 `json:"temperature"`
	MaxTokens      int     `json:"maxTokens"`
	ThinkingBudget *int    `json:"thinkingBudget,omitempty"`
}

// LimitSettings bound a run (each start or resume).
type LimitSettings struct {
	MaxToolCalls int    `json:"maxToolCalls"`
	MaxDuration  string `json:"maxDuration"`
	MaxSteps     int    `json:"maxSteps"`
	MaxTokens    int64  `json:"maxTokens"`
}

// Graph returns the limits as the graph takes them.
func (l LimitSettings) Graph() graph.Limits {
	d, _ := time.ParseDuration(l.MaxDuration)
	return graph.Limits{MaxToolCalls: l.MaxToolCalls, MaxDuration: d, MaxSteps: l.MaxSteps, MaxTokens: l.MaxTokens}
}

// TuningInput is what a face (the web page, the MCP tools) may set of one
// run over the configured settings, as it receives it in JSON: the roles'
// model names (on their configured drivers and addresses), the
// temperature, the reply cap, the thinking budget and the limits, the
// duration written as text (10m).
type TuningInput struct {
	PlannerModel   string   `json:"plannerModel,omitempty" jsonschema:"the planner's model name, on its configured driver and address"`
	ExecutorModel  string   `json:"executorModel,omitempty" jsonschema:"the executor's model name, on its configured driver and address"`
	Temperature    *float64 `json:"temperature,omitempty" jsonschema:"temperature of every model call, 0 to 2"`
	MaxTokens      int      `json:"maxTokens,omitempty" jsonschema:"most tokens of one model reply, 1 to 65536"`
	ThinkingBudget *int     `json:"thinkingBudget,omitempty" jsonschema:"tokens a thinking model (Gemini 2.5) may think before a reply; 0 turns thinking off"`
	MaxToolCalls   int      `json:"maxToolCalls,omitempty" jsonschema:"most tool calls per start or resume"`
	MaxDuration    string   `json:"maxDuration,omitempty" jsonschema:"longest a start or resume may run, such as 10m"`
}

// Report is what a face shows of a run without its timeline: its header,
// the settings it recorded, its latest plan and answer (folded from its
// checkpoints), its outcome once it logged one, and why it failed when it
// failed before it could log one.
type Report struct {
	ID      string    `json:"id"`
	Goal    string    `json:"goal"`
	Status  string    `json:"status"`
	Running bool      `json:"running"`
	Created time.Time `json:"created,omitzero"`
	Updated time.Time `json:"updated,omitzero"`
	// Settings are the run's recorded settings (nil for a run logged
	// before runs recorded them).
	Settings *RunSettings   `json:"settings,omitempty"`
	Plan     []Step         `json:"plan,omitempty"`
	Answer   string         `json:"answer,omitempty"`
	Replans  int            `json:"replans"`
	Results  []Cited        `json:"results,omitempty"`
	Outcome  *graph.Outcome `json:"outcome,omitempty"`
	Error    string         `json:"error,omitempty"`
	Events   int            `json:"events"`
}

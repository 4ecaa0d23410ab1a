package llm

import (
	"context"
	"encoding/json"

	"github.com/sagasu-dev/sagasu/internal/doc"
)

// Function is one tool an agent both offers its model and runs when the
// model calls it. The knowledge base's operations (tools.Functions) and
// the tools of MCP servers (mcpclient.Manager.Functions) are Functions
// alike, so an agent keeps one list of them and calls each the same way.
type Function interface {
	// Tool is the declaration the model is offered.
	Tool() Tool
	// Call runs the tool with the model's arguments. found are the
	// passages the run holds so far: a knowledge-base judge reads them,
	// other tools ignore them. A failure the model should read and react
	// to is an Outcome with IsError or an error; both become observations.
	Call(ctx context.Context, args json.RawMessage, found []doc.Hit) (Outcome, error)
}

// Outcome is what one Function call returned.
type Outcome struct {
	// Tool is the function's name.
	Tool string `json:"tool"`
	// Hits are knowledge-base passages, for the agent to number and cite.
	Hits []doc.Hit `json:"hits,omitempty"`
	// Text is what else the model reads: an evaluation, where passages
	// come from, a browser's snapshot (cut to the tool's budget).
	Text string `json:"text,omitempty"`
	// Full is all of Text when Text was cut, for the run log.
	Full string `json:"full,omitempty"`
	// NextCursor continues a ranking or a document's passages.
	NextCursor string `json:"nextCursor,omitempty"`
	// IsError is set when the tool reported a failure, told in Text.
	IsError bool `json:"isError,omitempty"`
	// Restarted is set when the tool's server had died and was started
	// again for this call: whatever state it held (a browser's page) is
	// gone.
	Restarted bool `json:"restarted,omitempty"`
}

// Find returns the function named name.
func Find(fns []Function, name string) (Function, bool) {
	for _, f := range fns {
		if f.Tool().Name == name {
			return f, true
		}
	}
	return nil, false
}

// Tools returns the declarations of fns, in order.
func Tools(fns []Function) []Tool {
	out := make([]Tool, len(fns))
	for i, f := range fns {
		out[i] = f.Tool()
	}
	return out
}

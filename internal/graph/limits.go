package graph

import (
	"errors"
	"fmt"
	"time"
)

// Limits bound one run. A zero field takes its default; a negative one
// turns that limit off.
type Limits struct {
	MaxSteps     int           // node executions per run; default 50
	MaxDuration  time.Duration // wall-clock time per Invoke or Resume call; default 15 minutes
	MaxToolCalls int           // rc.Action calls per run; default 100
	MaxTokens    int64         // model tokens (in + out) per run; default 1,000,000
}

// Guards stop runs that are going round in circles. They are on by
// default; a zero field takes its default, a negative one turns it off.
type Guards struct {
	// RepeatMax identical actions (same tool, same arguments) among the
	// last RepeatWindow actions stop the run. Defaults 5 and 20.
	RepeatMax    int
	RepeatWindow int
	// NoProgressSteps consecutive steps without progress stop the run. A
	// step makes progress when its node calls rc.Progress or the state's
	// fingerprint (Graph.SetFingerprint; by default a hash of the state's
	// JSON) is one the run has not had before. Default 10.
	NoProgressSteps int
	// MaxParseFailures rc.ParseFailure reports in a row stop the run; a
	// step that completes without one resets the count. Default 3.
	MaxParseFailures int
}

// DefaultLimits returns the limits a zero Limits stands for.
func DefaultLimits() Limits {
	return Limits{MaxSteps: 50, MaxDuration: 15 * time.Minute, MaxToolCalls: 100, MaxTokens: 1_000_000}
}

// DefaultGuards returns the guards a zero Guards stands for.
func DefaultGuards() Guards {
	return Guards{RepeatMax: 5, RepeatWindow: 20, NoProgressSteps: 10, MaxParseFailures: 3}
}

func pick[T int | int64 | time.Duration](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0 // off
	}
	return v
}

func (l Limits) resolved() Limits {
	d := DefaultLimits()
	return Limits{
		MaxSteps:     pick(l.MaxSteps, d.MaxSteps),
		MaxDuration:  pick(l.MaxDuration, d.MaxDuration),
		MaxToolCalls: pick(l.MaxToolCalls, d.MaxToolCalls),
		MaxTokens:    pick(l.MaxTokens, d.MaxTokens),
	}
}

func (g Guards) resolved() Guards {
	d := DefaultGuards()
	return Guards{
		RepeatMax:        pick(g.RepeatMax, d.RepeatMax),
		RepeatWindow:     pick(g.RepeatWindow, d.RepeatWindow),
		NoProgressSteps:  pick(g.NoProgressSteps, d.NoProgressSteps),
		MaxParseFailures: pick(g.MaxParseFailures, d.MaxParseFailures),
	}
}

// Names of the limits and guards, as they appear in Outcome.Guard.
const (
	GuardMaxSteps      = "max_steps"
	GuardMaxDuration   = "max_duration"
	GuardMaxToolCalls  = "max_tool_calls"
	GuardMaxTokens     = "max_tokens"
	GuardRepeatAction  = "repeat_action"
	GuardNoProgress    = "no_progress"
	GuardParseFailures = "parse_failures"
)

// Status is how a run ended.
type Status string

// Statuses of an Outcome.
const (
	Success Status = "success" // the graph reached END
	Failure Status = "failure" // a node failed or panicked, a branch had no route, the log failed
	Stopped Status = "stopped" // a limit or guard tripped, or the context was cancelled
)

// Outcome says how an Invoke or Resume call ended. The runner never
// panics and never returns without one.
type Outcome struct {
	Status    Status `json:"status"`
	Reason    string `json:"reason,omitempty"`
	Guard     string `json:"guard,omitempty"` // the limit or guard that tripped (Stopped)
	Node      string `json:"node,omitempty"`  // the node that failed or was running
	Next      string `json:"next,omitempty"`  // where Resume would continue
	Steps     int    `json:"steps"`
	ToolCalls int    `json:"tool_calls"`
	Tokens    Tokens `json:"tokens"`
	// Err is the cause of a failure or stop, for errors.Is and errors.As.
	Err error `json:"-"`
}

// ErrStopped is wrapped by every StopError.
var ErrStopped = errors.New("run stopped")

// StopError reports the limit or guard that stopped a run. RunContext
// methods return it once a guard has tripped; a node should return it.
type StopError struct {
	Guard  string
	Reason string
}

func (e *StopError) Error() string { return fmt.Sprintf("stopped by %s: %s", e.Guard, e.Reason) }

// Unwrap makes errors.Is(err, ErrStopped) true.
func (e *StopError) Unwrap() error { return ErrStopped }

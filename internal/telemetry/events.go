package telemetry

import (
	"context"
	"errors"
	"time"

	"github.com/sagasu-dev/sagasu/internal/graph"
)

// OnEvent returns an agent event handler that records each tool call the
// agent made (an observation event, with its latency) as an execute_tool
// span under ctx's span, then passes the event on to next (which may be
// nil). A nil Tracer returns next itself.
func (t *Tracer) OnEvent(ctx context.Context, next func(graph.Event)) func(graph.Event) {
	if t == nil {
		return next
	}
	return func(ev graph.Event) {
		if ev.Type == graph.TypeObservation && ev.Tool != "" {
			end := ev.Time
			if end.IsZero() {
				end = time.Now()
			}
			var failed error
			if ev.OK != nil && !*ev.OK {
				failed = errToolFailed
			}
			t.Tool(ctx, ev.Tool, "", end.Add(-time.Duration(ev.LatencyMs)*time.Millisecond), end, string(ev.Arguments), ev.Observation, failed)
		}
		if next != nil {
			next(ev)
		}
	}
}

var errToolFailed = errors.New("tool call failed")

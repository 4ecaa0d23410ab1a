package graph

import (
	"encoding/json"
	"fmt"
)

// Size is what a run's log takes as JSON lines, for the benchmarks that
// report it.
type Size struct {
	Log         int // every event, a line each
	Checkpoints int // the checkpoints as written
	// WholeCheckpoints is what the checkpoints would take with the whole
	// state in every one (the format before checkpoints stored what
	// changed).
	WholeCheckpoints int
}

// WholeLog is what the log would take with the whole state in every
// checkpoint.
func (s Size) WholeLog() int { return s.Log - s.Checkpoints + s.WholeCheckpoints }

// Plus is s and o added up.
func (s Size) Plus(o Size) Size {
	return Size{Log: s.Log + o.Log, Checkpoints: s.Checkpoints + o.Checkpoints, WholeCheckpoints: s.WholeCheckpoints + o.WholeCheckpoints}
}

// Measure returns the size of a run's events.
func Measure(evs []Event) (Size, error) {
	var rep Replayer
	var s Size
	for _, ev := range evs {
		raw, err := json.Marshal(ev)
		if err != nil {
			return s, fmt.Errorf("encode event %d: %w", ev.Seq, err)
		}
		s.Log += len(raw) + 1
		ok, err := rep.Add(ev)
		if err != nil {
			return s, err
		}
		if !ok {
			continue
		}
		s.Checkpoints += len(raw)
		full := ev
		full.State, full.Delta = rep.State(), nil
		if raw, err = json.Marshal(full); err != nil {
			return s, fmt.Errorf("encode checkpoint %d: %w", ev.Seq, err)
		}
		s.WholeCheckpoints += len(raw)
	}
	return s, nil
}

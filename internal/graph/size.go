package graph

import (
	"encoding/json"
	"fmt"
)

// CheckpointBytes measures a run's checkpoints as JSON: stored is what
// they take in the log as written, whole what they would take with the
// whole state in every one (the format before checkpoints stored what
// changed), for the benchmarks that report a run's log size.
func CheckpointBytes(evs []Event) (stored, whole int, err error) {
	var rep Replayer
	for _, ev := range evs {
		ok, err := rep.Add(ev)
		if err != nil {
			return 0, 0, err
		}
		if !ok {
			continue
		}
		raw, err := json.Marshal(ev)
		if err != nil {
			return 0, 0, fmt.Errorf("encode checkpoint %d: %w", ev.Seq, err)
		}
		stored += len(raw)
		full := ev
		full.State, full.Delta = rep.State(), nil
		if raw, err = json.Marshal(full); err != nil {
			return 0, 0, fmt.Errorf("encode checkpoint %d: %w", ev.Seq, err)
		}
		whole += len(raw)
	}
	return stored, whole, nil
}

package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sagasu-dev/sagasu/internal/agent/planact"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// ErrNoRun marks a run ID that names no agent run (errors.Is).
var ErrNoRun = errors.New("no such agent run")

// Report reads run id from the run log. A run that was started here but
// has logged nothing yet is reported running, with no plan.
func (b *BackgroundRuns) Report(ctx context.Context, id string) (planact.Report, error) {
	running := b.Running(id)
	rep, err := b.rt.RunReport(ctx, id)
	if errors.Is(err, ErrNoRun) && running {
		return planact.Report{ID: id, Status: "running", Running: true}, nil
	}
	if err != nil {
		return rep, err
	}
	rep.Running = running
	if running {
		// A run resumed here is running whatever its header still says,
		// and the outcome it logged before is not this attempt's.
		rep.Status, rep.Outcome = "running", nil
	}
	rep.Error = b.Failure(id)
	return rep, nil
}

// RunReport reads agent run id from the run log (see planact.Report; Running
// and Error are what a driver knows, left unset here).
func (r *Runtime) RunReport(ctx context.Context, id string) (planact.Report, error) {
	run, err := r.Store.Run(ctx, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && run.Kind != store.RunAgent {
		return planact.Report{}, fmt.Errorf("%w %q: `sagasu agent runs` lists them", ErrNoRun, id)
	}
	if err != nil {
		return planact.Report{}, err
	}
	rep := planact.Report{ID: run.ID, Goal: run.Title, Status: run.Status, Created: run.Created, Updated: run.Updated}
	if len(run.Meta) > 0 {
		var set RunSettings
		if json.Unmarshal(run.Meta, &set) == nil {
			rep.Settings = &set
		}
	}
	evs, err := r.Store.Events(ctx, id, 0)
	if err != nil {
		return rep, fmt.Errorf("read run %s: %w", id, err)
	}
	rep.Events = len(evs)
	var replay graph.Replayer
	for _, e := range evs {
		var ev graph.Event
		if json.Unmarshal(e.Data, &ev) != nil {
			continue
		}
		switch ev.Type {
		case graph.TypeCheckpoint:
			_, _ = replay.Add(ev)
		case graph.TypeOutcome:
			var o graph.Outcome
			if json.Unmarshal(ev.Result, &o) == nil {
				rep.Outcome = &o
			}
		}
	}
	if state := replay.State(); state != nil {
		var st planact.State
		if err := json.Unmarshal(state, &st); err == nil {
			rep.Plan, rep.Answer, rep.Replans, rep.Results = st.Plan, st.Answer, st.Replans, st.Results
		}
	}
	return rep, nil
}

package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// RunRunning is the status of a run that a driver may be advancing now.
const RunRunning = "running"

// ErrRunning refuses to delete a run whose status is RunRunning: a driver
// may be appending to it right now. Deleting it anyway takes force.
var ErrRunning = errors.New("the run is running")

// RunRemover deletes runs from the run log.
type RunRemover interface {
	// DeleteRun removes run id and all its events in one step: after an
	// error nothing of it is gone. An unknown ID is ErrNotFound; a run
	// whose status is RunRunning is ErrRunning unless force is set.
	DeleteRun(ctx context.Context, id string, force bool) error
}

// RunDropper is a driver's half of RunRemover.
type RunDropper interface {
	// DropRun removes run id (not empty) and its events atomically,
	// unless its status is RunRunning and force is false (ErrRunning).
	// ErrNotFound when there is no such run.
	DropRun(ctx context.Context, id string, force bool) error
}

// DeleteRun implements RunRemover.
func (c *contract) DeleteRun(ctx context.Context, id string, force bool) error {
	if id == "" {
		return fmt.Errorf("delete run: no run ID given")
	}
	return c.d.DropRun(ctx, id, force)
}

// RunningError is the error a driver returns for a running run it was not
// forced to delete.
func RunningError(id string) error {
	return fmt.Errorf("delete run %q: %w: stop it first, or force the delete if no process drives it any more", id, ErrRunning)
}

// Retention says which runs to keep; the rest are pruned. A zero field
// sets no limit, and the zero Retention keeps everything.
type Retention struct {
	// OlderThan prunes runs last updated longer ago than this.
	OlderThan time.Duration
	// Keep prunes runs beyond the newest Keep of their kind (by Updated).
	Keep int
}

// IsZero reports a Retention that keeps every run.
func (r Retention) IsZero() bool { return r.OlderThan <= 0 && r.Keep <= 0 }

// Select returns the runs of runs that r prunes at now, the oldest first.
// A running run is never selected, and it counts among the ones kept.
func (r Retention) Select(runs []Run, now time.Time) []Run {
	if r.IsZero() {
		return nil
	}
	sorted := append([]Run(nil), runs...)
	// Newest first per kind, as ListRuns orders them, to count the kept.
	sortNewestFirst(sorted)
	seen := map[string]int{}
	var out []Run
	for _, run := range sorted {
		seen[run.Kind]++
		if run.Status == RunRunning {
			continue
		}
		old := r.OlderThan > 0 && now.Sub(run.Updated) > r.OlderThan
		beyond := r.Keep > 0 && seen[run.Kind] > r.Keep
		if old || beyond {
			out = append(out, run)
		}
	}
	// The oldest first, so a prune that stops part way keeps the newest.
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// RunsToPrune lists the runs of kind ("" for every kind) that r prunes at
// now.
func RunsToPrune(ctx context.Context, runs Runs, kind string, r Retention, now time.Time) ([]Run, error) {
	all, err := runs.ListRuns(ctx, RunFilter{Kind: kind})
	if err != nil {
		return nil, err
	}
	return r.Select(all, now), nil
}

func sortNewestFirst(runs []Run) {
	slices.SortFunc(runs, func(a, b Run) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}

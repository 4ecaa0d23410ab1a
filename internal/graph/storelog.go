package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// StoreLog keeps run logs in the index's store (SQLite or PostgreSQL), so
// an agent run's trace and checkpoints live beside the documents it
// searched and survive the process. Each event is stored whole as the
// store event's data; the store's append is durable once it returns.
type StoreLog struct {
	runs  store.Runs
	kind  string
	title func(run string) string
}

// NewStoreLog returns a Log over runs; runs it creates get kind (such as
// store.RunAgent) and the title titleOf gives (nil: the run ID).
func NewStoreLog(runs store.Runs, kind string, titleOf func(run string) string) *StoreLog {
	return &StoreLog{runs: runs, kind: kind, title: titleOf}
}

// Append stores ev, creating its run on first use.
func (l *StoreLog) Append(ctx context.Context, ev Event) error {
	data, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	rec := []store.Event{{Type: ev.Type, Time: ev.Time, Data: data}}
	_, err = l.runs.AppendEvents(ctx, ev.Run, rec)
	if errors.Is(err, store.ErrNotFound) {
		title := ev.Run
		if l.title != nil {
			title = l.title(ev.Run)
		}
		cerr := l.runs.CreateRun(ctx, store.Run{ID: ev.Run, Kind: l.kind, Title: title, Status: "running"})
		if cerr != nil && !errors.Is(cerr, store.ErrExists) {
			return fmt.Errorf("create run %s: %w", ev.Run, cerr)
		}
		_, err = l.runs.AppendEvents(ctx, ev.Run, rec)
	}
	if err != nil {
		return fmt.Errorf("append to run %s: %w", ev.Run, err)
	}
	if ev.Type == TypeOutcome {
		var out Outcome
		if json.Unmarshal(ev.Result, &out) == nil && out.Status != "" {
			if err := l.runs.UpdateRun(ctx, ev.Run, store.RunUpdate{Status: string(out.Status)}); err != nil {
				return fmt.Errorf("record the outcome of run %s: %w", ev.Run, err)
			}
		}
	}
	return nil
}

// Events returns run's events, oldest first; an unknown run has none.
func (l *StoreLog) Events(ctx context.Context, run string) ([]Event, error) {
	recs, err := l.runs.Events(ctx, run, 0)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]Event, 0, len(recs))
	for _, r := range recs {
		var ev Event
		if err := json.Unmarshal(r.Data, &ev); err != nil {
			return nil, fmt.Errorf("run %s event %d: %w", run, r.Seq, err)
		}
		out = append(out, ev)
	}
	return out, nil
}

package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// StoreLog keeps run logs in the index's store (SQLite or PostgreSQL), so
// an agent run's trace and checkpoints live beside the documents it
// searched and survive the process. Each event is stored whole as the
// store event's data; the store's append is durable once it returns.
// It is a Leaser: the runs it drives are leased to it (see lease.go).
type StoreLog struct {
	runs  RunStore
	kind  string
	title func(run string) string
	ttl   time.Duration
	// now and ticker are the clock the leases follow (tests inject one).
	now    func() time.Time
	ticker func(time.Duration) (<-chan time.Time, func())

	mu    sync.Mutex
	owner store.Owner
	held  map[string]*held
}

// NewStoreLog returns a Log over runs; runs it creates get kind (such as
// store.RunAgent) and the title titleOf gives (nil: the run ID). It drives
// runs as an owner of no face until As names one.
func NewStoreLog(runs RunStore, kind string, titleOf func(run string) string) *StoreLog {
	return &StoreLog{runs: runs, kind: kind, title: titleOf, ttl: DefaultLeaseTTL, now: time.Now, ticker: realTicker,
		owner: store.ThisOwner(""), held: map[string]*held{}}
}

// create stores run, new, with its kind and title (a run another driver
// created meanwhile is fine).
func (l *StoreLog) create(ctx context.Context, run string) error {
	title := run
	if l.title != nil {
		title = l.title(run)
	}
	err := l.runs.CreateRun(ctx, store.Run{ID: run, Kind: l.kind, Title: title, Status: "running"})
	if err != nil && !errors.Is(err, store.ErrExists) {
		return fmt.Errorf("create run %s: %w", run, err)
	}
	return nil
}

// Append stores ev as the driver of its run: it claims the run (creating
// it) unless it holds it already, and fails with store.ErrLeaseLost when
// another driver took the run over.
func (l *StoreLog) Append(ctx context.Context, ev Event) error {
	data, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	rec := []store.Event{{Type: ev.Type, Time: ev.Time, Data: data}}
	token, ok := l.holds(ev.Run)
	if !ok {
		if err := l.Claim(ctx, ev.Run); err != nil {
			return err
		}
	}
	_, err = l.runs.AppendEventsAs(ctx, ev.Run, token, rec)
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

package graph

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// A run has one driver at a time. A Log that is also a Leaser leases each
// run to the call that drives it: Invoke and Resume claim the run before
// they read its log, so a second driver is refused before it runs a node
// (with a *StartError wrapping the store's *LeaseError), and release it
// when they return. A driver that lost its lease cannot append.

// Leaser is a Log that leases runs to one driver at a time.
type Leaser interface {
	// Claim takes run's lease for this log (again, when it holds it:
	// that renews it); it fails when another driver holds it.
	Claim(ctx context.Context, run string) error
	// Release gives the lease up.
	Release(ctx context.Context, run string)
}

// claim takes run's lease when the log leases runs.
func (c *Compiled[S]) claim(ctx context.Context, run string) error {
	if l, ok := c.log.(Leaser); ok {
		return l.Claim(ctx, run)
	}
	return nil
}

// release gives up run's lease when the log leases runs; it runs after
// the outcome is logged, even when ctx was cancelled.
func (c *Compiled[S]) release(ctx context.Context, run string) {
	if l, ok := c.log.(Leaser); ok {
		l.Release(context.WithoutCancel(ctx), run)
	}
}

// RunStore is the run log a StoreLog keeps: runs and their leases.
type RunStore interface {
	store.Runs
	store.Leases
}

// DefaultLeaseTTL is how long a StoreLog's lease holds without renewal; a
// StoreLog renews its leases every third of it while it holds them.
const DefaultLeaseTTL = 2 * time.Minute

// realTicker ticks every d until stopped.
func realTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// held is a lease a StoreLog holds, and how to stop its renewal.
type held struct {
	stop chan struct{}
	done chan struct{}
}

// As makes l drive runs as a driver of face (store.FaceCLI, FacePage,
// FaceMCP), with a new owner token. Each StoreLog is one driver: two
// drives of one run need two StoreLogs.
func (l *StoreLog) As(face string) *StoreLog {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.owner = store.ThisOwner(face)
	return l
}

// Owner is who l drives runs as.
func (l *StoreLog) Owner() store.Owner {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.owner
}

// Claim implements Leaser: it takes run's lease (creating the run when it
// is new) and renews it in the background until Release.
func (l *StoreLog) Claim(ctx context.Context, run string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.claimLocked(ctx, run); err != nil {
		return err
	}
	if _, ok := l.held[run]; !ok {
		h := &held{stop: make(chan struct{}), done: make(chan struct{})}
		l.held[run] = h
		go l.renew(run, h)
	}
	return nil
}

func (l *StoreLog) claimLocked(ctx context.Context, run string) error {
	c := store.Claim{Owner: l.owner, TTL: l.ttl, Now: l.now()}
	_, err := l.runs.ClaimRun(ctx, run, c)
	if errors.Is(err, store.ErrNotFound) {
		if err = l.create(ctx, run); err == nil {
			_, err = l.runs.ClaimRun(ctx, run, c)
		}
	}
	if err != nil && !errors.Is(err, store.ErrLeased) { // a refusal names the run
		return fmt.Errorf("claim run %s: %w", run, err)
	}
	return err
}

// renew claims run again every third of the lease's life until h stops.
// A renewal that fails is logged by the next append, which fails too
// when the lease was lost.
func (l *StoreLog) renew(run string, h *held) {
	defer close(h.done)
	ticks, stop := l.ticker(l.ttl / 3)
	defer stop()
	for {
		select {
		case <-h.stop:
			return
		case <-ticks:
			l.mu.Lock()
			_ = l.claimLocked(context.Background(), run)
			l.mu.Unlock()
		}
	}
}

// Release implements Leaser: it stops renewing run's lease and gives it
// up (a lease already lost is left to its holder).
func (l *StoreLog) Release(ctx context.Context, run string) {
	l.mu.Lock()
	h, ok := l.held[run]
	delete(l.held, run)
	token := l.owner.Token
	l.mu.Unlock()
	if !ok {
		return
	}
	close(h.stop)
	<-h.done
	_ = l.runs.ReleaseRun(ctx, run, token)
}

// holds reports whether l holds run's lease, and its token.
func (l *StoreLog) holds(run string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.held[run]
	return l.owner.Token, ok
}

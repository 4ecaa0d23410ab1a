package graph

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
)

// gated is a graph of three steps whose second waits for the test: the
// first driver is inside it while a second one tries the run.
type gated struct{ N int }

func gatedGraph(t *testing.T, entered chan<- struct{}, proceed <-chan struct{}, ran *int) *Graph[gated] {
	t.Helper()
	g := New[gated]()
	g.AddNode("step", func(_ context.Context, rc *RunContext, s gated) (gated, error) {
		*ran++
		if s.N == 1 && entered != nil {
			entered <- struct{}{}
			<-proceed
		}
		s.N++
		return s, rc.Progress("stepped")
	})
	g.RegisterBranch("more", func(s gated) string {
		if s.N < 3 {
			return "step"
		}
		return END
	})
	g.AddEdge(START, "step").AddConditionalEdges("step", "more", nil)
	return g
}

func openRuns(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "idx.db"), sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestSecondDriverRefused: while the page drives a run, a resume of it
// from the command line is refused before it runs a node, with a message
// that names the run and its driver; once the page's run ends the lease is
// released.
func TestSecondDriverRefused(t *testing.T) {
	ctx := context.Background()
	st := openRuns(t)
	entered, proceed := make(chan struct{}), make(chan struct{})
	var pageRan, cliRan int
	page, err := gatedGraph(t, entered, proceed, &pageRan).Compile(NewStoreLog(st, store.RunAgent, nil).As(store.FacePage))
	if err != nil {
		t.Fatal(err)
	}
	cliLog := NewStoreLog(st, store.RunAgent, nil).As(store.FaceCLI)
	cli, err := gatedGraph(t, nil, nil, &cliRan).Compile(cliLog)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan Outcome, 1)
	go func() { _, o := page.Invoke(ctx, "shared", gated{}); done <- o }()
	<-entered

	_, out := cli.Resume(ctx, "shared")
	var se *StartError
	var le *store.LeaseError
	if !errors.As(out.Err, &se) || !errors.As(out.Err, &le) {
		t.Fatalf("second driver's Resume = %+v, want a StartError over a LeaseError", out)
	}
	if cliRan != 0 {
		t.Errorf("the refused driver ran %d nodes", cliRan)
	}
	for _, want := range []string{`resume run "shared"`, "run shared is being driven from the web page", "pid"} {
		if !strings.Contains(out.Err.Error(), want) {
			t.Errorf("refusal %q does not say %q", out.Err, want)
		}
	}

	close(proceed)
	if o := <-done; o.Status != Success {
		t.Fatalf("the first driver's run = %+v", o)
	}
	evs, err := st.Events(ctx, "shared", 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d: the log has gaps or collisions", i, e.Seq)
		}
	}
	if l, err := st.RunLease(ctx, "shared"); err != nil || l.Held() {
		t.Errorf("after the run RunLease = %+v, %v; want it released", l, err)
	}
	// Released, the run can be driven by the other face (it has ended, so
	// Resume returns its final state without running anything).
	if _, out := cli.Resume(ctx, "shared"); out.Status != Success {
		t.Errorf("resume after the release = %+v", out)
	}
}

// TestLostLeaseCannotAppend: a driver whose lease was taken over (it
// expired: the other driver's clock is past it) fails at its next append
// instead of interleaving its events with the new holder's.
func TestLostLeaseCannotAppend(t *testing.T) {
	ctx := context.Background()
	st := openRuns(t)
	entered, proceed := make(chan struct{}), make(chan struct{})
	var ran int
	log := NewStoreLog(st, store.RunAgent, nil).As(store.FaceCLI)
	c, err := gatedGraph(t, entered, proceed, &ran).Compile(log)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan Outcome, 1)
	go func() { _, o := c.Invoke(ctx, "stale", gated{}); done <- o }()
	<-entered
	before, err := st.Events(ctx, "stale", 0)
	if err != nil {
		t.Fatal(err)
	}

	// Another host's driver, after the lease's life: it takes the run over.
	other := store.Owner{Token: "other", Host: "elsewhere.invalid", PID: 7, Face: store.FaceCLI}
	if _, err := st.ClaimRun(ctx, "stale", store.Claim{Owner: other, TTL: time.Hour, Now: time.Now().Add(2 * DefaultLeaseTTL)}); err != nil {
		t.Fatalf("take over an expired lease: %v", err)
	}
	close(proceed)
	o := <-done
	var le *LogError
	if o.Status == Success || !errors.As(o.Err, &le) || !errors.Is(o.Err, store.ErrLeaseLost) {
		t.Fatalf("outcome after losing the lease = %+v, want a failure with a LogError over ErrLeaseLost", o)
	}
	after, err := st.Events(ctx, "stale", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Errorf("the driver that lost its lease appended %d events", len(after)-len(before))
	}
	if l, err := st.RunLease(ctx, "stale"); err != nil || l.Owner.Token != "other" {
		t.Errorf("RunLease = %+v, %v; want the new holder's, not released by the old one", l, err)
	}
}

// TestLeaseRenewedWhileHeld: while a StoreLog holds a run, each tick of
// its clock renews the lease to the clock's time plus the lease's life;
// after Release the run has no owner and ticks renew nothing.
func TestLeaseRenewedWhileHeld(t *testing.T) {
	ctx := context.Background()
	st := openRuns(t)
	log := NewStoreLog(st, store.RunAgent, nil).As(store.FaceCLI)
	ticks := make(chan time.Time) // unbuffered: a send returns once the renewer takes it
	var interval time.Duration
	log.ticker = func(d time.Duration) (<-chan time.Time, func()) { interval = d; return ticks, func() {} }
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	log.now = func() time.Time { return now }

	if err := log.Claim(ctx, "long"); err != nil {
		t.Fatal(err)
	}
	l, err := st.RunLease(ctx, "long")
	if err != nil || !l.Until.Equal(now.Add(DefaultLeaseTTL)) {
		t.Fatalf("lease after the claim = %+v, %v", l, err)
	}
	now = now.Add(DefaultLeaseTTL / 3)
	ticks <- now
	ticks <- now // returns once the first renewal is done
	if interval != DefaultLeaseTTL/3 {
		t.Errorf("renewed every %s, want a third of the lease's life", interval)
	}
	if l, err := st.RunLease(ctx, "long"); err != nil || !l.Until.Equal(now.Add(DefaultLeaseTTL)) {
		t.Errorf("lease after a renewal = %+v, %v; want until %v", l, err, now.Add(DefaultLeaseTTL))
	}
	log.Release(ctx, "long")
	if l, err := st.RunLease(ctx, "long"); err != nil || l.Held() {
		t.Errorf("lease after Release = %+v, %v; want none", l, err)
	}
}

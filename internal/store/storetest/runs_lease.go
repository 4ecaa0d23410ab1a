package storetest

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// leaseTests are the conformance cases for run leases: one driver per run.
var leaseTests = []struct {
	name string
	fn   func(*testing.T, store.Store)
}{
	{"LeaseSecondDriverRefused", testLeaseRefused},
	{"LeaseExpiredTakenOver", testLeaseExpired},
	{"LeaseOfGoneProcessTakenOver", testLeaseGoneProcess},
	{"LeaseConcurrentClaims", testLeaseConcurrent},
	{"LeaseUnknownRun", testLeaseUnknown},
}

// t0 is the injected clock's start: claims pass their time.
var t0 = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// goneHost is a host that is not this one, so its processes cannot be
// checked from here.
const goneHost = "another-host.invalid"

func owner(token, host string, pid int, face string) store.Owner {
	return store.Owner{Token: token, Host: host, PID: pid, Face: face, Since: t0}
}

func thisHost(t *testing.T) string {
	t.Helper()
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func mustClaim(t *testing.T, s store.Store, id string, o store.Owner, at time.Time) store.Lease {
	t.Helper()
	l, err := s.ClaimRun(context.Background(), id, store.Claim{Owner: o, TTL: time.Minute, Now: at})
	if err != nil {
		t.Fatalf("ClaimRun(%s by %s): %v", id, o.Token, err)
	}
	if l.Owner.Token != o.Token || l.Run != id {
		t.Fatalf("ClaimRun(%s by %s) = %+v", id, o.Token, l)
	}
	return l
}

func testLeaseRefused(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreateRun(t, s, store.Run{ID: "driven", Kind: store.RunAgent, Status: "running"})
	page := owner("tok-page", thisHost(t), os.Getpid(), store.FacePage)
	l := mustClaim(t, s, "driven", page, t0)
	if want := t0.Add(time.Minute); !l.Until.Equal(want) {
		t.Errorf("lease until %v, want %v (the claim's time plus its TTL)", l.Until, want)
	}
	if _, err := s.AppendEventsAs(ctx, "driven", page.Token, []store.Event{{Type: "step"}}); err != nil {
		t.Fatalf("the holder's append: %v", err)
	}

	// A second driver of this host, whose holder is alive (this process).
	cli := owner("tok-cli", thisHost(t), os.Getpid(), store.FaceCLI)
	_, err := s.ClaimRun(ctx, "driven", store.Claim{Owner: cli, TTL: time.Minute, Now: t0.Add(time.Second)})
	var le *store.LeaseError
	if !errors.As(err, &le) || !errors.Is(err, store.ErrLeased) {
		t.Fatalf("second driver's claim = %v, want a *LeaseError", err)
	}
	if le.Held.Owner.Token != page.Token || le.Held.Run != "driven" {
		t.Errorf("the refusal names %+v, want the page's lease on run driven", le.Held)
	}
	msg := err.Error()
	for _, want := range []string{"driven", "web page", thisHost(t), "Stop button", "2026-06-01T12:00:00Z"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal %q does not say %q", msg, want)
		}
	}
	if _, err := s.AppendEventsAs(ctx, "driven", cli.Token, []store.Event{{Type: "step"}}); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("append by a driver without the lease = %v, want ErrLeaseLost", err)
	}
	if err := s.ReleaseRun(ctx, "driven", cli.Token); err != nil {
		t.Fatal(err)
	}

	// Header writes keep the lease; the holder renews it.
	if err := s.UpdateRun(ctx, "driven", store.RunUpdate{Status: "waiting", Meta: []byte(`{"k":1}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendEvents(ctx, "driven", []store.Event{{Type: "note"}}); err != nil {
		t.Fatal(err)
	}
	renewed := mustClaim(t, s, "driven", page, t0.Add(50*time.Second))
	if want := t0.Add(110 * time.Second); !renewed.Until.Equal(want) || !renewed.Owner.Since.Equal(t0) {
		t.Errorf("renewed lease = %+v, want until %v since %v", renewed, want, t0)
	}
	got, err := s.RunLease(ctx, "driven")
	if err != nil || got.Owner != renewed.Owner || !got.Until.Equal(renewed.Until) {
		t.Errorf("RunLease = %+v, %v; want %+v", got, err, renewed)
	}

	evs, err := s.Events(ctx, "driven", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].Type != "step" || evs[1].Type != "note" || evs[1].Seq != 2 {
		t.Errorf("events = %+v, want the holder's step then the note, nothing from the refused driver", evs)
	}

	// Released, the run is free for the next driver.
	if err := s.ReleaseRun(ctx, "driven", page.Token); err != nil {
		t.Fatal(err)
	}
	if got, err := s.RunLease(ctx, "driven"); err != nil || got.Held() {
		t.Errorf("after release RunLease = %+v, %v; want none", got, err)
	}
	mustClaim(t, s, "driven", cli, t0.Add(2*time.Second))
	if _, err := s.AppendEventsAs(ctx, "driven", page.Token, []store.Event{{Type: "late"}}); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("append by the former holder = %v, want ErrLeaseLost", err)
	}
	if _, err := s.ClaimRun(ctx, "driven", store.Claim{Owner: page}); err == nil {
		t.Error("a claim without a TTL was accepted")
	}
	if _, err := s.ClaimRun(ctx, "driven", store.Claim{Owner: store.Owner{Host: "h", PID: 1}, TTL: time.Minute}); err == nil {
		t.Error("a claim without a token was accepted")
	}
}

func testLeaseExpired(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreateRun(t, s, store.Run{ID: "far", Kind: store.RunAgent})
	remote := owner("tok-remote", goneHost, 4242, store.FaceCLI)
	mustClaim(t, s, "far", remote, t0)
	local := owner("tok-local", thisHost(t), os.Getpid(), store.FaceCLI)
	_, err := s.ClaimRun(ctx, "far", store.Claim{Owner: local, TTL: time.Minute, Now: t0.Add(59 * time.Second)})
	if !errors.Is(err, store.ErrLeased) {
		t.Fatalf("claim before another host's lease ends = %v, want ErrLeased", err)
	}
	if !strings.Contains(err.Error(), "kill 4242 on "+goneHost) {
		t.Errorf("the refusal %q does not say how to stop a command-line holder", err)
	}
	mustClaim(t, s, "far", local, t0.Add(time.Minute))
	if _, err := s.AppendEventsAs(ctx, "far", remote.Token, []store.Event{{Type: "late"}}); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("append by the expired holder = %v, want ErrLeaseLost", err)
	}
	_, err = s.ClaimRun(ctx, "far", store.Claim{Owner: remote, TTL: time.Minute, Now: t0.Add(61 * time.Second)})
	if !errors.Is(err, store.ErrLeased) {
		t.Errorf("the expired holder's renewal = %v, want ErrLeased", err)
	}
}

func testLeaseGoneProcess(t *testing.T, s store.Store) {
	testenv.Platform(t, runtime.GOOS != "windows", "whether a process exists is checked with signal 0 on unix only")
	ctx := context.Background()
	mustCreateRun(t, s, store.Run{ID: "killed", Kind: store.RunAgent, Status: "running"})
	// No process has this pid: it is above every unix system's pid limit.
	gone := owner("tok-gone", thisHost(t), 1<<30, store.FaceCLI)
	l, err := s.ClaimRun(ctx, "killed", store.Claim{Owner: gone, TTL: time.Hour, Now: t0})
	if err != nil || l.Owner.Token != gone.Token {
		t.Fatalf("first claim = %+v, %v", l, err)
	}
	next := owner("tok-next", thisHost(t), os.Getpid(), store.FaceCLI)
	mustClaim(t, s, "killed", next, t0.Add(time.Second)) // long before the hour is up
	if r, err := s.Run(ctx, "killed"); err != nil || r.Status != "running" {
		t.Errorf("a taken-over run = %+v, %v; want it still running", r, err)
	}
	// The same pid on another host cannot be checked: it waits for expiry.
	mustCreateRun(t, s, store.Run{ID: "remote", Kind: store.RunAgent})
	mustClaim(t, s, "remote", owner("tok-r", goneHost, 1<<30, store.FaceCLI), t0)
	if _, err := s.ClaimRun(ctx, "remote", store.Claim{Owner: next, TTL: time.Hour, Now: t0.Add(time.Second)}); !errors.Is(err, store.ErrLeased) {
		t.Errorf("claim of a live lease of another host = %v, want ErrLeased", err)
	}
}

func testLeaseConcurrent(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreateRun(t, s, store.Run{ID: "race", Kind: store.RunAgent})
	const n = 8
	var wg sync.WaitGroup
	wins := make(chan string, n)
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := owner("tok-"+string(rune('a'+i)), thisHost(t), os.Getpid(), store.FacePage)
			_, err := s.ClaimRun(ctx, "race", store.Claim{Owner: o, TTL: time.Minute, Now: t0})
			switch {
			case err == nil:
				wins <- o.Token
			case !errors.Is(err, store.ErrLeased):
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(wins)
	close(errs)
	for err := range errs {
		t.Errorf("claim: %v", err)
	}
	var won []string
	for w := range wins {
		won = append(won, w)
	}
	if len(won) != 1 {
		t.Fatalf("%d of %d concurrent claims won (%v), want exactly 1", len(won), n, won)
	}
	if l, err := s.RunLease(ctx, "race"); err != nil || l.Owner.Token != won[0] {
		t.Errorf("RunLease = %+v, %v; want the winner %s", l, err, won[0])
	}
}

func testLeaseUnknown(t *testing.T, s store.Store) {
	ctx := context.Background()
	o := owner("tok", thisHost(t), os.Getpid(), store.FaceCLI)
	if _, err := s.ClaimRun(ctx, "nope", store.Claim{Owner: o, TTL: time.Minute}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ClaimRun(unknown) = %v, want ErrNotFound", err)
	}
	if err := s.ReleaseRun(ctx, "nope", "tok"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ReleaseRun(unknown) = %v, want ErrNotFound", err)
	}
	if _, err := s.RunLease(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RunLease(unknown) = %v, want ErrNotFound", err)
	}
	if _, err := s.AppendEventsAs(ctx, "nope", "tok", []store.Event{{Type: "x"}}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("AppendEventsAs(unknown) = %v, want ErrNotFound", err)
	}
}

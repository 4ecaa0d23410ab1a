package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"
)

// A run has one driver at a time: the process that appends its events
// holds a lease on it in the store, taken by one conditional update of the
// run's owner. A second driver (the page and `agent resume` on the same
// run, two resumes) is refused with a *LeaseError that names the holder;
// an append from a driver that lost its lease fails with ErrLeaseLost
// instead of interleaving sequence numbers with the new holder's.

// Faces that drive runs, as an Owner names them.
const (
	FaceCLI  = "cli"  // sagasu agent run/resume
	FacePage = "page" // sagasu serve's web page
	FaceMCP  = "mcp"  // sagasu mcp's agent tools
)

// Owner identifies the driver of a run: which process on which host, a
// random token of this drive (two drives in one process differ), the face
// it runs in and since when.
type Owner struct {
	Token string    `json:"token"`
	Host  string    `json:"host"`
	PID   int       `json:"pid"`
	Face  string    `json:"face"`
	Since time.Time `json:"since"`
}

// Lease is who drives a run and until when the lease holds without being
// renewed. A run nobody drives has a zero Owner.
type Lease struct {
	Run   string
	Owner Owner
	Until time.Time
}

// Held reports whether the lease has an owner.
func (l Lease) Held() bool { return l.Owner.Token != "" }

// Live reports whether a driver holds the run at now: the lease has an
// owner, has not expired, and its owner is not a process of this host that
// is gone (a claim would take such a lease at once).
func (l Lease) Live(now time.Time) bool {
	if !l.Held() || !l.Until.After(now) {
		return false
	}
	host, _ := os.Hostname()
	return l.Owner.Host != host || processAlive(l.Owner.PID)
}

// Claim asks for a run's lease.
type Claim struct {
	// Owner is who asks; Token, Host and PID are required. Since defaults
	// to Now.
	Owner Owner
	// TTL is how long the lease holds unless renewed (claimed again with
	// the same token).
	TTL time.Duration
	// Now is the time of the claim (zero: the clock's now); tests pass an
	// injected clock's time.
	Now time.Time
}

// ErrLeaseLost is an append or a renewal by a driver whose lease another
// driver took over (errors.Is).
var ErrLeaseLost = errors.New("this process no longer holds the run's lease")

// ErrLeased marks a *LeaseError (errors.Is).
var ErrLeased = errors.New("the run is driven by another process")

// LeaseError refuses a claim: the run is held by another driver whose
// lease holds.
type LeaseError struct {
	Held Lease
}

func (e *LeaseError) Error() string {
	o := e.Held.Owner
	return fmt.Sprintf("run %s is being driven from the %s by pid %d on %s since %s (lease until %s): "+
		"wait for it to end, stop it there (%s), or resume it once that process has exited",
		e.Held.Run, faceName(o.Face), o.PID, o.Host, o.Since.Format(time.RFC3339), e.Held.Until.Format(time.RFC3339), stopHint(o))
}

// Is makes errors.Is(err, ErrLeased) hold.
func (e *LeaseError) Is(target error) bool { return target == ErrLeased }

func faceName(face string) string {
	switch face {
	case FaceCLI:
		return "command line"
	case FacePage:
		return "web page"
	case FaceMCP:
		return "MCP server"
	}
	return face
}

func stopHint(o Owner) string {
	switch o.Face {
	case FacePage:
		return "the run's Stop button on the page"
	case FaceMCP:
		return "the sagasu_agent_stop tool"
	}
	return fmt.Sprintf("Ctrl-C in its terminal, or kill %d on %s", o.PID, o.Host)
}

// Leases is the run log's ownership: one driver per run.
type Leases interface {
	// ClaimRun gives run id's lease to c.Owner until c.Now+c.TTL. It
	// succeeds when the run has no owner, c.Owner's token holds it (a
	// renewal), the holder's lease ended, or the holder is a process of
	// this host that no longer exists (a driver killed with kill -9 is
	// taken over at once). Else it fails with a *LeaseError naming the
	// holder. An unknown run is ErrNotFound.
	ClaimRun(ctx context.Context, id string, c Claim) (Lease, error)
	// ReleaseRun gives up the lease token holds on run id; it does
	// nothing when token does not hold it. An unknown run is ErrNotFound.
	ReleaseRun(ctx context.Context, id, token string) error
	// RunLease returns who drives run id (a zero Owner: nobody). An
	// unknown run is ErrNotFound.
	RunLease(ctx context.Context, id string) (Lease, error)
	// AppendEventsAs is AppendEvents by the driver whose lease token
	// holds: it fails with ErrLeaseLost, appending nothing, when token
	// does not hold the run's lease, whether or not the lease expired.
	AppendEventsAs(ctx context.Context, runID, token string, events []Event) ([]Event, error)
}

// LeaseLog is a driver's side of Leases: each method is one atomic step
// (SQL: one conditional UPDATE in a transaction).
type LeaseLog interface {
	// ClaimRun sets run id's owner to o until until, when the run has no
	// owner, o.Token holds it, its lease ended at or before now, or
	// takeFrom (when not empty) holds it. It returns the lease as it is
	// after: o's when it was given, the holder's when not. ErrNotFound when
	// there is no such run.
	ClaimRun(ctx context.Context, id string, o Owner, until, now time.Time, takeFrom string) (Lease, error)
	// ReleaseRun clears run id's owner when token holds it.
	ReleaseRun(ctx context.Context, id, token string) error
	// RunLease returns run id's lease.
	RunLease(ctx context.Context, id string) (Lease, error)
	// AppendEventsAs is AppendEvents when token holds the run's lease,
	// else ErrLeaseLost with nothing written.
	AppendEventsAs(ctx context.Context, runID, token string, events []Event, latest time.Time) (int64, error)
}

// ThisOwner is an owner for a drive by this process from face: this host
// and pid, a new random token, since now.
func ThisOwner(face string) Owner {
	host, _ := os.Hostname()
	return Owner{Token: randomToken(), Host: host, PID: os.Getpid(), Face: face, Since: storedTime(time.Time{})}
}

// ClaimRun implements Leases.
func (c *contract) ClaimRun(ctx context.Context, id string, cl Claim) (Lease, error) {
	o := cl.Owner
	if o.Token == "" || o.Host == "" || o.PID <= 0 {
		return Lease{}, fmt.Errorf("claim run %q: the owner needs a token, a host and a pid (got %+v)", id, o)
	}
	if cl.TTL <= 0 {
		return Lease{}, fmt.Errorf("claim run %q: the lease's time to live %s is not positive", id, cl.TTL)
	}
	now := storedTime(cl.Now)
	if o.Since.IsZero() {
		o.Since = now
	}
	o.Since = storedTime(o.Since)
	until := storedTime(now.Add(cl.TTL))
	l, err := c.d.ClaimRun(ctx, id, o, until, now, "")
	if err != nil {
		return Lease{}, err
	}
	if l.Owner.Token != o.Token && l.Owner.Host == o.Host && !processAlive(l.Owner.PID) {
		// The holder was a process of this host that is gone: take the
		// lease from that holder only, should another claim win first.
		if l, err = c.d.ClaimRun(ctx, id, o, until, now, l.Owner.Token); err != nil {
			return Lease{}, err
		}
	}
	l = storedLease(id, l)
	if l.Owner.Token != o.Token {
		return Lease{}, &LeaseError{Held: l}
	}
	return l, nil
}

// ReleaseRun implements Leases.
func (c *contract) ReleaseRun(ctx context.Context, id, token string) error {
	if token == "" {
		return fmt.Errorf("release run %q: no token", id)
	}
	return c.d.ReleaseRun(ctx, id, token)
}

// RunLease implements Leases.
func (c *contract) RunLease(ctx context.Context, id string) (Lease, error) {
	l, err := c.d.RunLease(ctx, id)
	return storedLease(id, l), err
}

// AppendEventsAs implements Leases.
func (c *contract) AppendEventsAs(ctx context.Context, runID, token string, events []Event) ([]Event, error) {
	if token == "" {
		return nil, fmt.Errorf("append to run %q: no lease token", runID)
	}
	return c.appendEvents(ctx, runID, events, func(out []Event, latest time.Time) (int64, error) {
		return c.d.AppendEventsAs(ctx, runID, token, out, latest)
	})
}

func randomToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func storedLease(id string, l Lease) Lease {
	l.Run = id
	if !l.Held() {
		return Lease{Run: id}
	}
	l.Until, l.Owner.Since = l.Until.UTC(), l.Owner.Since.UTC()
	return l
}

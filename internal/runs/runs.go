// Package runs gives agent runs and chat threads a lifecycle: list, delete,
// prune by a retention rule, and export as JSON or Markdown. It is one set
// of typed operations under every face: the CLI (sagasu agent/chat
// delete|prune|export), the MCP server (Defs) and the web page's API take
// the same input structs.
package runs

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sagasu-dev/sagasu/internal/agent/planact"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// Store is the part of an index's store the operations use.
type Store interface {
	store.Runs
	store.RunRemover
}

// leaseReader is a store that tells who drives a run (every store.Store).
type leaseReader interface {
	RunLease(ctx context.Context, id string) (store.Lease, error)
}

// Options configure Ops. Store is required.
type Options struct {
	Store Store
	// AgentReport folds an agent run's log into its plan, answer and
	// outcome for the Markdown export; nil exports an agent run's timeline
	// only.
	AgentReport func(ctx context.Context, id string) (planact.Report, error)
	// Busy reports a run this process drives right now: it is never
	// deleted, even when forced. Nil: none.
	Busy func(id string) bool
	// Retention is the configured rule (runs.keep_days, runs.keep) that
	// Prune applies when its input sets none.
	Retention store.Retention
	// Now is the clock retention is measured by (default time.Now).
	Now func() time.Time
}

// Ops runs the lifecycle operations over one run log.
type Ops struct{ opt Options }

// New returns the operations over opt.Store.
func New(opt Options) *Ops {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	return &Ops{opt: opt}
}

// Header is a run as lists show it.
type Header struct {
	ID      string    `json:"id"`
	Kind    string    `json:"kind" jsonschema:"agent (a Plan-and-Act run) or chat (a chat thread)"`
	Title   string    `json:"title" jsonschema:"an agent run's goal, a thread's first question"`
	Status  string    `json:"status"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
}

func headerOf(r store.Run) Header {
	return Header{ID: r.ID, Kind: r.Kind, Title: r.Title, Status: r.Status, Created: r.Created, Updated: r.Updated}
}

func headersOf(rs []store.Run) []Header {
	out := make([]Header, len(rs))
	for i, r := range rs {
		out[i] = headerOf(r)
	}
	return out
}

// checkKind refuses a kind other than agent, chat or "" (both).
func checkKind(kind string) error {
	switch kind {
	case "", store.RunAgent, store.RunChat:
		return nil
	}
	return fmt.Errorf("kind %q: want %q (agent runs) or %q (chat threads), or none for both", kind, store.RunAgent, store.RunChat)
}

// noun names a kind of run in messages.
func noun(kind string) string {
	switch kind {
	case store.RunAgent:
		return "agent run"
	case store.RunChat:
		return "chat thread"
	}
	return "run"
}

// ListInput selects runs to list.
type ListInput struct {
	Kind  string `json:"kind,omitempty" jsonschema:"agent or chat; none for both"`
	Limit int    `json:"limit,omitempty" jsonschema:"most runs to list (default 50)"`
}

// ListOutput lists runs, the most recently updated first.
type ListOutput struct {
	Runs []Header `json:"runs"`
}

// DefaultListLimit is how many runs List returns when not told.
const DefaultListLimit = 50

// List lists runs, the most recently updated first.
func (o *Ops) List(ctx context.Context, in ListInput) (ListOutput, error) {
	if err := checkKind(in.Kind); err != nil {
		return ListOutput{}, err
	}
	if in.Limit < 0 {
		return ListOutput{}, fmt.Errorf("limit %d: want a positive number of runs", in.Limit)
	}
	if in.Limit == 0 {
		in.Limit = DefaultListLimit
	}
	rs, err := o.opt.Store.ListRuns(ctx, store.RunFilter{Kind: in.Kind, Limit: in.Limit})
	if err != nil {
		return ListOutput{}, err
	}
	return ListOutput{Runs: headersOf(rs)}, nil
}

// DeleteInput names runs to delete.
type DeleteInput struct {
	IDs   []string `json:"ids" jsonschema:"the runs or threads to delete, by ID"`
	Kind  string   `json:"kind,omitempty" jsonschema:"agent or chat: refuse an ID of the other kind"`
	Force bool     `json:"force,omitempty" jsonschema:"also delete a run whose status is still running (one a stopped or killed process left); never one this server drives now"`
}

// DeleteOutput says what was deleted.
type DeleteOutput struct {
	Deleted []Header `json:"deleted"`
}

// get reads run id, refusing one of another kind than kind.
func (o *Ops) get(ctx context.Context, id, kind string) (store.Run, error) {
	r, err := o.opt.Store.Run(ctx, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && kind != "" && r.Kind != kind {
		return store.Run{}, fmt.Errorf("no %s %q: %w (list them to see their IDs)", noun(kind), id, store.ErrNotFound)
	}
	return r, err
}

// Delete deletes runs with their events. Every ID is checked before any
// is deleted: an unknown ID, one of the wrong kind, or a running run
// without Force deletes none.
func (o *Ops) Delete(ctx context.Context, in DeleteInput) (DeleteOutput, error) {
	if err := checkKind(in.Kind); err != nil {
		return DeleteOutput{}, err
	}
	if len(in.IDs) == 0 {
		return DeleteOutput{}, fmt.Errorf("no run to delete: name one or more by ID")
	}
	var todo []store.Run
	seen := map[string]bool{}
	for _, id := range in.IDs {
		if seen[id] {
			continue
		}
		seen[id] = true
		r, err := o.get(ctx, id, in.Kind)
		if err != nil {
			return DeleteOutput{}, err
		}
		if err := o.deletable(ctx, r, in.Force); err != nil {
			return DeleteOutput{}, err
		}
		todo = append(todo, r)
	}
	var out DeleteOutput
	for _, r := range todo {
		if err := o.opt.Store.DeleteRun(ctx, r.ID, in.Force); err != nil {
			return out, deleteErr(r, err, out.Deleted)
		}
		out.Deleted = append(out.Deleted, headerOf(r))
	}
	return out, nil
}

// deletable refuses a run this process drives or another process holds
// the lease of, and a running one unless forced.
func (o *Ops) deletable(ctx context.Context, r store.Run, force bool) error {
	if o.opt.Busy != nil && o.opt.Busy(r.ID) {
		return fmt.Errorf("%s %s is running in this process: %w; stop it first", noun(r.Kind), r.ID, store.ErrRunning)
	}
	if ls, ok := o.opt.Store.(leaseReader); ok {
		l, err := ls.RunLease(ctx, r.ID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if l.Live(o.opt.Now()) {
			// Another process drives it now: forcing would pull its log
			// from under it.
			return fmt.Errorf("cannot delete %s %s even with force: %w", noun(r.Kind), r.ID, &store.LeaseError{Held: l})
		}
	}
	if r.Status == store.RunRunning && !force {
		return fmt.Errorf("%s %s: %w: stop it first; if no process drives it any more (it was killed), delete it with force", noun(r.Kind), r.ID, store.ErrRunning)
	}
	return nil
}

// deleteErr says which run failed and what was deleted before it.
func deleteErr(r store.Run, err error, done []Header) error {
	if len(done) == 0 {
		return err
	}
	ids := make([]string, len(done))
	for i, h := range done {
		ids[i] = h.ID
	}
	return fmt.Errorf("%w (deleted before it: %s)", err, strings.Join(ids, ", "))
}

// PruneInput is a retention rule to apply.
type PruneInput struct {
	Kind      string `json:"kind,omitempty" jsonschema:"agent or chat; none for both"`
	OlderThan string `json:"olderThan,omitempty" jsonschema:"delete runs not updated for longer than this: 30d, 12h, 90m"`
	Keep      int    `json:"keep,omitempty" jsonschema:"keep the newest this many runs of each kind and delete the rest"`
	DryRun    bool   `json:"dryRun,omitempty" jsonschema:"list what would be deleted and delete nothing"`
}

// PruneOutput lists the runs pruned (or, on a dry run, that would be).
type PruneOutput struct {
	Pruned []Header `json:"pruned"`
	DryRun bool     `json:"dryRun,omitempty"`
	// Rule is the retention applied, in words.
	Rule string `json:"rule"`
}

// Prune deletes the runs a retention rule selects: the input's, or else
// the configured one; with neither it refuses, so nothing is deleted by a
// rule nobody set. Running runs are never pruned.
func (o *Ops) Prune(ctx context.Context, in PruneInput) (PruneOutput, error) {
	if err := checkKind(in.Kind); err != nil {
		return PruneOutput{}, err
	}
	r, err := o.retention(in)
	if err != nil {
		return PruneOutput{}, err
	}
	sel, err := store.RunsToPrune(ctx, o.opt.Store, in.Kind, r, o.opt.Now())
	if err != nil {
		return PruneOutput{}, err
	}
	out := PruneOutput{DryRun: in.DryRun, Rule: RuleText(r), Pruned: []Header{}}
	for _, run := range sel {
		if o.opt.Busy != nil && o.opt.Busy(run.ID) {
			continue
		}
		if !in.DryRun {
			err := o.opt.Store.DeleteRun(ctx, run.ID, false)
			if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrRunning) {
				continue // deleted or started again since it was selected
			}
			if err != nil {
				return out, fmt.Errorf("prune: %w (%d runs deleted before it)", err, len(out.Pruned))
			}
		}
		out.Pruned = append(out.Pruned, headerOf(run))
	}
	return out, nil
}

func (o *Ops) retention(in PruneInput) (store.Retention, error) {
	if in.Keep < 0 {
		return store.Retention{}, fmt.Errorf("keep %d: want the number of newest runs to keep, 1 or more", in.Keep)
	}
	r := store.Retention{Keep: in.Keep}
	if in.OlderThan != "" {
		d, err := ParseAge(in.OlderThan)
		if err != nil {
			return store.Retention{}, err
		}
		r.OlderThan = d
	}
	if r.IsZero() {
		r = o.opt.Retention
	}
	if r.IsZero() {
		return r, fmt.Errorf("no retention rule: give an age (older than 30d) or a count to keep (keep 100), or set runs.keep_days or runs.keep in the configuration")
	}
	return r, nil
}

// RuleText says a retention rule in words.
func RuleText(r store.Retention) string {
	var parts []string
	if r.OlderThan > 0 {
		parts = append(parts, "not updated for "+AgeText(r.OlderThan))
	}
	if r.Keep > 0 {
		parts = append(parts, fmt.Sprintf("beyond the newest %d of each kind", r.Keep))
	}
	if len(parts) == 0 {
		return "keep every run"
	}
	return "delete runs " + strings.Join(parts, " or ")
}

// ParseAge reads an age as durations are written (90m, 12h) or in days
// (30d).
func ParseAge(s string) (time.Duration, error) {
	bad := fmt.Errorf("age %q: write it as 30d, 12h or 90m", s)
	var d time.Duration
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.ParseFloat(n, 64)
		if err != nil {
			return 0, bad
		}
		d = time.Duration(days * float64(24*time.Hour))
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, bad
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("age %q: want more than zero", s)
	}
	return d, nil
}

// AgeText writes an age in days when it is whole days.
func AgeText(d time.Duration) string {
	if day := 24 * time.Hour; d%day == 0 {
		return fmt.Sprintf("%dd", d/day)
	}
	return d.String()
}

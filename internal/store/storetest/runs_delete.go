package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// runDeleteTests are the conformance cases for deleting and pruning runs.
var runDeleteTests = []struct {
	name string
	fn   func(*testing.T, store.Store)
}{
	{"RunsDelete", testRunsDelete},
	{"RunsDeleteRunning", testRunsDeleteRunning},
	{"RunsRetention", testRunsRetention},
}

func appendN(t *testing.T, s store.Store, id string, n int) {
	t.Helper()
	evs := make([]store.Event, n)
	for i := range evs {
		evs[i] = store.Event{Type: "step", Data: json.RawMessage(`{"n":1}`)}
	}
	if _, err := s.AppendEvents(context.Background(), id, evs); err != nil {
		t.Fatalf("AppendEvents(%q): %v", id, err)
	}
}

func eventCount(t *testing.T, s store.Store, id string) int {
	t.Helper()
	evs, err := s.Events(context.Background(), id, 0)
	if err != nil {
		t.Fatalf("Events(%q): %v", id, err)
	}
	return len(evs)
}

func testRunsDelete(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreateRun(t, s, store.Run{ID: "gone", Kind: store.RunAgent, Status: "done"})
	mustCreateRun(t, s, store.Run{ID: "stays", Kind: store.RunAgent, Status: "done"})
	appendN(t, s, "gone", 3)
	appendN(t, s, "stays", 2)

	if err := s.DeleteRun(ctx, "gone", false); err != nil {
		t.Fatalf("DeleteRun(done run) = %v", err)
	}
	if _, err := s.Run(ctx, "gone"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Run(deleted) = %v, want ErrNotFound", err)
	}
	if _, err := s.Events(ctx, "gone", 0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Events(deleted) = %v, want ErrNotFound", err)
	}
	runs, err := s.ListRuns(ctx, store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].ID != "stays" {
		t.Errorf("ListRuns after the delete = %v, want only stays", runs)
	}
	if n := eventCount(t, s, "stays"); n != 2 {
		t.Errorf("the other run has %d events after the delete, want its 2", n)
	}
	if err := s.DeleteRun(ctx, "gone", false); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("DeleteRun(deleted again) = %v, want ErrNotFound", err)
	}
	if err := s.DeleteRun(ctx, "", true); err == nil {
		t.Errorf("DeleteRun(no ID) succeeded")
	}

	// A run created again under the ID starts a log of its own.
	mustCreateRun(t, s, store.Run{ID: "gone", Kind: store.RunChat, Status: "open"})
	if n := eventCount(t, s, "gone"); n != 0 {
		t.Errorf("a new run under a deleted run's ID has %d events, want none", n)
	}
	got, err := s.AppendEvents(ctx, "gone", []store.Event{{Type: "question"}})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Seq != 1 {
		t.Errorf("first event of a new run under a deleted ID has Seq %d, want 1", got[0].Seq)
	}
}

func testRunsDeleteRunning(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreateRun(t, s, store.Run{ID: "live", Kind: store.RunAgent, Status: store.RunRunning})
	appendN(t, s, "live", 2)
	err := s.DeleteRun(ctx, "live", false)
	if !errors.Is(err, store.ErrRunning) {
		t.Fatalf("DeleteRun(running run) = %v, want ErrRunning", err)
	}
	if !strings.Contains(err.Error(), "live") || !strings.Contains(err.Error(), "force") {
		t.Errorf("the refusal %q should name the run and say how to delete it anyway", err)
	}
	if _, err := s.Run(ctx, "live"); err != nil {
		t.Errorf("Run after a refused delete = %v: the run must stay", err)
	}
	if n := eventCount(t, s, "live"); n != 2 {
		t.Errorf("a refused delete left %d events, want 2", n)
	}
	if err := s.DeleteRun(ctx, "live", true); err != nil {
		t.Fatalf("DeleteRun(running, force) = %v", err)
	}
	if _, err := s.Run(ctx, "live"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Run after a forced delete = %v, want ErrNotFound", err)
	}
}

func testRunsRetention(t *testing.T, s store.Store) {
	ctx := context.Background()
	now := time.Date(2026, 6, 30, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	for _, r := range []store.Run{
		{ID: "a-new", Kind: store.RunAgent, Status: "done", Created: now.Add(-1 * day)},
		{ID: "a-mid", Kind: store.RunAgent, Status: "failed", Created: now.Add(-10 * day)},
		{ID: "a-old", Kind: store.RunAgent, Status: "done", Created: now.Add(-40 * day)},
		{ID: "a-old-running", Kind: store.RunAgent, Status: store.RunRunning, Created: now.Add(-50 * day)},
		{ID: "c-new", Kind: store.RunChat, Status: "open", Created: now.Add(-2 * day)},
		{ID: "c-old", Kind: store.RunChat, Status: "open", Created: now.Add(-35 * day)},
	} {
		mustCreateRun(t, s, r)
	}
	ids := func(rs []store.Run) []string {
		out := make([]string, len(rs))
		for i, r := range rs {
			out[i] = r.ID
		}
		return out
	}
	for _, tc := range []struct {
		kind string
		r    store.Retention
		want []string
	}{
		{"", store.Retention{}, []string{}},
		{"", store.Retention{OlderThan: 30 * day}, []string{"a-old", "c-old"}},
		{store.RunAgent, store.Retention{OlderThan: 30 * day}, []string{"a-old"}},
		// The running run counts among the newest kept but is never pruned.
		{store.RunAgent, store.Retention{Keep: 1}, []string{"a-old", "a-mid"}},
		{"", store.Retention{Keep: 1}, []string{"a-old", "c-old", "a-mid"}},
		{store.RunChat, store.Retention{Keep: 5}, []string{}},
		{"", store.Retention{OlderThan: 5 * day, Keep: 2}, []string{"a-old", "c-old", "a-mid"}},
	} {
		got, err := store.RunsToPrune(ctx, s, tc.kind, tc.r, now)
		if err != nil {
			t.Fatal(err)
		}
		if g := ids(got); !slices.Equal(g, tc.want) {
			t.Errorf("RunsToPrune(kind %q, %+v) = %v, want %v (the oldest first)", tc.kind, tc.r, g, tc.want)
		}
	}
}

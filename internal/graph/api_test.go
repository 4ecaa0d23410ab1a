package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestObserversRunOutsideTheLock: an observer that blocks does not block
// the run's other work. The node's goroutine waits in an observer of its
// own event while a second goroutine of the node reads a recorded Once
// result; under the lock that read would wait for the observer, which
// waits for the read.
func TestObserversRunOutsideTheLock(t *testing.T) {
	entered, released := make(chan struct{}), make(chan struct{})
	read := make(chan error, 1)
	var once sync.Once
	run, err := loop(func(_ context.Context, rc *RunContext, n int) (int, error) {
		if _, err := rc.Once("key", func() (json.RawMessage, error) { return json.RawMessage(`1`), nil }); err != nil {
			return n, err
		}
		go func() {
			<-entered
			_, err := rc.Once("key", func() (json.RawMessage, error) { return nil, errors.New("ran twice") })
			read <- err
			close(released)
		}()
		return -1, rc.Trace(TypeThought, "block")
	}).Compile(nil)
	require.NoError(t, err)
	done := make(chan Outcome, 1)
	go func() {
		_, out := run.Invoke(context.Background(), "r", 0, Observe(func(ev Event) {
			if ev.Text == "block" {
				once.Do(func() { close(entered) })
				<-released
			}
		}))
		done <- out
	}()
	select {
	case out := <-done:
		assert.Equal(t, Success, out.Status, out.Reason)
		assert.NoError(t, <-read)
	case <-time.After(30 * time.Second):
		t.Fatal("the run waited for its own observer: observers run under the run's lock")
	}
}

// TestObservePerCall: each call has its own observers, in log order, and
// Bound sets the call's limits without recompiling.
func TestObservePerCall(t *testing.T) {
	log := NewMemLog()
	run, err := loop(func(_ context.Context, rc *RunContext, n int) (int, error) {
		if n == 3 {
			return -1, nil
		}
		return n + 1, rc.Action("fetch", map[string]int{"page": n})
	}).Compile(log)
	require.NoError(t, err)
	var a, b []Event
	_, outA := run.Invoke(context.Background(), "a", 0, Observe(func(ev Event) { a = append(a, ev) }))
	_, outB := run.Invoke(context.Background(), "b", 0, Observe(func(ev Event) { b = append(b, ev) }), Bound(Limits{MaxToolCalls: 2}))
	assert.Equal(t, Success, outA.Status)
	assert.Equal(t, GuardMaxToolCalls, outB.Guard)
	for name, seen := range map[string][]Event{"a": a, "b": b} {
		logged, _ := log.Events(context.Background(), name)
		assert.Equal(t, logged, seen, "run %s: its observer saw its own events, in order", name)
	}
}

// TestStartErrorsAreTyped: a run that cannot start says why with an error
// callers can test, not with zero values to guess from.
func TestStartErrorsAreTyped(t *testing.T) {
	run, err := loop(func(_ context.Context, _ *RunContext, _ int) (int, error) { return -1, nil }).Compile(nil)
	require.NoError(t, err)
	_, out := run.Invoke(context.Background(), "r", 0)
	require.Equal(t, Success, out.Status)
	for name, got := range map[string]Outcome{
		"exists":        second(run.Invoke(context.Background(), "r", 0)),
		"no checkpoint": second(run.Resume(context.Background(), "nope")),
		"empty id":      second(run.Invoke(context.Background(), "", 0)),
	} {
		var se *StartError
		if !errors.As(got.Err, &se) {
			t.Errorf("%s: %v is not a *StartError", name, got.Err)
		}
	}
	assert.ErrorIs(t, second(run.Invoke(context.Background(), "r", 0)).Err, ErrRunExists)
	assert.ErrorIs(t, second(run.Resume(context.Background(), "nope")).Err, ErrNoCheckpoint)
	broken, err := loop(func(_ context.Context, _ *RunContext, n int) (int, error) { return n, errors.New("broken") }).Compile(nil)
	require.NoError(t, err)
	_, failing := broken.Invoke(context.Background(), "f", 0)
	var se *StartError
	assert.Equal(t, Failure, failing.Status)
	assert.False(t, errors.As(failing.Err, &se), "a run that ran and failed is not a start error")
}

func second[S any](_ S, o Outcome) Outcome { return o }

// outcomeFails refuses to write outcome events.
type outcomeFails struct{ *MemLog }

func (l outcomeFails) Append(ctx context.Context, ev Event) error {
	if ev.Type == TypeOutcome {
		return errors.New("disk full")
	}
	return l.MemLog.Append(ctx, ev)
}

// TestAnOutcomeThatCannotBeLoggedIsReported: a stopped run whose outcome
// cannot be written keeps its status and says so; before, the write error
// of any outcome but success was dropped.
func TestAnOutcomeThatCannotBeLoggedIsReported(t *testing.T) {
	run, err := loop(func(_ context.Context, rc *RunContext, n int) (int, error) {
		return n + 1, rc.Action("fetch", map[string]int{"page": n})
	}).Compile(outcomeFails{NewMemLog()}, WithLimits(Limits{MaxToolCalls: 2}))
	require.NoError(t, err)
	_, out := run.Invoke(context.Background(), "r", 0)
	assert.Equal(t, Stopped, out.Status)
	assert.Contains(t, out.Reason, "could not be logged")
	var le *LogError
	assert.True(t, errors.As(out.Err, &le), "Err %v has no *LogError", out.Err)
	assert.ErrorIs(t, out.Err, ErrStopped)
}

// growing is a state with a list that grows and a field that changes.
type growing struct {
	Goal    string   `json:"goal"`
	Step    int      `json:"step"`
	History []string `json:"history"`
}

// TestCheckpointsStoreWhatChanged: after the first, checkpoints hold the
// fields that changed, and a list that grew holds only its new elements;
// a Replayer and Resume rebuild the same state from them.
func TestCheckpointsStoreWhatChanged(t *testing.T) {
	g := New[growing]()
	g.AddNode("work", func(_ context.Context, rc *RunContext, s growing) (growing, error) {
		s.Step++
		s.History = append(s.History, fmt.Sprintf("step %d observed %s", s.Step, strings.Repeat("x", 2000)))
		return s, rc.Progress("")
	})
	g.RegisterBranch("again", func(s growing) string {
		if s.Step == 40 {
			return "done"
		}
		return "again"
	})
	g.AddEdge(START, "work").AddConditionalEdges("work", "again", map[string]string{"again": "work", "done": END})
	log := NewMemLog()
	run, err := g.Compile(log, WithLimits(Limits{MaxSteps: 100}))
	require.NoError(t, err)
	final, out := run.Invoke(context.Background(), "r", growing{Goal: "grow"})
	require.Equal(t, Success, out.Status, out.Reason)

	evs, _ := log.Events(context.Background(), "r")
	var rep Replayer
	whole, deltas, size := 0, 0, 0
	for _, ev := range evs {
		if ev.Type != TypeCheckpoint {
			continue
		}
		raw, _ := json.Marshal(ev)
		size += len(raw)
		if ev.State != nil {
			whole++
		} else {
			deltas++
			if h := ev.Delta["history"]; len(h.Append) != 1 || h.Set != nil {
				t.Fatalf("checkpoint %d: history set %d bytes, %d appended; want one appended element", ev.Seq, len(h.Set), len(h.Append))
			}
			if _, ok := ev.Delta["goal"]; ok {
				t.Fatalf("checkpoint %d repeats the unchanged goal", ev.Seq)
			}
		}
		_, err := rep.Add(ev)
		require.NoError(t, err)
	}
	assert.Equal(t, 41, whole+deltas)
	assert.Equal(t, 2, whole, "the first checkpoint and one after fullEvery deltas are whole")
	// Whole states would hold 1+2+...+40 history entries of 2 KB: 1.6 MB.
	assert.Less(t, size, 200_000, "checkpoint bytes")
	var replayed growing
	require.NoError(t, json.Unmarshal(rep.State(), &replayed))
	assert.Equal(t, final, replayed)

	resumed, out := run.Resume(context.Background(), "r")
	assert.Equal(t, Success, out.Status)
	assert.Equal(t, final, resumed)
}

// appendSignal is a MemLog that tells when an event with a given text is
// in the log.
type appendSignal struct {
	*MemLog
	text string
	in   chan struct{}
}

func (l appendSignal) Append(ctx context.Context, ev Event) error {
	err := l.MemLog.Append(ctx, ev)
	if ev.Text == l.text {
		close(l.in)
	}
	return err
}

// TestABlockedObserverHoldsNoLock: while a run's observer is blocked (the
// web chat writes to the store there), another goroutine of the same node
// still gets its event into the log, and another run of the same compiled
// graph runs to its end. Under the run's lock the event's append would wait
// for the observer and the test would never see it in the log.
func TestABlockedObserverHoldsNoLock(t *testing.T) {
	log := appendSignal{MemLog: NewMemLog(), text: "second", in: make(chan struct{})}
	entered, release, secondDone := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	run, err := loop(func(_ context.Context, rc *RunContext, n int) (int, error) {
		if n != 7 {
			return -1, nil
		}
		go func() {
			<-entered
			secondDone <- rc.Trace(TypeThought, "second")
		}()
		return -1, rc.Trace(TypeThought, "block")
	}).Compile(log)
	require.NoError(t, err)

	var seen []Event
	done := make(chan Outcome, 1)
	go func() {
		_, out := run.Invoke(context.Background(), "blocked", 7, Observe(func(ev Event) {
			seen = append(seen, ev)
			if ev.Text == "block" {
				close(entered)
				<-release
			}
		}))
		done <- out
	}()
	<-entered
	_, other := run.Invoke(context.Background(), "other", 0)
	assert.Equal(t, Success, other.Status, "another run goes on while an observer blocks")
	select {
	case <-log.in:
	case <-time.After(30 * time.Second):
		close(release)
		t.Fatal("the node's second event did not reach the log while the observer blocked: the observer holds the run's lock")
	}
	close(release)
	require.NoError(t, <-secondDone)
	out := <-done
	require.Equal(t, Success, out.Status, out.Reason)
	logged, _ := log.Events(context.Background(), "blocked")
	assert.Equal(t, logged, seen, "the observer saw every event, in log order")
}

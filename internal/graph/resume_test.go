package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// order is the state of a three-node checkout whose middle node has side
// effects and crashes after them on its first attempt.
type order struct {
	Charged bool   `json:"charged"`
	Label   string `json:"label"`
	Pickup  string `json:"pickup"`
	Emailed bool   `json:"emailed"`
}

// effects counts how often each side effect really ran.
type effects struct{ label, pickup, email, attempts int }

func checkout(fx *effects, crash func(ctx context.Context) error) *Graph[order] {
	g := New[order]()
	g.AddNode("charge", func(_ context.Context, rc *RunContext, s order) (order, error) {
		s.Charged = true
		return s, rc.Action("pay", map[string]int{"amount": 30})
	})
	g.AddNode("ship", func(ctx context.Context, rc *RunContext, s order) (order, error) {
		fx.attempts++
		if err := rc.Action("carrier", map[string]int{"attempt": fx.attempts}); err != nil {
			return s, err
		}
		label, err := rc.Once("label", func() (json.RawMessage, error) {
			fx.label++
			return json.Marshal(fmt.Sprintf("LBL-%d", fx.label))
		})
		if err != nil {
			return s, err
		}
		if err := json.Unmarshal(label, &s.Label); err != nil {
			return s, err
		}
		pickup, err := rc.Once("pickup", func() (json.RawMessage, error) {
			fx.pickup++
			return json.RawMessage(`"tomorrow"`), nil
		})
		if err != nil {
			return s, err
		}
		_ = json.Unmarshal(pickup, &s.Pickup)
		if fx.attempts == 1 && crash != nil {
			if err := crash(ctx); err != nil {
				return s, err
			}
		}
		return s, nil
	})
	g.AddNode("notify", func(_ context.Context, rc *RunContext, s order) (order, error) {
		_, err := rc.Once("email", func() (json.RawMessage, error) {
			fx.email++
			return nil, nil
		})
		s.Emailed = err == nil
		return s, err
	})
	g.AddEdge(START, "charge").AddEdge("charge", "ship").AddEdge("ship", "notify").AddEdge("notify", END)
	return g
}

func TestResumeAfterCrashDoesNotRepeatSideEffects(t *testing.T) {
	tests := []struct {
		name   string
		crash  func(cancel context.CancelFunc) func(ctx context.Context) error
		status Status
	}{
		{"panic", func(context.CancelFunc) func(context.Context) error {
			return func(context.Context) error { panic("out of memory in the browser") }
		}, Failure},
		{"context cancelled", func(cancel context.CancelFunc) func(context.Context) error {
			return func(ctx context.Context) error { cancel(); <-ctx.Done(); return ctx.Err() }
		}, Stopped},
		{"error", func(context.CancelFunc) func(context.Context) error {
			return func(context.Context) error { return errors.New("carrier API timed out") }
		}, Failure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logPath := filepath.Join(t.TempDir(), "runs.jsonl")
			log, err := OpenFileLog(logPath)
			require.NoError(t, err)
			defer log.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			fx := &effects{}
			run, err := checkout(fx, tt.crash(cancel)).Compile(log)
			require.NoError(t, err)

			_, out := run.Invoke(ctx, "order-7", order{})
			require.Equal(t, tt.status, out.Status, out.Reason)
			assert.Equal(t, "ship", out.Node)
			assert.Equal(t, 1, out.Steps, "only charge completed")

			final, out := run.Resume(context.Background(), "order-7")
			require.Equal(t, Success, out.Status, out.Reason)
			assert.Equal(t, 2, fx.attempts, "ship ran again")
			assert.Equal(t, effects{label: 1, pickup: 1, email: 1, attempts: 2}, *fx, "completed side effects ran once")
			assert.Equal(t, order{Charged: true, Label: "LBL-1", Pickup: "tomorrow", Emailed: true}, final)
			assert.Equal(t, 3, out.Steps)
			assert.Equal(t, 3, out.ToolCalls, "tool calls before the crash still count")

			// A finished run resumes to its final state without running anything.
			again, out := run.Resume(context.Background(), "order-7")
			assert.Equal(t, Success, out.Status)
			assert.Equal(t, final, again)
			assert.Equal(t, 2, fx.attempts)
		})
	}
}

func TestResumeStoppedRunWithLargerLimits(t *testing.T) {
	log := NewMemLog()
	fx := &effects{}
	small, err := checkout(fx, nil).Compile(log, WithLimits(Limits{MaxSteps: 2}))
	require.NoError(t, err)
	_, out := small.Invoke(context.Background(), "r", order{})
	require.Equal(t, Stopped, out.Status)
	assert.Equal(t, GuardMaxSteps, out.Guard)
	assert.Equal(t, "notify", out.Next)

	_, out = small.Resume(context.Background(), "r")
	assert.Equal(t, GuardMaxSteps, out.Guard, "the same limits trip again")

	large, err := checkout(fx, nil).Compile(log, WithLimits(Limits{MaxSteps: 10}))
	require.NoError(t, err)
	final, out := large.Resume(context.Background(), "r")
	require.Equal(t, Success, out.Status, out.Reason)
	assert.True(t, final.Emailed)
	assert.Equal(t, 3, out.Steps)
	assert.Equal(t, effects{label: 1, pickup: 1, email: 1, attempts: 1}, *fx)
}

func TestResumeUnknownRun(t *testing.T) {
	run, err := checkout(&effects{}, nil).Compile(nil)
	require.NoError(t, err)
	_, out := run.Resume(context.Background(), "nope")
	assert.Equal(t, Failure, out.Status)
	assert.Contains(t, out.Reason, `resume run "nope": the log has no checkpoint`)
}

func TestFileLogToleratesTornLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.jsonl")
	log, err := OpenFileLog(path)
	require.NoError(t, err)
	run, err := checkout(&effects{}, nil).Compile(log)
	require.NoError(t, err)
	_, out := run.Invoke(context.Background(), "r", order{})
	require.Equal(t, Success, out.Status)
	want, err := log.Events(context.Background(), "r")
	require.NoError(t, err)
	require.NoError(t, log.Close())

	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"run":"r","seq":99,"type":"chec`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	log, err = OpenFileLog(path)
	require.NoError(t, err)
	defer log.Close()
	got, err := log.Events(context.Background(), "r")
	require.NoError(t, err)
	assert.Len(t, got, len(want), "the torn line is dropped")
	require.NoError(t, log.Append(context.Background(), Event{Run: "r", Seq: 99, Type: TypeThought, Text: "after the crash"}))
	got, err = log.Events(context.Background(), "r")
	require.NoError(t, err)
	assert.Equal(t, "after the crash", got[len(got)-1].Text, "appending after a torn line yields a readable log")
}

func TestFileLogNamesACorruptLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.jsonl")
	require.NoError(t, os.WriteFile(path, []byte("{\"run\":\"r\",\"seq\":1,\"type\":\"thought\"}\nnot json\n{\"run\":\"r\",\"seq\":2,\"type\":\"thought\"}\n"), 0o644))
	log, err := OpenFileLog(path)
	require.NoError(t, err)
	defer log.Close()
	_, err = log.Events(context.Background(), "r")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 2 is not an event")
}

// TestResumeRestoresTheState: SetRestore sees the state read from the last
// checkpoint before the next node runs, and its failure ends the resume
// before any node runs.
func TestResumeRestoresTheState(t *testing.T) {
	log := NewMemLog()
	fx := &effects{}
	small, err := checkout(fx, nil).Compile(log, WithLimits(Limits{MaxSteps: 2}))
	require.NoError(t, err)
	_, out := small.Invoke(context.Background(), "r", order{})
	require.Equal(t, "notify", out.Next)

	var restored []order
	failing := checkout(fx, nil).SetRestore(func(_ context.Context, s order) (order, error) {
		restored = append(restored, s)
		return s, errors.New("the index is gone")
	})
	run, err := failing.Compile(log)
	require.NoError(t, err)
	final, out := run.Resume(context.Background(), "r")
	require.Equal(t, Failure, out.Status)
	assert.Contains(t, out.Reason, "the index is gone")
	assert.False(t, final.Emailed)
	assert.Equal(t, 0, fx.email, "a node ran after the restore failed")

	g := checkout(fx, nil).SetRestore(func(_ context.Context, s order) (order, error) {
		restored = append(restored, s)
		s.Pickup = "restored " + s.Pickup
		return s, nil
	})
	run, err = g.Compile(log)
	require.NoError(t, err)
	final, out = run.Resume(context.Background(), "r")
	require.Equal(t, Success, out.Status, out.Reason)
	require.Len(t, restored, 2)
	assert.Equal(t, order{Charged: true, Label: "LBL-1", Pickup: "tomorrow"}, restored[1], "restore saw the checkpoint's state")
	assert.Equal(t, "restored tomorrow", final.Pickup, "the run went on from the restored state")
	assert.True(t, final.Emailed)
}

package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readPages is the graph testdata/full-checkpoints.jsonl was written with:
// ten steps, each an action and a line of history.
func readPages() *Graph[growing] {
	g := New[growing]()
	g.AddNode("work", func(_ context.Context, rc *RunContext, s growing) (growing, error) {
		s.Step++
		if err := rc.Action("fetch", map[string]int{"page": s.Step}); err != nil {
			return s, err
		}
		s.History = append(s.History, fmt.Sprintf("page %d: %s", s.Step, strings.Repeat("observed ", 20)))
		return s, rc.Progress("")
	})
	g.RegisterBranch("again", func(s growing) string {
		if s.Step >= 10 {
			return "done"
		}
		return "again"
	})
	g.AddEdge(START, "work").AddConditionalEdges("work", "again", map[string]string{"again": "work", "done": END})
	return g
}

// TestResumeALogOfWholeStates: a log written before checkpoints stored
// what changed (testdata/full-checkpoints.jsonl, written by the graph
// package of commit 725954c with the whole state in every checkpoint; the
// run was stopped by max_steps after 6 of 10 steps) still resumes: the
// state is rebuilt from its whole checkpoints, the counters carry on, and
// the checkpoints the resumed call appends are deltas after a whole one.
func TestResumeALogOfWholeStates(t *testing.T) {
	raw, err := os.ReadFile("testdata/full-checkpoints.jsonl")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "run.jsonl")
	require.NoError(t, os.WriteFile(path, raw, 0o600))
	log, err := OpenFileLog(path)
	require.NoError(t, err)
	defer log.Close()
	ctx := context.Background()
	old, err := log.Events(ctx, "old-run")
	require.NoError(t, err)
	oldCheckpoints := 0
	for _, ev := range old {
		if ev.Type == TypeCheckpoint {
			require.Nil(t, ev.Delta, "the fixture is in the old format: whole states only")
			require.NotNil(t, ev.State)
			oldCheckpoints++
		}
	}
	require.Equal(t, 7, oldCheckpoints, "start and six steps")

	run, err := readPages().Compile(log)
	require.NoError(t, err)
	final, out := run.Resume(ctx, "old-run")
	require.Equal(t, Success, out.Status, out.Reason)
	assert.Equal(t, 10, out.Steps)
	assert.Equal(t, 10, out.ToolCalls, "the six old actions are counted")
	assert.Equal(t, "read ten pages", final.Goal)
	require.Len(t, final.History, 10)
	for i, h := range final.History {
		assert.True(t, strings.HasPrefix(h, fmt.Sprintf("page %d: ", i+1)), "history %d is %q", i, h)
	}

	evs, err := log.Events(ctx, "old-run")
	require.NoError(t, err)
	var added []Event
	for _, ev := range evs[len(old):] {
		if ev.Type == TypeCheckpoint {
			added = append(added, ev)
		}
	}
	require.Len(t, added, 4, "steps 7 to 10")
	assert.NotNil(t, added[0].State, "the first checkpoint of a call is whole")
	for _, ev := range added[1:] {
		assert.Nil(t, ev.State)
		assert.Len(t, ev.Delta["history"].Append, 1, "checkpoint %d appends one line of history", ev.Seq)
	}
	again, out := run.Resume(ctx, "old-run")
	assert.Equal(t, Success, out.Status)
	assert.Equal(t, final, again, "the mixed log replays to the same state")
}

// TestMeasure: a log of whole states measures the same either way;
// the deltas of the resumed run measure less than their whole states.
func TestMeasure(t *testing.T) {
	log, err := OpenFileLog(filepath.Join(t.TempDir(), "run.jsonl"))
	require.NoError(t, err)
	defer log.Close()
	raw, err := os.ReadFile("testdata/full-checkpoints.jsonl")
	require.NoError(t, err)
	var old []Event
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var ev Event
		require.NoError(t, json.Unmarshal([]byte(line), &ev))
		old = append(old, ev)
	}
	size, err := Measure(old)
	require.NoError(t, err)
	assert.Positive(t, size.Checkpoints)
	assert.Equal(t, size.Checkpoints, size.WholeCheckpoints, "whole states measure the same as stored")
	assert.Equal(t, len(raw), size.Log, "the log's bytes are its lines")

	run, err := readPages().Compile(log)
	require.NoError(t, err)
	_, out := run.Invoke(context.Background(), "new", growing{Goal: "read ten pages"})
	require.Equal(t, Success, out.Status, out.Reason)
	evs, err := log.Events(context.Background(), "new")
	require.NoError(t, err)
	size, err = Measure(evs)
	require.NoError(t, err)
	assert.Less(t, size.Checkpoints, size.WholeCheckpoints)
	assert.Equal(t, size.Log-size.Checkpoints+size.WholeCheckpoints, size.WholeLog())
	t.Logf("ten steps: checkpoints %d bytes stored, %d as whole states", size.Checkpoints, size.WholeCheckpoints)

	_, err = Measure(evs[2:])
	assert.Error(t, err, "deltas without a whole state before them")
}

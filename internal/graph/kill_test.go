//go:build unix

package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// killChildEnv tells the test binary, re-executed by TestKillNineResume,
// to be the child that runs the graph and gets killed.
const killChildEnv = "SAGASU_GRAPH_KILL_CHILD_DIR"

const (
	killSteps  = 30
	killTrials = 20
)

// tally is the state of the graph the child runs.
type tally struct {
	I       int      `json:"i"`
	Results []string `json:"results"`
}

// killGraph runs killSteps steps; step i performs side effect "effect-i",
// which appends a line to effectsPath, through rc.Once.
func killGraph(effectsPath string) *Graph[tally] {
	g := New[tally]()
	g.AddNode("work", func(_ context.Context, rc *RunContext, s tally) (tally, error) {
		key := fmt.Sprintf("effect-%02d", s.I)
		res, err := rc.Once(key, func() (json.RawMessage, error) {
			if err := appendLine(effectsPath, key); err != nil {
				return nil, err
			}
			return json.Marshal(key + " done")
		})
		if err != nil {
			return s, err
		}
		var r string
		if err := json.Unmarshal(res, &r); err != nil {
			return s, err
		}
		time.Sleep(time.Millisecond) // work after the side effect, so kills land mid-node too
		s.Results = append(s.Results, r)
		s.I++
		return s, nil
	})
	g.RegisterBranch("more", func(s tally) string {
		if s.I < killSteps {
			return "more"
		}
		return "done"
	})
	g.AddEdge(START, "work").AddConditionalEdges("work", "more", map[string]string{"more": "work", "done": END})
	return g
}

// appendLine is the side effect: one durable line per call.
func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// countLines counts complete lines per text in path.
func countLines(t *testing.T, path string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]int{}
	}
	require.NoError(t, err)
	out := map[string]int{}
	lines := strings.Split(string(data), "\n")
	for _, l := range lines[:len(lines)-1] { // the part after the last newline is torn
		out[l]++
	}
	return out
}

func runKillChild(t *testing.T, dir string) {
	log, err := OpenFileLog(filepath.Join(dir, "run.jsonl"))
	require.NoError(t, err)
	run, err := killGraph(filepath.Join(dir, "effects")).Compile(log)
	require.NoError(t, err)
	_, out := run.Invoke(context.Background(), "kill", tally{})
	require.Equal(t, Success, out.Status, out.Reason)
}

func TestKillNineResume(t *testing.T) {
	if dir := os.Getenv(killChildEnv); dir != "" {
		runKillChild(t, dir)
		return
	}
	testenv.Short(t, "re-executes the test binary 20 times")
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 7))
	t.Logf("seed %d", seed)

	var killed, finished, torn, completedAtKill, inFlight, startedFresh int
	for trial := range killTrials {
		dir := filepath.Join(t.TempDir(), fmt.Sprint(trial))
		require.NoError(t, os.MkdirAll(dir, 0o755))
		logPath, effectsPath := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "effects")

		// Kill once the log has a random number of lines (a checkpoint and a
		// Once result per step), plus up to 2ms, so the kill lands anywhere.
		target := 1 + rng.IntN(2*killSteps)
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillNineResume$", "-test.count=1")
		cmd.Env = append(os.Environ(), killChildEnv+"="+dir)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stderr, &stderr
		require.NoError(t, cmd.Start())
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		deadline := time.After(60 * time.Second)
	wait:
		for {
			data, _ := os.ReadFile(logPath)
			if bytes.Count(data, []byte("\n")) >= target {
				time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond)
				break
			}
			select {
			case err := <-exited:
				exited <- err
				break wait
			case <-deadline:
				break wait
			case <-time.After(500 * time.Microsecond):
			}
		}
		_ = cmd.Process.Kill() // SIGKILL; an error means the child had exited
		err := <-exited
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) && exitErr.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL {
			killed++
		} else {
			require.NoError(t, err, "child failed on its own:\n%s", stderr.String())
			finished++
		}

		// What was durable when the child died.
		if data, _ := os.ReadFile(logPath); len(data) > 0 && data[len(data)-1] != '\n' {
			torn++
		}
		log, err := OpenFileLog(logPath)
		require.NoError(t, err)
		evs, err := log.Events(context.Background(), "kill")
		require.NoError(t, err)
		recorded := map[string]bool{}
		hasCheckpoint := false
		for _, ev := range evs {
			recorded[ev.Key] = recorded[ev.Key] || ev.Type == TypeOnce
			hasCheckpoint = hasCheckpoint || ev.Type == TypeCheckpoint
		}
		before := countLines(t, effectsPath)
		for key, n := range before {
			if recorded[key] {
				completedAtKill++
				require.Equal(t, 1, n, "trial %d: %s ran %d times before the kill", trial, key, n)
			}
		}

		// Resume in this process (or start, if the child died before its
		// first checkpoint) and check every side effect.
		run, err := killGraph(effectsPath).Compile(log)
		require.NoError(t, err)
		var final tally
		var out Outcome
		if hasCheckpoint {
			final, out = run.Resume(context.Background(), "kill")
		} else {
			startedFresh++
			final, out = run.Invoke(context.Background(), "kill", tally{})
		}
		require.Equal(t, Success, out.Status, "trial %d: %s", trial, out.Reason)
		require.Equal(t, killSteps, final.I)
		require.Len(t, final.Results, killSteps)
		after := countLines(t, effectsPath)
		for i := range killSteps {
			key := fmt.Sprintf("effect-%02d", i)
			assert.Equal(t, key+" done", final.Results[i])
			switch {
			case recorded[key]:
				assert.Equal(t, 1, after[key], "trial %d: %s completed before the kill and must not run again", trial, key)
			case before[key] > 0:
				// Killed between the effect and its log record: the one
				// window Once cannot close; it runs once more.
				inFlight++
				assert.Equal(t, before[key]+1, after[key], "trial %d: %s", trial, key)
			default:
				assert.Equal(t, 1, after[key], "trial %d: %s", trial, key)
			}
		}
		evs, err = log.Events(context.Background(), "kill")
		require.NoError(t, err)
		onces := map[string]int{}
		for _, ev := range evs {
			if ev.Type == TypeOnce {
				onces[ev.Key]++
			}
		}
		assert.Len(t, onces, killSteps)
		for key, n := range onces {
			assert.Equal(t, 1, n, "trial %d: %s recorded %d times", trial, key, n)
		}
		require.NoError(t, log.Close())
	}
	t.Logf("kill -9: %d trials, %d killed mid-run, %d finished before the kill, %d left a torn last line, %d started over (killed before the first checkpoint)",
		killTrials, killed, finished, torn, startedFresh)
	t.Logf("side effects completed before a kill: %d, none ran again; in flight at a kill (effect done, result not yet logged): %d, ran once more",
		completedAtKill, inFlight)
}

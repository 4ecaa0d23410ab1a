//go:build unix

package planact

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
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// killChildEnv makes the re-executed test binary the child that runs a
// Plan-and-Act graph and is killed.
const killChildEnv = "PLANACT_KILL_CHILD_DIR"

const (
	killFacts  = 10 // plan steps, one search each
	killTrials = 20
	killRun    = "kill"
)

var stepNumRE = regexp.MustCompile(`Step just run: (\d+)\.`)

// killRoles plans killFacts look-ups, each one sagasu_query call,
// and finishes after the last. Every answer is a function of the request
// alone, so the resumed run (with a new scripted model) goes on the same way.
func killRoles() roles {
	return roles{
		plan: func(llm.Request) string {
			steps := make([]string, killFacts)
			for i := range steps {
				steps[i] = fmt.Sprintf("Look up fact %d", i+1)
			}
			return planJSON(steps...)
		},
		execute: func(req llm.Request) llm.Message {
			n := strings.TrimPrefix(currentStep(req), "Look up ")
			return callMsg(ToolSearch, map[string]any{"query": n})
		},
		evaluate: func(req llm.Request) string {
			m := stepNumRE.FindStringSubmatch(userText(req))
			if m == nil {
				return "?"
			}
			if n, _ := strconv.Atoi(m[1]); n == killFacts {
				return decisionJSON("done", "", "all facts looked up", "")
			}
			return decisionJSON("next", "found", "", "")
		},
	}
}

// effectResearch is Research whose search is a side effect: it appends
// the query to an append-only file (fsynced), then answers.
func effectResearch(path string) *fakeResearch {
	f := &fakeResearch{}
	f.onSearch = func(q string) error {
		if err := appendLine(path, q); err != nil {
			return err
		}
		n, _ := strconv.Atoi(strings.TrimPrefix(q, "fact "))
		f.passages = []doc.Hit{hit(int64(n), "facts.md", "Facts", q+" is true")}
		time.Sleep(time.Millisecond) // work after the effect, so kills land there too
		return nil
	}
	return f
}

func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		return err
	}
	return f.Sync()
}

// countLines counts the complete lines of path by text.
func countLines(t *testing.T, path string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]int{}
	}
	require.NoError(t, err)
	out := map[string]int{}
	lines := strings.Split(string(data), "\n")
	for _, l := range lines[:len(lines)-1] {
		out[l]++
	}
	return out
}

func killAgent(t *testing.T, dir string, log graph.Log) *Agent {
	kb := effectResearch(filepath.Join(dir, "effects"))
	return newAgent(t, Options{Model: killRoles().model(200), Research: kb, Functions: kb, Log: log})
}

func runKillChild(t *testing.T, dir string) {
	log, err := graph.OpenFileLog(filepath.Join(dir, "run.jsonl"))
	require.NoError(t, err)
	res, err := killAgent(t, dir, log).Run(context.Background(), RunInput{Goal: "Look up every fact", RunID: killRun})
	require.NoError(t, err)
	require.Equal(t, OutcomeSuccess, res.Outcome, res.Reason)
}

// TestResumeAfterKill9 kills a child running a Plan-and-Act graph at random
// points with SIGKILL, resumes the run here, and counts the searches (the
// side effects) of completed steps that ran again: there must be none.
func TestResumeAfterKill9(t *testing.T) {
	if dir := os.Getenv(killChildEnv); dir != "" {
		runKillChild(t, dir)
		return
	}
	testenv.Short(t, "re-executes the test binary 20 times")
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 11))
	t.Logf("seed %d", seed)

	var killed, finished, completedAtKill, reexecuted, inFlight, fresh int
	for trial := range killTrials {
		dir := filepath.Join(t.TempDir(), strconv.Itoa(trial))
		require.NoError(t, os.MkdirAll(dir, 0o755))
		logPath, effects := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "effects")

		// A whole run writes about 13 log lines per step (127 for 10 steps):
		// kill anywhere in it.
		target := 1 + rng.IntN(12*killFacts)
		cmd := exec.Command(os.Args[0], "-test.run=^TestResumeAfterKill9$", "-test.count=1")
		cmd.Env = append(os.Environ(), killChildEnv+"="+dir)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		deadline := time.After(60 * time.Second)
	wait:
		for {
			data, _ := os.ReadFile(logPath)
			if bytes.Count(data, []byte("\n")) >= target {
				time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
				break
			}
			select {
			case err := <-exited:
				exited <- err
				break wait
			case <-deadline:
				break wait
			case <-time.After(300 * time.Microsecond):
			}
		}
		_ = cmd.Process.Kill()
		err := <-exited
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) && exitErr.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL {
			killed++
		} else {
			require.NoError(t, err, "the child failed on its own:\n%s", out.String())
			finished++
		}

		log, err := graph.OpenFileLog(logPath)
		require.NoError(t, err)
		evs, err := log.Events(context.Background(), killRun)
		require.NoError(t, err)
		recorded := map[string]bool{} // queries whose search is in the log
		for _, ev := range evs {
			if ev.Type != graph.TypeOnce {
				continue
			}
			var o onceRecord
			require.NoError(t, json.Unmarshal(ev.Result, &o))
			require.Equal(t, 1, o.Hits.Len())
			// The record holds the passage's chunk ID; its text is the index's.
			require.NoError(t, o.Hits.Restore(context.Background(), func(_ context.Context, ids []int64) ([]doc.Hit, error) {
				return []doc.Hit{hit(ids[0], "facts.md", "Facts", fmt.Sprintf("fact %d is true", ids[0]))}, nil
			}))
			h, _ := o.Hits.Get(1)
			recorded[strings.TrimSuffix(h.Chunk.Text, " is true")] = true
		}
		before := countLines(t, effects)
		for q := range recorded {
			completedAtKill++
			require.Equal(t, 1, before[q], "trial %d: %s ran %d times before the kill", trial, q, before[q])
		}

		a := killAgent(t, dir, log)
		var res *Result
		if len(evs) > 0 {
			res, err = a.Resume(context.Background(), killRun)
		} else {
			fresh++
			res, err = a.Run(context.Background(), RunInput{Goal: "Look up every fact", RunID: killRun})
		}
		require.NoError(t, err)
		require.Equal(t, OutcomeSuccess, res.Outcome, "trial %d: %s", trial, res.Reason)
		assert.Equal(t, "all facts looked up", res.Answer)
		require.Len(t, res.Plan, killFacts)
		for _, st := range res.Plan {
			assert.Equal(t, StatusDone, st.Status, st.Text)
		}
		after := countLines(t, effects)
		for i := 1; i <= killFacts; i++ {
			q := fmt.Sprintf("fact %d", i)
			switch {
			case recorded[q]:
				reexecuted += after[q] - 1
				assert.Equal(t, 1, after[q], "trial %d: %s completed before the kill and must not run again", trial, q)
			case before[q] > 0:
				// Killed between the search and its log record: the one
				// window rc.Once cannot close; it runs once more.
				inFlight++
				assert.Equal(t, before[q]+1, after[q], "trial %d: %s", trial, q)
			default:
				assert.Equal(t, 1, after[q], "trial %d: %s", trial, q)
			}
		}
		require.NoError(t, log.Close())
	}
	t.Logf("kill -9: %d trials, %d killed mid-run, %d finished before the kill, %d started over (killed before the first checkpoint)",
		killTrials, killed, finished, fresh)
	t.Logf("completed tool calls at the kills: %d, re-executed after resume: %d; in flight at a kill (effect done, not yet logged): %d, ran once more",
		completedAtKill, reexecuted, inFlight)
	assert.Zero(t, reexecuted)
}

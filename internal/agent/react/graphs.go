package react

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/sagasu-dev/sagasu/internal/graph"
)

// graphs are an agent's two graphs, each compiled once, on first use, and
// reused by every Ask and Answer: what differs between calls (the
// observer, the model's limits) is a per-call option of Invoke.
type graphs struct {
	llmOnce, offlineOnce sync.Once
	llm                  *graph.Compiled[state]
	offline              *graph.Compiled[offline]
	llmErr, offlineErr   error
	compiles             atomic.Int32 // graphs compiled so far
	lastID               atomic.Int64 // the number of the last run id given

	// mem is the log when Options.Log is nil; each run is dropped from it
	// when it ends, so an agent that answers for a long time does not keep
	// every run it made.
	mem *graph.MemLog
}

func (a *Agent) llmGraph() (*graph.Compiled[state], error) {
	a.g.llmOnce.Do(func() {
		a.g.compiles.Add(1)
		a.g.llm, a.g.llmErr = a.graph()
	})
	return a.g.llm, a.g.llmErr
}

func (a *Agent) offlineGraphOnce() (*graph.Compiled[offline], error) {
	a.g.offlineOnce.Do(func() {
		a.g.compiles.Add(1)
		a.g.offline, a.g.offlineErr = a.offlineGraph()
	})
	return a.g.offline, a.g.offlineErr
}

// log is where runs are written: Options.Log, or the agent's memory.
func (a *Agent) log() graph.Log {
	if a.opt.Log != nil {
		return a.opt.Log
	}
	return a.g.mem
}

// ended lets go of a finished run kept only in the agent's memory.
func (a *Agent) ended(run string) {
	if a.opt.Log == nil {
		a.g.mem.Forget(run)
	}
}

// runID names a new run in the log: ask-<the clock's nanoseconds>, one
// more than the last when the clock has not moved, so the runs of one
// agent never share an id.
func (a *Agent) runID() string {
	now := a.opt.Now().UnixNano()
	for {
		last := a.g.lastID.Load()
		n := max(now, last+1)
		if a.g.lastID.CompareAndSwap(last, n) {
			return fmt.Sprintf("ask-%d", n)
		}
	}
}

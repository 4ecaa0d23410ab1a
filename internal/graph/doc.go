// Package graph runs small state graphs, the way LangGraph's StateGraph
// does, for agents such as Plan-and-Act: nodes transform a typed state,
// edges and conditional edges pick the next node, and every run is written
// to an append-only event log that is at once its trace and its checkpoint.
//
// # Model
//
// A Graph[S] holds nodes (func(ctx, rc, S) (S, error)), plain edges and
// conditional edges. A conditional edge names a branch function registered
// with RegisterBranch, so routing can also come from a JSON Table loaded
// at start-up (ApplyTable, LoadTableFile). START and END are the entry and
// exit. Compile checks the structure (an entry point, no edge to an
// unknown node, every node reachable and with an exit) and binds the graph
// to a Log, which plays LangGraph's checkpointer.
//
// Invoke runs one node at a time. Before each node it checks the limits
// (steps, wall-clock time, tool calls, tokens) and guards (the same action
// repeated, no progress, repeated parse failures); they are on by default
// and the first to trip ends the run with Outcome{Status: Stopped, Guard:
// its name}. Node errors, node panics and branch keys without a route end
// it with Status Failure. Outcome.Err says which, for errors.Is and
// errors.As: a *StopError (ErrStopped) for a limit or guard, ErrCancelled
// with the context's cause for a cancelled call, a *NodeError (ErrPanic
// for a panic) or *RouteError for a failure, a *StartError (ErrRunExists,
// ErrNoCheckpoint, ErrBadCheckpoint) for a call that ran nothing, and a
// *LogError for a log that cannot be written. The runner never panics and never
// hangs: a node that ignores its cancelled context is abandoned after a
// grace period. Invoke and Resume take per-call options: Observe (this
// call's events, in order, delivered outside the run's lock), Bound and
// Guard (this call's limits and guards).
//
// # The log is the checkpoint
//
// Nodes report what they do through their RunContext: trace events
// (thought, plan, action, observation, ...), token usage and tool calls.
// After each completed node the runner appends a checkpoint event with the
// next node's name and what the node changed of the state (Delta: per
// top-level field its new value, or the elements appended to a list), or
// the whole state for the first checkpoint of a call and every 32nd.
// Resume reads the run's events back, rebuilds the counters and guard
// windows from them, folds the checkpoints into the last state (Replayer)
// and carries on. A node cut short runs again, so side effects
// belong in rc.Once(key, fn): a key whose result is in the log is not run
// again (a kill between fn's effect and its log record is the one window
// left; give the effect the key if that matters). One process drives a
// run at a time. MemLog keeps events in memory; FileLog appends JSON Lines and
// fsyncs checkpoints, so a process killed with SIGKILL resumes where it was.
//
// The same Event records feed a CLI trace, --json output and a live web
// view (subscribe with Observe, or WithObserver for every run).
//
// # Example
//
//	g := graph.New[State]()
//	g.AddNode("plan", plan).AddNode("act", act)
//	g.RegisterBranch("after_act", func(s State) string { ... return "done" })
//	g.AddEdge(graph.START, "plan").AddEdge("plan", "act")
//	g.AddConditionalEdges("act", "after_act", map[string]string{
//		"next": "act", "replan": "plan", "done": graph.END})
//	run, err := g.Compile(log)
//	final, outcome := run.Invoke(ctx, "run-1", State{Goal: "..."})
package graph

package graph

import (
	"errors"
	"fmt"
)

// How a call ended, for errors.Is and errors.As on Outcome.Err (never read
// from zero values or from the Reason text):
//
//	a limit or guard tripped   *StopError, errors.Is ErrStopped (Status Stopped)
//	the context was cancelled  errors.Is ErrCancelled and the context's cause (Status Stopped)
//	a node failed or panicked  *NodeError; a panic also errors.Is ErrPanic (Status Failure)
//	a branch found no route    *RouteError (Status Failure)
//	nothing ran                *StartError: ErrEmptyRunID, ErrRunExists, ErrNoCheckpoint, ErrBadCheckpoint
//	the log could not be written *LogError
var (
	// ErrCancelled is wrapped, beside the context's cause, by the Err of a
	// call whose context was cancelled by its caller. The wall-clock limit
	// is a StopError instead.
	ErrCancelled = errors.New("run cancelled")
	// ErrPanic is wrapped by the NodeError of a node that panicked.
	ErrPanic = errors.New("panic")
	// ErrBadCheckpoint is wrapped by the StartError of a Resume whose log
	// holds a checkpoint that cannot be read or does not fit the graph.
	ErrBadCheckpoint = errors.New("the run's checkpoints cannot be resumed by this graph")
)

// cancelled is the error of a call whose context ended with cause.
func cancelled(cause error) error { return fmt.Errorf("%w: %w", ErrCancelled, cause) }

// NodeError is a node that returned an error or panicked. (A resumed
// run whose checkpoint names a node the graph lacks does not start: its
// StartError wraps ErrBadCheckpoint.)
type NodeError struct {
	Node string
	Err  error
}

func (e *NodeError) Error() string { return fmt.Sprintf("node %q: %v", e.Node, e.Err) }

// Unwrap returns what the node returned.
func (e *NodeError) Unwrap() error { return e.Err }

// RouteError is a conditional edge that could not pick the next node: its
// branch panicked, or returned a key with no route or a name that is no
// node.
type RouteError struct {
	From   string // the node whose exit it is
	Branch string
	Key    string // what the branch returned; empty when it panicked
	Reason string
}

func (e *RouteError) Error() string { return e.Reason }

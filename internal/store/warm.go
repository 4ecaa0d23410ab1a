package store

import "context"

// Warmer is a store that keeps caches in memory for long-lived processes
// and can fill them ahead of the first queries: a benchmark calls Warm so
// that it times steady-state queries, a server may call it at start-up.
// Queries work the same without it; the caches then fill as they run.
type Warmer interface {
	// Warm fills the caches for the index as it is now and returns when
	// they are full (or bounded out).
	Warm(ctx context.Context) error
}

// Settler is a store that tidies up after a run of writes: the SQLite
// store checkpoints and truncates its write-ahead log, which during a bulk
// run it lets grow for speed. The indexer calls Settle at the end of a run.
type Settler interface {
	Settle(ctx context.Context)
}

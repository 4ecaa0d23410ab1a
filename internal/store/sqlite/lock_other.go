//go:build !unix

package sqlite

import "context"

// Lock implements store.Driver. Without flock the transaction-level locking
// of SQLite is all there is: writers still never interleave within a batch.
func (s *Store) Lock(ctx context.Context) (func(), error) { return func() {}, nil }

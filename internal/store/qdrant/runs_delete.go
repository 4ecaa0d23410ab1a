package qdrant

import (
	"context"
	"errors"
	"fmt"

	"github.com/qdrant/go-client/qdrant"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// DropRun implements store.RunDropper. Qdrant has no transaction over two
// collections, so the header goes first, by a filter that the server
// applies atomically (the run is not running, unless forced), and the
// events after it: once the header is gone the run is gone for every
// reader, and events a crash leaves behind are removed when a run of the
// same ID is created again (clearEvents).
func (s *Store) DropRun(ctx context.Context, id string, force bool) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if _, err := s.Run(ctx, id); err != nil {
		return fmt.Errorf("delete run: %w", err)
	}
	f := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewHasID(runPID(id))}}
	if !force {
		f.MustNot = []*qdrant.Condition{qdrant.NewMatch("status", store.RunRunning)}
	}
	if err := s.deleteWhere(ctx, s.coll(roleRuns), f); err != nil {
		return fmt.Errorf("delete run %q: %w", id, err)
	}
	switch _, err := s.Run(ctx, id); {
	case err == nil:
		return store.RunningError(id)
	case !errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("delete run: %w", err)
	}
	return s.clearEvents(ctx, id)
}

// clearEvents removes every event of run id.
func (s *Store) clearEvents(ctx context.Context, id string) error {
	f := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("run", id)}}
	if err := s.deleteWhere(ctx, s.coll(roleEvents), f); err != nil {
		return fmt.Errorf("delete the events of run %q: %w", id, err)
	}
	return nil
}

package store

import (
	"context"
	"slices"
)

// Applier is a Store that writes one change to the index, sources written
// and sources removed, as one transaction: a reader sees the index as it
// was before or after, never a part of the change. A watch applies each
// burst of file events this way.
type Applier interface {
	// Apply writes batch as Replace does and removes the sources of
	// remove as Delete does (an ID in both is written), and returns how
	// many sources it removed.
	Apply(ctx context.Context, batch []SourceData, remove []string) (int, error)
}

// ApplyDriver is a Driver that can apply a change in one transaction. A
// driver that is not (Qdrant has no transactions) gets Replace, then
// Delete.
type ApplyDriver interface {
	// Apply deletes the sources of remove (each once, none in batch; it may
	// be empty) and writes batch (checked as for Replace; it may be empty)
	// in one transaction, and returns how many sources it removed.
	Apply(ctx context.Context, batch []SourceData, remove []string) (int, error)
}

var _ Applier = (*contract)(nil)

// Apply implements Applier.
func (c *contract) Apply(ctx context.Context, batch []SourceData, remove []string) (int, error) {
	var err error
	if len(batch) > 0 {
		if batch, err = c.checkBatch(ctx, batch); err != nil {
			return 0, err
		}
	}
	written := make(map[string]bool, len(batch))
	for _, sd := range batch {
		written[sd.Source.ID] = true
	}
	remove = slices.DeleteFunc(slices.Clone(distinct(remove)), func(id string) bool { return written[id] })
	if len(batch) == 0 && len(remove) == 0 {
		return 0, nil
	}
	if d, ok := c.d.(ApplyDriver); ok {
		return d.Apply(ctx, batch, remove)
	}
	if len(batch) > 0 {
		if err := c.d.Replace(ctx, batch); err != nil {
			return 0, err
		}
	}
	if len(remove) == 0 {
		return 0, nil
	}
	return c.d.Delete(ctx, remove)
}

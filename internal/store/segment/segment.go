// Package segment maintains the BM25 postings segments that the SQL stores
// keep: removing deleted chunks from their postings, and merging segments of
// a similar size. The logic lives here once; each driver implements Tx with
// its own SQL.
package segment

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/sagasu-dev/sagasu/internal/store/bm25"
)

// Row is one stored postings row: a term's postings within one segment.
type Row struct {
	Term string
	Seg  int64
	N    int // postings in Data
	Data []byte
}

// Key names a postings row; Seg 0 means the term's rows in every segment.
type Key struct {
	Term string
	Seg  int64
}

// Chunk is a chunk being deleted, as it was indexed.
type Chunk struct {
	ID    int64
	Seg   int64                 // its segment; 0 when the store learns it from its postings rows
	Lens  [bm25.NumFields]int64 // its fields' lengths in terms, as indexed
	Terms []string              // the terms it was indexed under
}

// Shrink is what a delete takes away from one segment.
type Shrink struct {
	Seg    int64
	Docs   int
	Tokens [bm25.NumFields]int64 // per field
}

// Tx is what segment maintenance needs from a store inside one write
// transaction.
type Tx interface {
	// Rows calls fn with each stored postings row of keys.
	Rows(ctx context.Context, keys []Key, fn func(Row) error) error
	// Update rewrites rows in place.
	Update(ctx context.Context, rows []Row) error
	// Remove deletes rows.
	Remove(ctx context.Context, keys []Key) error
	// Shrink subtracts from segments' counts and drops segments left empty.
	Shrink(ctx context.Context, by []Shrink) error

	// Segments lists the segments in ID order.
	Segments(ctx context.Context) ([]bm25.Segment, error)
	// NewSegment returns an unused segment ID.
	NewSegment(ctx context.Context) (int64, error)
	// Scan calls fn for each postings row of segs, in term order; fn may
	// write through the Tx.
	Scan(ctx context.Context, segs []int64, fn func(term string, data []byte) error) error
	// WriteMerged stores rows of the merged segment (in term order, a batch
	// at a time). The old rows of those terms in segs are no longer needed.
	WriteMerged(ctx context.Context, segs []int64, rows []Row) error
	// FinishMerge replaces segs by into in the segment list: into's counts
	// are their sums, and their remaining postings rows are dropped.
	FinishMerge(ctx context.Context, segs []int64, into int64) error
}

// Delete removes chunks from the postings they were indexed in and from
// their segments' counts. Each affected row is read once and rewritten once.
func Delete(ctx context.Context, tx Tx, gone []Chunk) error {
	if len(gone) == 0 {
		return nil
	}
	drop := map[Key]map[int64]bool{}
	for _, c := range gone {
		for _, t := range c.Terms {
			k := Key{t, c.Seg}
			if drop[k] == nil {
				drop[k] = map[int64]bool{}
			}
			drop[k][c.ID] = true
		}
	}
	keys := make([]Key, 0, len(drop))
	for k := range drop {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b Key) int { return cmp.Or(cmp.Compare(a.Term, b.Term), cmp.Compare(a.Seg, b.Seg)) })
	segOf := map[int64]int64{} // chunk → segment, for chunks given without one
	var update []Row
	var remove []Key
	err := tx.Rows(ctx, keys, func(r Row) error {
		inSeg, anySeg := drop[Key{r.Term, r.Seg}], drop[Key{r.Term, 0}]
		ps, err := bm25.DecodeAll(r.Data)
		if err != nil {
			return fmt.Errorf("postings of %q: %w", r.Term, err)
		}
		kept := ps[:0]
		for _, p := range ps {
			id := int64(p.ID)
			switch {
			case inSeg[id]:
			case anySeg[id]:
				segOf[id] = r.Seg
			default:
				kept = append(kept, p)
			}
		}
		switch {
		case len(kept) == len(ps):
		case len(kept) == 0:
			remove = append(remove, Key{r.Term, r.Seg})
		default:
			update = append(update, Row{Term: r.Term, Seg: r.Seg, N: len(kept), Data: bm25.Encode(nil, kept)})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read postings: %w", err)
	}
	if len(update) > 0 {
		if err := tx.Update(ctx, update); err != nil {
			return fmt.Errorf("rewrite postings: %w", err)
		}
	}
	if len(remove) > 0 {
		if err := tx.Remove(ctx, remove); err != nil {
			return fmt.Errorf("delete postings: %w", err)
		}
	}
	shrink := map[int64]*Shrink{}
	for _, c := range gone {
		seg := c.Seg
		if seg == 0 {
			// Found in no row: the store does not know where a chunk
			// without terms went, and it cannot be counted out.
			if seg = segOf[c.ID]; seg == 0 {
				continue
			}
		}
		sh := shrink[seg]
		if sh == nil {
			sh = &Shrink{Seg: seg}
			shrink[seg] = sh
		}
		sh.Docs++
		for f, n := range c.Lens {
			sh.Tokens[f] += n
		}
	}
	by := make([]Shrink, 0, len(shrink))
	for _, sh := range shrink {
		by = append(by, *sh)
	}
	slices.SortFunc(by, func(a, b Shrink) int { return cmp.Compare(a.Seg, b.Seg) })
	if err := tx.Shrink(ctx, by); err != nil {
		return fmt.Errorf("update segment counts: %w", err)
	}
	return nil
}

// Due picks the segments to merge next (bm25.ToMerge), nil when none are.
func Due(ctx context.Context, tx Tx) ([]int64, error) {
	segs, err := tx.Segments(ctx)
	if err != nil {
		return nil, fmt.Errorf("list segments: %w", err)
	}
	return bm25.ToMerge(segs), nil
}

// Compact merges segments of a similar size until none are due. Each merge
// runs in a transaction of its own (begin), and its choice is made inside
// it, so concurrent writers never merge the same segments twice.
func Compact(ctx context.Context, batch int, begin func(context.Context, func(Tx) error) error) error {
	for {
		merged := false
		err := begin(ctx, func(tx Tx) error {
			segs, err := Due(ctx, tx)
			if err != nil || len(segs) == 0 {
				return err
			}
			merged = true
			return Merge(ctx, tx, segs, batch)
		})
		if err != nil {
			return fmt.Errorf("merge index segments: %w", err)
		}
		if !merged {
			return nil
		}
	}
}

// Merge rewrites the postings of segs as one new segment. Rows are read in
// term order and each term is merged as soon as its rows are read, so
// memory holds one term and at most batch merged rows at a time.
func Merge(ctx context.Context, tx Tx, segs []int64, batch int) error {
	into, err := tx.NewSegment(ctx)
	if err != nil {
		return err
	}
	var cur string     // the term whose lists are being collected
	var lists [][]byte // its lists so far
	out := make([]Row, 0, batch)
	emit := func() error {
		if len(lists) == 0 {
			return nil
		}
		data, n, err := bm25.MergeEncoded(lists...)
		if err != nil {
			return fmt.Errorf("postings of %q: %w", cur, err)
		}
		lists = lists[:0]
		out = append(out, Row{Term: cur, Seg: into, N: n, Data: data})
		if len(out) < batch {
			return nil
		}
		err = tx.WriteMerged(ctx, segs, out)
		out = out[:0]
		return err
	}
	err = tx.Scan(ctx, segs, func(term string, data []byte) error {
		if term != cur {
			if err := emit(); err != nil {
				return err
			}
			cur = term
		}
		lists = append(lists, data)
		return nil
	})
	if err != nil {
		return err
	}
	if err := emit(); err != nil {
		return err
	}
	if len(out) > 0 {
		if err := tx.WriteMerged(ctx, segs, out); err != nil {
			return err
		}
	}
	return tx.FinishMerge(ctx, segs, into)
}

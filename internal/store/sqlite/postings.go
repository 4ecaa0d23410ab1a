package sqlite

import (
	"cmp"
	"container/heap"
	"context"
	"database/sql"
	"strings"
)

// The postings table is written append-only (schema 7): its unique index
// is on (seg, term), and each batch writes a new segment whose number is
// above every other's, so its rows go at the end of the table and of the
// index instead of into the middle of a (term, seg) index all over. Reads
// by term name the segments: `seg IN (SELECT seg FROM segments) AND term
// = ?` looks the term up once per segment (a logarithmic number of them),
// and a scan in term order merges the segments' rows, each read in index
// order (eachPostingMerged).

// inSegments restricts a postings query to the index's segments, so that
// SQLite looks terms up through the (seg, term) index.
const inSegments = `seg IN (SELECT seg FROM segments)`

// eachPostingMerged calls fn for every postings row of segs in term
// order, the rows of a term together (in the order of segs): a k-way merge
// of the segments' rows, each segment read in (seg, term) index order.
// With raw set, data is read in place and valid only until fn returns;
// otherwise it is fn's to keep.
func eachPostingMerged(ctx context.Context, q querier, segs []int64, raw bool, fn func(term string, data []byte) error) error {
	h := &segHeap{}
	defer func() {
		for _, c := range h.cs {
			c.rows.Close()
		}
	}()
	for i, seg := range segs {
		rows, err := q.QueryContext(ctx, `SELECT term, data FROM postings WHERE seg = ? ORDER BY term`, seg)
		if err != nil {
			return err
		}
		c := &segCursor{rows: rows, order: i, raw: raw}
		ok, err := c.advance()
		if err != nil {
			rows.Close()
			return err
		}
		if !ok {
			rows.Close()
			continue
		}
		h.cs = append(h.cs, c)
	}
	heap.Init(h)
	for len(h.cs) > 0 {
		c := h.cs[0]
		if err := fn(c.term, c.data); err != nil {
			return err
		}
		ok, err := c.advance()
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(h, 0)
		} else {
			c.rows.Close()
			heap.Pop(h)
		}
	}
	return nil
}

// segCursor is one segment's rows in term order.
type segCursor struct {
	rows  *sql.Rows
	order int // the segment's place in the list: ties between segments go by it
	raw   bool
	term  string
	data  []byte
	bterm sql.RawBytes
	bdata sql.RawBytes
}

// advance reads the next row; false at the end.
func (c *segCursor) advance() (bool, error) {
	if !c.rows.Next() {
		return false, c.rows.Err()
	}
	if c.raw {
		if err := c.rows.Scan(&c.bterm, &c.bdata); err != nil {
			return false, err
		}
		if string(c.bterm) != c.term {
			c.term = string(c.bterm)
		}
		c.data = c.bdata
		return true, nil
	}
	var data []byte
	if err := c.rows.Scan(&c.term, &data); err != nil {
		return false, err
	}
	c.data = data
	return true, nil
}

// segHeap orders cursors by their current term, then by segment.
type segHeap struct{ cs []*segCursor }

func (h *segHeap) Len() int { return len(h.cs) }
func (h *segHeap) Less(i, j int) bool {
	a, b := h.cs[i], h.cs[j]
	return cmp.Or(strings.Compare(a.term, b.term), cmp.Compare(a.order, b.order)) < 0
}
func (h *segHeap) Swap(i, j int) { h.cs[i], h.cs[j] = h.cs[j], h.cs[i] }
func (h *segHeap) Push(x any)    { h.cs = append(h.cs, x.(*segCursor)) }
func (h *segHeap) Pop() any {
	c := h.cs[len(h.cs)-1]
	h.cs = h.cs[:len(h.cs)-1]
	return c
}

// segmentIDs returns the index's segments in ID order.
func segmentIDs(ctx context.Context, q querier) ([]int64, error) {
	rows, err := q.QueryContext(ctx, `SELECT seg FROM segments ORDER BY seg`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var segs []int64
	for rows.Next() {
		var s int64
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		segs = append(segs, s)
	}
	return segs, rows.Err()
}

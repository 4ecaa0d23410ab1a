package segment

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/store/bm25"
)

// memTx is segment.Tx over maps, the simplest store there can be.
type memTx struct {
	rows   map[Key]Row
	segs   map[int64]*Shrink // docs and tokens per segment
	next   int64
	writes int // WriteMerged calls
}

// bodyLen is the field lengths of a chunk whose n terms are all body text.
func bodyLen(n int64) [bm25.NumFields]int64 {
	var l [bm25.NumFields]int64
	l[bm25.Body] = n
	return l
}

func newMem() *memTx { return &memTx{rows: map[Key]Row{}, segs: map[int64]*Shrink{}} }

// add writes one batch of chunks (id → terms) as a new segment.
func (m *memTx) add(chunks map[int64][]string) int64 {
	m.next++
	seg := m.next
	b := bm25.NewBuilder()
	for _, id := range slices.Sorted(maps.Keys(chunks)) {
		b.Add(uint64(id), chunks[id])
	}
	for _, t := range b.Terms() {
		ps := b.Postings(t)
		m.rows[Key{t, seg}] = Row{Term: t, Seg: seg, N: len(ps), Data: bm25.Encode(nil, ps)}
	}
	m.segs[seg] = &Shrink{Seg: seg, Docs: b.Docs, Tokens: b.Tokens}
	return seg
}

func (m *memTx) Rows(_ context.Context, keys []Key, fn func(Row) error) error {
	for _, r := range m.sorted() {
		for _, k := range keys {
			if k.Term == r.Term && (k.Seg == 0 || k.Seg == r.Seg) {
				if err := fn(r); err != nil {
					return err
				}
				break
			}
		}
	}
	return nil
}

func (m *memTx) Update(_ context.Context, rows []Row) error {
	for _, r := range rows {
		m.rows[Key{r.Term, r.Seg}] = r
	}
	return nil
}

func (m *memTx) Remove(_ context.Context, keys []Key) error {
	for _, k := range keys {
		delete(m.rows, k)
	}
	return nil
}

func (m *memTx) Shrink(_ context.Context, by []Shrink) error {
	for _, sh := range by {
		if s := m.segs[sh.Seg]; s != nil {
			s.Docs -= sh.Docs
			for f := range s.Tokens {
				s.Tokens[f] -= sh.Tokens[f]
			}
			if s.Docs <= 0 {
				delete(m.segs, sh.Seg)
			}
		}
	}
	return nil
}

func (m *memTx) Segments(context.Context) ([]bm25.Segment, error) {
	var out []bm25.Segment
	for _, id := range slices.Sorted(maps.Keys(m.segs)) {
		out = append(out, bm25.Segment{ID: id, Docs: m.segs[id].Docs})
	}
	return out, nil
}

func (m *memTx) NewSegment(context.Context) (int64, error) { m.next++; return m.next, nil }

func (m *memTx) Scan(_ context.Context, segs []int64, fn func(string, []byte) error) error {
	for _, r := range m.sorted() {
		if slices.Contains(segs, r.Seg) {
			if err := fn(r.Term, r.Data); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m *memTx) WriteMerged(_ context.Context, _ []int64, rows []Row) error {
	m.writes++
	for _, r := range rows {
		m.rows[Key{r.Term, r.Seg}] = r
	}
	return nil
}

func (m *memTx) FinishMerge(_ context.Context, segs []int64, into int64) error {
	sum := &Shrink{Seg: into}
	for k := range m.rows {
		if slices.Contains(segs, k.Seg) {
			delete(m.rows, k)
		}
	}
	for _, s := range segs {
		sum.Docs += m.segs[s].Docs
		for f := range sum.Tokens {
			sum.Tokens[f] += m.segs[s].Tokens[f]
		}
		delete(m.segs, s)
	}
	m.segs[into] = sum
	return nil
}

func (m *memTx) sorted() []Row {
	rows := slices.Collect(maps.Values(m.rows))
	slices.SortFunc(rows, func(a, b Row) int { return cmp.Or(cmp.Compare(a.Term, b.Term), cmp.Compare(a.Seg, b.Seg)) })
	return rows
}

// postings returns every term's postings, whatever segments they are in.
func (m *memTx) postings(t *testing.T) map[string][]bm25.Posting {
	out := map[string][]bm25.Posting{}
	for _, r := range m.sorted() {
		ps, err := bm25.DecodeAll(r.Data)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != r.N {
			t.Errorf("row %q/%d says %d postings, holds %d", r.Term, r.Seg, r.N, len(ps))
		}
		out[r.Term] = append(out[r.Term], ps...)
	}
	for t := range out {
		slices.SortFunc(out[t], func(a, b bm25.Posting) int { return cmp.Compare(a.ID, b.ID) })
	}
	return out
}

func (m *memTx) totals() (docs int, tokens int64) {
	for _, s := range m.segs {
		docs += s.Docs
		for _, n := range s.Tokens {
			tokens += n
		}
	}
	return docs, tokens
}

// batches are chunk batches with overlapping vocabularies.
func batches(n int) []map[int64][]string {
	words := []string{"alpha", "beta", "gamma", "delta", "epsilon"}
	var out []map[int64][]string
	id := int64(0)
	for i := range n {
		b := map[int64][]string{}
		for j := range 3 {
			id++
			b[id] = []string{words[(i+j)%5], words[(i*j)%5], fmt.Sprintf("only%d", id)}
		}
		out = append(out, b)
	}
	return out
}

func TestMergeKeepsEveryPostingWhateverTheBatch(t *testing.T) {
	ctx := context.Background()
	want := newMem()
	for _, b := range batches(bm25.MergeFactor) {
		want.add(b)
	}
	for _, batch := range []int{1, 2, 7, 1000} {
		m := newMem()
		for _, b := range batches(bm25.MergeFactor) {
			m.add(b)
		}
		if err := Compact(ctx, batch, func(ctx context.Context, fn func(Tx) error) error { return fn(m) }); err != nil {
			t.Fatal(err)
		}
		if len(m.segs) != 1 {
			t.Errorf("batch %d: %d segments after compaction of %d, want 1", batch, len(m.segs), bm25.MergeFactor)
		}
		if got, exp := m.postings(t), want.postings(t); !maps.EqualFunc(got, exp, slices.Equal) {
			t.Errorf("batch %d: merged postings differ from the unmerged ones", batch)
		}
		if d, tk := m.totals(); d != 3*bm25.MergeFactor || tk != 9*bm25.MergeFactor {
			t.Errorf("batch %d: merged segment counts %d chunks, %d tokens", batch, d, tk)
		}
		if terms := len(m.rows); batch < terms && m.writes < terms/batch {
			t.Errorf("batch %d: %d rows written in %d calls", batch, terms, m.writes)
		}
	}
}

func TestDeleteCountsOutEveryChunk(t *testing.T) {
	ctx := context.Background()
	m := newMem()
	bs := batches(3)
	segs := []int64{m.add(bs[0]), m.add(bs[1]), m.add(bs[2])}
	// A chunk without terms counts in its segment as well.
	m.segs[segs[2]].Docs++
	gone := []Chunk{
		{ID: 1, Lens: bodyLen(3), Terms: slices.Compact(slices.Sorted(slices.Values(bs[0][1])))}, // segment learnt from its rows
		{ID: 5, Seg: segs[1], Lens: bodyLen(3), Terms: slices.Compact(slices.Sorted(slices.Values(bs[1][5])))},
		{ID: 99, Seg: segs[2], Lens: bodyLen(0)}, // no terms: only its recorded segment knows it
	}
	if err := Delete(ctx, m, gone); err != nil {
		t.Fatal(err)
	}
	for term, ps := range m.postings(t) {
		for _, p := range ps {
			if p.ID == 1 || p.ID == 5 {
				t.Errorf("deleted chunk %d still in the postings of %q", p.ID, term)
			}
		}
	}
	if _, ok := m.rows[Key{"only1", segs[0]}]; ok {
		t.Errorf("a row left empty by the delete is still stored")
	}
	want := map[int64]int{segs[0]: 2, segs[1]: 2, segs[2]: 3}
	for seg, docs := range want {
		if m.segs[seg].Docs != docs || m.segs[seg].Tokens != bodyLen(int64(3*docs)) {
			t.Errorf("segment %d counts %d chunks, %d tokens; want %d, %d", seg, m.segs[seg].Docs, m.segs[seg].Tokens[bm25.Body], docs, 3*docs)
		}
	}
}

package bm25

// Counter is Count for a loop over many chunks: it keeps its lookup table
// between calls, so tallying a chunk does not grow a new map each time. A
// Counter is used by one goroutine at a time; its zero value is ready.
type Counter struct {
	idx map[string]int32
}

// counterMaxKeep is the most distinct terms a Counter's table keeps room
// for between calls; after a bigger chunk it starts a small table again,
// since clearing a table costs time in proportion to its size.
const counterMaxKeep = 1 << 12

// Count returns what Count(fields) returns, with the terms appended to
// dst[:0] (dst may be the Terms of an earlier result that is no longer
// needed, to reuse its memory).
func (c *Counter) Count(dst []TermCount, fields [NumFields][]string) Counts {
	if c.idx == nil {
		c.idx = make(map[string]int32, 256)
	}
	idx := c.idx
	out := Counts{Terms: dst[:0]}
	for f, terms := range fields {
		out.Len[f] = uint32(len(terms))
		for _, t := range terms {
			i, ok := idx[t]
			if !ok {
				i = int32(len(out.Terms))
				idx[t] = i
				out.Terms = append(out.Terms, TermCount{Term: t})
			}
			out.Terms[i].N[f]++
		}
	}
	if len(idx) > counterMaxKeep {
		c.idx = nil
	} else {
		clear(idx)
	}
	return out
}

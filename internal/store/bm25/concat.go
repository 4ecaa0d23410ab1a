package bm25

import "encoding/binary"

// MergeEncoded is Merge for the lists a segment merge reads, which hold
// disjoint ID ranges: it returns the same bytes as Merge without decoding a
// posting. Lists are put in order of their first ID and copied whole; only
// the first ID delta of each list after the first is rewritten, against
// the last ID of the one before. Lists whose ranges overlap or touch (which a
// well-formed index never has) are left to Merge.
func MergeEncoded(lists ...[]byte) ([]byte, int, error) {
	type part struct {
		data        []byte
		n           int
		first, last uint64
	}
	parts := make([]part, 0, len(lists))
	total, size := 0, 0
	for _, l := range lists {
		n, first, last, err := scan(l)
		if err != nil {
			return nil, 0, err
		}
		if n == 0 {
			continue
		}
		// Insertion sort by first ID, stable like Merge's sort: a merge
		// has a handful of lists, usually in order already.
		i := len(parts)
		parts = append(parts, part{})
		for i > 0 && parts[i-1].first > first {
			parts[i] = parts[i-1]
			i--
		}
		parts[i] = part{l, n, first, last}
		total += n
		size += len(l)
	}
	for i := 1; i < len(parts); i++ {
		if parts[i].first <= parts[i-1].last {
			return Merge(lists...)
		}
	}
	out := make([]byte, 0, size)
	var prev uint64
	for i, p := range parts {
		data := p.data
		if i > 0 {
			// The list's first ID is stored whole (its delta from 0):
			// restate it as a delta from the previous list's last ID.
			_, k := binary.Uvarint(data)
			out = binary.AppendUvarint(out, p.first-prev)
			data = data[k:]
		}
		out = append(out, data...)
		prev = p.last
	}
	return out, total, nil
}

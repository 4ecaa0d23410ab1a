package qdrant

import (
	"encoding/base64"
	"encoding/binary"
	"errors"

	"github.com/sagasu-dev/sagasu/internal/store/bm25"
)

// The "fc" payload field holds what exact keyword scoring needs of a
// chunk in one string, so that a search decodes one payload value per
// candidate instead of some four hundred (each term a string value and
// three integer values): the base64 (standard, unpadded: payload strings
// must be UTF-8) of
//
//	the fields' lengths in terms: title, heading, body (uvarints)
//	per distinct term, in sorted order: its length, its bytes, a byte
//	whose bit f says field f holds it, and the term's frequency in each
//	such field (uvarints)
//
// bm25's postings use the same field mask.

// encodeFieldCounts returns the "fc" string of a chunk's counts (terms
// sorted, as segment.Analyse makes them).
func encodeFieldCounts(c bm25.Counts) string {
	b := make([]byte, 0, 16+12*len(c.Terms))
	for _, l := range c.Len {
		b = binary.AppendUvarint(b, uint64(l))
	}
	for _, t := range c.Terms {
		b = binary.AppendUvarint(b, uint64(len(t.Term)))
		b = append(b, t.Term...)
		var mask byte
		for f, n := range t.N {
			if n > 0 {
				mask |= 1 << f
			}
		}
		b = append(b, mask)
		for _, n := range t.N {
			if n > 0 {
				b = binary.AppendUvarint(b, uint64(n))
			}
		}
	}
	return base64.RawStdEncoding.EncodeToString(b)
}

var errFieldCounts = errors.New("qdrant: a chunk payload \"fc\" does not decode")

// fieldCounts reads an "fc" string: the fields' lengths, and for each of
// terms (sorted) that the chunk holds, its frequency per field; want[i]
// is filled for terms[i]. buf is scratch space, returned for reuse.
func fieldCounts(fc string, terms []string, want [][bm25.NumFields]uint32, buf []byte) (dl [bm25.NumFields]uint32, out []byte, err error) {
	n := base64.RawStdEncoding.DecodedLen(len(fc))
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := base64.RawStdEncoding.Decode(buf, []byte(fc)); err != nil {
		return dl, buf, errFieldCounts
	}
	d := buf
	uv := func() (uint64, bool) {
		v, k := binary.Uvarint(d)
		if k <= 0 {
			return 0, false
		}
		d = d[k:]
		return v, true
	}
	for f := range bm25.NumFields {
		v, ok := uv()
		if !ok {
			return dl, buf, errFieldCounts
		}
		dl[f] = uint32(v)
	}
	clear(want)
	next := 0 // terms[next:] are still to be met
	for len(d) > 0 && next < len(terms) {
		l, ok := uv()
		if !ok || l >= uint64(len(d)) {
			return dl, buf, errFieldCounts
		}
		term := d[:l]
		mask := d[l]
		d = d[l+1:]
		if mask>>bm25.NumFields != 0 {
			return dl, buf, errFieldCounts
		}
		// Both lists are sorted: step the query terms past this one.
		for next < len(terms) && terms[next] < string(term) {
			next++
		}
		hit := next < len(terms) && terms[next] == string(term)
		for f := range bm25.NumFields {
			if mask&(1<<f) == 0 {
				continue
			}
			v, ok := uv()
			if !ok {
				return dl, buf, errFieldCounts
			}
			if hit {
				want[next][f] = uint32(v)
			}
		}
	}
	return dl, buf, nil
}

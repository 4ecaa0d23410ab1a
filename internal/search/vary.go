package search

import (
	"slices"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/doc"
)

// DefaultPerSource is how many hits of one source a ranking shows before
// the hits of other sources, unless the request says otherwise: one page
// should not fill the results with its sections.
const DefaultPerSource = 2

// maxMergedBytes bounds the text of a hit made of merged sections.
const maxMergedBytes = 6000

// candidates is how many results to rank to fill k varied ones: a few more
// than k, so that hits held back from a crowded source have others to
// take their places.
func candidates(k int) int {
	return min(MaxK, max(k, min(3*k, k+20)))
}

// spanText returns the text of a source from byte start to end, false
// when it cannot.
type spanText func(sourceID string, start, end int) (string, bool)

// vary makes the ranking of hits (best first) varied: a hit whose text
// overlaps that of a better hit of the same source, or that is the next or
// the previous piece of the same section (with only white space between),
// is merged into it (one hit with the text of both, up to maxMergedBytes,
// read with text; the better hit's ID and heading path), and past
// perSource hits of one source the rest of that source's hits go after
// every other source's. Distinct sections are never merged: a hit points
// at the section that answers. short reports that fewer than k hits came
// before the held-back ones: a deeper ranking may have more sources. It returns at most k hits. The order of the
// first k is the same for any k, so pages of a ranking agree.
func vary(hits []doc.Hit, perSource, k int, text spanText) (out []doc.Hit, short bool) {
	kept := make([]doc.Hit, 0, min(k, len(hits)))
	var later []doc.Hit
	count := map[string]int{}
	for _, h := range hits {
		if mergeInto(kept, h, text) || mergeInto(later, h, text) {
			continue
		}
		if count[h.Source.ID] >= perSource {
			later = append(later, h)
			continue
		}
		count[h.Source.ID]++
		kept = append(kept, h)
	}
	short = len(kept) < k && len(later) > 0
	kept = append(kept, later...)
	return kept[:min(k, len(kept))], short
}

// mergeInto merges h into the hit of its source in hits whose text
// overlaps its own, or that is a touching piece of the same section, and
// reports whether it did.
func mergeInto(hits []doc.Hit, h doc.Hit, text spanText) bool {
	for i := range hits {
		b := &hits[i]
		if b.Source.ID != h.Source.ID || !spanned(b.Chunk) || !spanned(h.Chunk) {
			continue
		}
		overlap := b.Chunk.StartByte < h.Chunk.EndByte && h.Chunk.StartByte < b.Chunk.EndByte
		piece := slices.Equal(b.Chunk.Heading, h.Chunk.Heading) &&
			b.Chunk.StartLine <= h.Chunk.EndLine+2 && h.Chunk.StartLine <= b.Chunk.EndLine+2
		if !overlap && !piece {
			continue
		}
		start, end := min(b.Chunk.StartByte, h.Chunk.StartByte), max(b.Chunk.EndByte, h.Chunk.EndByte)
		if end-start > maxMergedBytes {
			return false
		}
		t, ok := text(h.Source.ID, start, end)
		if !ok || !blankBetween(t, b.Chunk, h.Chunk, start) {
			return false
		}
		b.Chunk = merge(b.Chunk, h.Chunk, t, start)
		return true
	}
	return false
}

// spanned reports whether a chunk's text is its byte span of the source,
// as every chunk the chunkers make is (Chunk.Text).
func spanned(c doc.Chunk) bool {
	return c.EndByte > c.StartByte && c.EndByte-c.StartByte == len(c.Text)
}

// blankBetween reports whether only white space lies between two chunks
// in t, the source's text from byte start.
func blankBetween(t string, a, b doc.Chunk, start int) bool {
	if b.StartByte < a.StartByte {
		a, b = b, a
	}
	if b.StartByte <= a.EndByte {
		return true // they overlap
	}
	return strings.TrimSpace(t[a.EndByte-start:b.StartByte-start]) == ""
}

// merge joins two chunks of one source that overlap or touch into the text
// t (from byte start): the lines of both, a's ID and heading path.
func merge(a, b doc.Chunk, t string, start int) doc.Chunk {
	out := a
	out.Text = t
	out.StartByte, out.EndByte = start, start+len(t)
	out.StartLine, out.EndLine = min(a.StartLine, b.StartLine), max(a.EndLine, b.EndLine)
	out.Tokens = a.Tokens + b.Tokens
	return out
}

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

// vary makes the ranking of hits (best first) varied: a hit whose lines
// overlap or follow those of a better hit of the same source (with at most
// a blank line between) is merged into it (one hit with the text from the
// first to the last line of both, up to maxMergedBytes, read with text),
// and past perSource hits of one source the rest of that source's hits go
// after every other source's. It returns at most k hits. The order of the
// first k is the same for any k, so pages of a ranking agree.
func vary(hits []doc.Hit, perSource, k int, text spanText) []doc.Hit {
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
	kept = append(kept, later...)
	return kept[:min(k, len(kept))]
}

// mergeInto merges h into the hit of its source in hits whose lines
// overlap or touch its own, and reports whether it did.
func mergeInto(hits []doc.Hit, h doc.Hit, text spanText) bool {
	for i := range hits {
		b := &hits[i]
		if b.Source.ID != h.Source.ID || b.Chunk.StartLine > h.Chunk.EndLine+2 || h.Chunk.StartLine > b.Chunk.EndLine+2 {
			continue
		}
		if !spanned(b.Chunk) || !spanned(h.Chunk) {
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
// t (from byte start): the lines of both, the heading path they share (a's
// when they share none), a's ID.
func merge(a, b doc.Chunk, t string, start int) doc.Chunk {
	out := a
	out.Text = t
	out.StartByte, out.EndByte = start, start+len(t)
	out.StartLine, out.EndLine = min(a.StartLine, b.StartLine), max(a.EndLine, b.EndLine)
	out.Tokens = a.Tokens + b.Tokens
	n := 0
	for n < len(a.Heading) && n < len(b.Heading) && a.Heading[n] == b.Heading[n] {
		n++
	}
	if n > 0 {
		out.Heading = slices.Clone(a.Heading[:n])
	}
	return out
}

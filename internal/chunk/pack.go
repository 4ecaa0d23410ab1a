package chunk

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// A kind says how a span that is too big is cut into smaller parts. Kinds are
// ordered from coarse to fine: every cut yields parts of a finer kind, so
// cutting always ends, at single bytes at the latest.
type kind int

const (
	kMarkdown  kind = iota // markdown section(s): blocks
	kText                  // plain text: paragraphs
	kCodeDoc               // source code: top-level blocks
	kCodeBlock             // one code block: lines, preferring shallow ones
	kProse                 // a paragraph: sentences
	kSentence              // a sentence: lines
	kLines                 // a code block, table or front matter: lines
	kLine                  // one line: words
	kWord                  // one word: groups of a few runes
	kRunes                 // a few runes: single runes
	kRune                  // one rune: bytes
	kByte                  // one byte: cannot be cut
)

// Boundary strengths: the lower, the better a place to end a chunk.
const (
	brkHeading  = 0  // before a markdown heading
	brkBlock    = 5  // between paragraphs, list items, code blocks, top-level code
	brkCode     = 10 // between lines of code; + 2 per nesting level, + 1 if no blank line
	brkSentence = 60
	brkLineGap  = 61 // before a line that follows a blank line
	brkLine     = 63
	brkWord     = 70
	brkRunes    = 80
	brkRune     = 90
	brkByte     = 99
)

// runesPerGroup is how many runes an overlong word is first cut into.
const runesPerGroup = 8

// An atom is a span that fits MaxTokens and is not cut further; brk is the
// strength of the boundary at its start.
type atom struct {
	start, end int
	brk        int
}

// A part is one piece of a cut: a span, how to cut it further and the
// strength of the boundary at its start.
type part struct {
	start, end int
	k          kind
	brk        int
}

// atomize appends to atoms the spans that [a, b) is cut into, each small
// enough to fit on its own; brk is the strength of the boundary at a.
func (s *splitter) atomize(atoms []atom, a, b int, k kind, brk int) ([]atom, error) {
	if s.fits(a, b) {
		return append(atoms, atom{a, b, brk}), nil
	}
	return s.atomizeParts(atoms, a, b, k, brk)
}

// atomizeParts is atomize for a span known not to fit: it cuts [a, b) the
// way kind k says and atomizes the parts.
func (s *splitter) atomizeParts(atoms []atom, a, b int, k kind, brk int) ([]atom, error) {
	if k >= kByte || b-a <= 1 {
		return atoms, fmt.Errorf("%w: the byte %q at offset %d counts %d tokens, more than MaxTokens %d",
			errTooSmall, s.src[a:b], a, s.count(s.trim(a, b)), s.opt.MaxTokens)
	}
	for i, p := range s.cut(k, a, b) {
		if p.k <= k { // never happens; guards against cutting forever
			p.k = k + 1
		}
		if i == 0 {
			p.brk = brk
		}
		var err error
		if atoms, err = s.atomize(atoms, p.start, p.end, p.k, p.brk); err != nil {
			return atoms, err
		}
	}
	return atoms, nil
}

// cut splits [a, b) the way kind k says; the parts tile [a, b).
func (s *splitter) cut(k kind, a, b int) []part {
	switch k {
	case kMarkdown:
		return s.markdownBlocks(a, b)
	case kText:
		return s.paragraphs(a, b)
	case kCodeDoc:
		return s.codeTopLevel(a, b)
	case kCodeBlock:
		return s.codeLines(a, b)
	case kProse:
		return s.sentences(a, b)
	case kSentence, kLines:
		return s.lines(a, b)
	case kLine:
		return s.words(a, b)
	case kWord:
		return s.runeGroups(a, b, runesPerGroup, kRunes, brkRunes)
	case kRunes:
		return s.runeGroups(a, b, 1, kRune, brkRune)
	default:
		parts := make([]part, 0, b-a)
		for i := a; i < b; i++ {
			parts = append(parts, part{i, i + 1, kByte, brkByte})
		}
		return parts
	}
}

// cutter collects the parts of a span as cut points are found.
type cutter struct {
	parts []part
	start int
	k     kind
	brk   int
}

func newCutter(a int, k kind) *cutter { return &cutter{start: a, k: k} }

// at ends the current part at i and starts one of kind k there, with a
// boundary of strength brk. A cut at the start of the current part only
// changes that part's kind (and keeps the stronger boundary).
func (c *cutter) at(i int, k kind, brk int) {
	if i <= c.start {
		c.k = k
		c.brk = min(c.brk, brk)
		return
	}
	c.parts = append(c.parts, part{c.start, i, c.k, c.brk})
	c.start, c.k, c.brk = i, k, brk
}

// done ends the last part at b and returns all parts.
func (c *cutter) done(b int) []part {
	if b > c.start || len(c.parts) == 0 {
		c.parts = append(c.parts, part{c.start, b, c.k, c.brk})
	}
	return c.parts
}

// runeGroups cuts [a, b) after every n runes (invalid bytes count as runes).
func (s *splitter) runeGroups(a, b, n int, k kind, brk int) []part {
	c := newCutter(a, k)
	count := 0
	for i := a; i < b; {
		if count == n {
			c.at(i, k, brk)
			count = 0
		}
		_, size := utf8.DecodeRuneInString(s.src[i:b])
		i += size
		count++
	}
	return c.done(b)
}

// pack groups consecutive atoms into chunks of at most MaxTokens, ending each
// chunk at the strongest boundary in its second half, and starts each chunk
// after the first with up to Overlap tokens from the end of the one before.
func (s *splitter) pack(atoms []atom, heading []string, code bool) {
	prevA, prevB, prevI := -1, -1, 0
	for i := 0; i < len(atoms); {
		start := atoms[i].start
		m := i
		if prevB >= 0 && s.opt.Overlap > 0 {
			if p := s.overlapStart(prevA, prevB, atoms[prevI:i], code); p < start {
				start = p
				m = s.maxFit(atoms, start, i)
			}
		}
		if m == i { // no overlap, or the overlap left no room
			start = atoms[i].start
			m = s.maxFit(atoms, start, i)
		}
		e := s.preferredEnd(atoms, start, i, m)
		a, b := s.trim(start, atoms[e-1].end)
		if a < b {
			s.add(a, b, heading, s.count(a, b))
			prevA, prevB, prevI = a, b, i
		}
		i = e
	}
}

// maxFit returns the largest m such that src[start:atoms[m-1].end] fits,
// searching by doubling then bisecting. It returns i if not even atom i fits
// after start. Every m it returns was checked.
func (s *splitter) maxFit(atoms []atom, start, i int) int {
	if !s.fits(start, atoms[i].end) {
		return i
	}
	lo, hi := i+1, len(atoms)+1 // atoms up to lo fit; up to hi do not (or are out of range)
	for step := 1; lo < len(atoms); step *= 2 {
		m := min(lo+step, len(atoms))
		if !s.fits(start, atoms[m-1].end) {
			hi = m
			break
		}
		lo = m
	}
	for hi-lo > 1 && lo < len(atoms) {
		m := (lo + hi) / 2
		if s.fits(start, atoms[m-1].end) {
			lo = m
		} else {
			hi = m
		}
	}
	return lo
}

// preferredEnd picks where the chunk of atoms[i:m] (starting at start) ends:
// at the strongest boundary whose chunk still has at least half the bytes of
// the longest one, the later one on ties.
func (s *splitter) preferredEnd(atoms []atom, start, i, m int) int {
	if m >= len(atoms) {
		return len(atoms)
	}
	full := atoms[m-1].end - start
	best, bestBrk := m, atoms[m].brk
	for e := m - 1; e > i; e-- {
		if 2*(atoms[e-1].end-start) < full {
			break
		}
		if atoms[e].brk < bestBrk {
			best, bestBrk = e, atoms[e].brk
		}
	}
	return best
}

// overlapStart returns where the overlap taken from the chunk src[pa:pb]
// begins. The overlap is the longest tail of the chunk that counts at most
// Overlap tokens, shortened to start at the strongest boundary between the
// chunk's atoms that lies in it; failing that, at the first line or sentence
// start in it; failing that (and not in code, where only whole lines are
// repeated), at the first word start if that keeps at least half of it, or
// anywhere. It returns pb if no overlap fits or the overlap would hold no
// letter or digit.
func (s *splitter) overlapStart(pa, pb int, atoms []atom, code bool) int {
	fitsOv := func(p int) bool {
		a, b := s.trim(p, pb)
		return s.count(a, b) <= s.opt.Overlap
	}
	// Find the earliest fitting rune start in (pa, pb): double the distance
	// back from pb, then bisect.
	good, bad := pb, pa // good fits; bad does not, or is pa itself
	for step := 1; ; step *= 2 {
		p := s.runeStartAtOrAfter(max(pb-step, pa+1), good)
		if p < good {
			if !fitsOv(p) {
				bad = p
				break
			}
			good = p
		}
		if pb-step <= pa+1 {
			break
		}
	}
	for {
		mid := s.runeStartAtOrAfter(bad+(good-bad)/2, good)
		if mid <= bad {
			mid = s.runeStartAtOrAfter(bad+1, good)
		}
		if mid >= good {
			break
		}
		if fitsOv(mid) {
			good = mid
		} else {
			bad = mid
		}
	}
	if good >= pb || !hasWordChar(s.src[good:pb]) {
		return pb // nothing, or only punctuation such as a closing fence
	}
	best, bestBrk := -1, 0
	for _, a := range atoms {
		if a.start >= good && a.start > pa && a.start < pb && (best < 0 || a.brk < bestBrk) {
			best, bestBrk = a.start, a.brk
		}
	}
	if best >= 0 {
		if !hasWordChar(s.src[best:pb]) || !fitsOv(best) {
			return pb
		}
		return best
	}
	// Prefer whole lines or sentences; else whole words if that keeps half
	// of the overlap; else cut inside a word.
	for q := good; q < pb; q++ {
		if s.isLineStart(q) || (!code && s.isSentenceStart(q)) {
			if !hasWordChar(s.src[q:pb]) {
				return pb
			}
			if fitsOv(q) {
				return q
			}
			break
		}
	}
	if code {
		return pb
	}
	for q := good; 2*(pb-q) >= pb-good; q++ {
		if s.isWordStart(q) {
			if fitsOv(q) {
				return q
			}
			break
		}
	}
	return good
}

// runeStartAtOrAfter moves i forward, up to limit, to the first byte of a rune.
// Invalid bytes are runes of their own, so it moves at most three bytes.
func (s *splitter) runeStartAtOrAfter(i, limit int) int {
	for k := 1; k < utf8.UTFMax && i < limit && !utf8.RuneStart(s.src[i]); k++ {
		i++
	}
	return i
}

// hasWordChar reports whether t holds a letter or digit.
func hasWordChar(t string) bool {
	for _, r := range t {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

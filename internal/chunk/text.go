package chunk

import (
	"strings"
	"unicode/utf8"
)

// This file holds the cuts shared by all formats: paragraphs, sentences,
// lines and words, and the places an overlap may start.

// nextLine returns the offset just after the line that starts at i: after
// its '\n', or b.
func (s *splitter) nextLine(i, b int) int {
	if j := strings.IndexByte(s.src[i:b], '\n'); j >= 0 {
		return i + j + 1
	}
	return b
}

// isBlank reports whether t is empty or only white space.
func isBlank(t string) bool { return skip(t, 0, isSpaceRune) == len(t) }

// paragraphs cuts [a, b) before each line that follows a blank line.
func (s *splitter) paragraphs(a, b int) []part {
	c := newCutter(a, kProse)
	blank := false
	for i := a; i < b; {
		j := s.nextLine(i, b)
		if isBlank(s.src[i:j]) {
			blank = true
		} else {
			if blank {
				c.at(i, kProse, brkBlock)
			}
			blank = false
		}
		i = j
	}
	return c.done(b)
}

// lines cuts [a, b) after every newline.
func (s *splitter) lines(a, b int) []part {
	c := newCutter(a, kLine)
	prevBlank := false
	for i := a; i < b; {
		j := s.nextLine(i, b)
		if i > a {
			brk := brkLine
			if prevBlank {
				brk = brkLineGap
			}
			c.at(i, kLine, brk)
		}
		prevBlank = isBlank(s.src[i:j])
		i = j
	}
	return c.done(b)
}

// sentences cuts [a, b) after sentence ends: '.', '!' or '?' followed by
// white space, or '。', '！', '？' or '．', each maybe followed by closing
// quotes or brackets. The white space after the end stays with the sentence.
func (s *splitter) sentences(a, b int) []part {
	c := newCutter(a, kSentence)
	for i := a; i < b; {
		r, size := utf8.DecodeRuneInString(s.src[i:b])
		i += size
		needSpace := false
		switch r {
		case '.', '!', '?':
			needSpace = true
		case '。', '！', '？', '．':
		default:
			continue
		}
		j := skip(s.src[:b], i, isCloser)
		k := skip(s.src[:b], j, isSpaceRune)
		if needSpace && k == j {
			continue
		}
		if k < b {
			c.at(k, kSentence, brkSentence)
		}
		i = k
	}
	return c.done(b)
}

// words cuts [a, b) before each word: after white space, after a comma or
// semicolon, and where CJK text meets other text.
func (s *splitter) words(a, b int) []part {
	c := newCutter(a, kWord)
	var prev rune
	prevSpace, prevCJK := false, false
	for i := a; i < b; {
		r, size := utf8.DecodeRuneInString(s.src[i:b])
		space := isSpaceRune(r, size)
		cjk := isCJK(r)
		if i > a && !space && (prevSpace || cjk != prevCJK || isClauseEnd(prev)) {
			c.at(i, kWord, brkWord)
		}
		prev, prevSpace, prevCJK = r, space, cjk
		i += size
	}
	return c.done(b)
}

// isCloser reports whether r closes a quote or bracket (or emphasis) that
// may follow the end of a sentence.
func isCloser(r rune, _ int) bool {
	switch r {
	case ')', ']', '"', '\'', '*', '_', '`', '”', '’', '»', '」', '』', '）', '】', '〕', '》', '〉':
		return true
	}
	return false
}

// isClauseEnd reports whether a word may start right after r with no space.
func isClauseEnd(r rune) bool {
	switch r {
	case ',', ';', '、', '，', '；', '：':
		return true
	}
	return false
}

// isCJK reports whether r is a Chinese, Japanese or Korean character or
// punctuation mark; such text has no spaces between words.
func isCJK(r rune) bool {
	switch {
	case r < 0x2E80:
		return false
	case r <= 0x9FFF: // radicals, CJK punctuation, kana, CJK ideographs
		return true
	case r >= 0xAC00 && r <= 0xD7AF, // Hangul syllables
		r >= 0xF900 && r <= 0xFAFF,   // compatibility ideographs
		r >= 0xFF00 && r <= 0xFFEF,   // half- and full-width forms
		r >= 0x20000 && r <= 0x3FFFF: // more ideographs
		return true
	}
	return false
}

// isLineStart reports whether q starts a line (other than the first).
func (s *splitter) isLineStart(q int) bool {
	return q > 0 && q < len(s.src) && s.src[q-1] == '\n'
}

// isSentenceStart reports whether q is the first character of a sentence
// that follows another.
func (s *splitter) isSentenceStart(q int) bool {
	if q <= 0 || q >= len(s.src) || !utf8.RuneStart(s.src[q]) {
		return false
	}
	if r, size := utf8.DecodeRuneInString(s.src[q:]); isSpaceRune(r, size) {
		return false
	}
	j := skipBack(s.src, q, 0, isSpaceRune)
	spaced := j < q
	j = skipBack(s.src, j, 0, isCloser)
	r, _ := utf8.DecodeLastRuneInString(s.src[:j])
	switch r {
	case '.', '!', '?':
		return spaced
	case '。', '！', '？', '．':
		return true
	}
	return false
}

// isWordStart reports whether a word starts at q: after white space or a
// comma, or where CJK text meets other text.
func (s *splitter) isWordStart(q int) bool {
	if q <= 0 || q >= len(s.src) || !utf8.RuneStart(s.src[q]) {
		return false
	}
	r, size := utf8.DecodeRuneInString(s.src[q:])
	if isSpaceRune(r, size) {
		return false
	}
	p, psize := utf8.DecodeLastRuneInString(s.src[:q])
	return isSpaceRune(p, psize) || isCJK(p) != isCJK(r) || isClauseEnd(p)
}

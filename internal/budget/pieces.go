package budget

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Counting a text with cl100k_base cuts it into pieces with a regular
// expression, then merges each piece's bytes into tokens by their ranks.
// The tokenizer library does the first with a backtracking regular
// expression engine that allocates for every piece, which made counting
// the wire form of one search's results cost several times the search
// itself. A piece's tokens depend on the piece alone, so the Counter cuts
// texts with the hand-written scanner below, which gives the same pieces,
// and remembers how many tokens each piece it has seen takes: English, code
// and JSON repeat their pieces, so nearly every piece is a look-up, and only
// new pieces go to the library.

// nextCl100kPiece returns the end of the piece of s that starts at i, as
// cl100k_base's pre-tokenizer cuts it:
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//	 ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// The alternatives are tried in order at i, each with backtracking, as the
// library's engine does (but see \s*[\r\n]+ below); \s is
// unicode.IsSpace, \p{L} unicode.IsLetter and \p{N} unicode.IsNumber, the
// classes that engine uses. s must be valid UTF-8 and i < len(s).
func nextCl100kPiece(s string, i int) int {
	r0, n0 := decode(s, i)
	// 's 't 're 've 'm 'll 'd, in any case.
	if r0 == '\'' && i+1 < len(s) {
		switch s[i+1] | 0x20 {
		case 's', 't', 'm', 'd':
			return i + 2
		case 'r', 'v':
			if i+2 < len(s) && s[i+2]|0x20 == 'e' {
				return i + 3
			}
		case 'l':
			if i+2 < len(s) && s[i+2]|0x20 == 'l' {
				return i + 3
			}
		}
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if isLetter(r0) {
		return letters(s, i+n0)
	}
	if r0 != '\r' && r0 != '\n' && !isNumber(r0) && i+n0 < len(s) {
		if r1, n1 := decode(s, i+n0); isLetter(r1) {
			return letters(s, i+n0+n1)
		}
	}
	// \p{N}{1,3}
	if isNumber(r0) {
		j := i + n0
		for range 2 {
			if j >= len(s) {
				break
			}
			r, n := decode(s, j)
			if !isNumber(r) {
				break
			}
			j += n
		}
		return j
	}
	// ' ?[^\s\p{L}\p{N}]+[\r\n]*'
	start := -1
	if isSymbol(r0) {
		start = i
	} else if r0 == ' ' && i+1 < len(s) {
		if r1, _ := decode(s, i+1); isSymbol(r1) {
			start = i + 1
		}
	}
	if start >= 0 {
		j := start
		for j < len(s) {
			r, n := decode(s, j)
			if !isSymbol(r) {
				break
			}
			j += n
		}
		for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
			j++
		}
		return j
	}
	// What is left starts with white space, whose run ends at e.
	// \s*[\r\n]+ is the run up to its first line break and the breaks
	// that follow it: the library's compiled form of the pattern
	// backtracks \s* to the first line break of the run, not to the last
	// as the pattern says, and its counts are the ones to match.
	e, firstBreak, last := i, -1, i
	for e < len(s) {
		r, n := decode(s, e)
		if !unicode.IsSpace(r) {
			break
		}
		if firstBreak < 0 && (r == '\r' || r == '\n') {
			firstBreak = e
		}
		last = e
		e += n
	}
	if firstBreak >= 0 {
		j := firstBreak
		for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
			j++
		}
		return j
	}
	// \s+(?!\S): the whole run at the end of s, else all of it but its
	// last character; \s+ for a run of one.
	if e == len(s) || last == i {
		return e
	}
	return last
}

// decode returns the rune at s[i] and its length, ASCII without a call.
func decode(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// letters returns the end of the run of letters of s that starts at j.
func letters(s string, j int) int {
	for j < len(s) {
		r, n := decode(s, j)
		if !isLetter(r) {
			break
		}
		j += n
	}
	return j
}

// ASCII classes, by byte.
const (
	asciiLetter = 1 << iota
	asciiNumber
	asciiSpace
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range rune(utf8.RuneSelf) {
		switch {
		case unicode.IsLetter(c):
			t[c] = asciiLetter
		case unicode.IsNumber(c):
			t[c] = asciiNumber
		case unicode.IsSpace(c):
			t[c] = asciiSpace
		}
	}
	return t
}()

func isLetter(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r] == asciiLetter
	}
	return unicode.IsLetter(r)
}

func isNumber(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r] == asciiNumber
	}
	return unicode.IsNumber(r)
}

// isSymbol is [^\s\p{L}\p{N}].
func isSymbol(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r] == 0
	}
	return !unicode.IsSpace(r) && !unicode.IsLetter(r) && !unicode.IsNumber(r)
}

// pieceCache remembers the token counts of pieces.
type pieceCache struct {
	mu sync.RWMutex
	n  map[string]int32
}

// Bounds of a pieceCache: pieces longer than maxPiece bytes are counted
// each time (they are rare: long words, runs of symbols or spaces), and
// the cache starts over once it holds maxPieces.
const (
	maxPiece  = 64
	maxPieces = 1 << 16
)

// count returns the tokens of text, cut by next, with each piece's count
// from the cache or, the first time, from countPiece.
func (pc *pieceCache) count(text string, next func(string, int) int, countPiece func(string) int) int {
	total := 0
	var missed []string
	pc.mu.RLock()
	for i := 0; i < len(text); {
		j := next(text, i)
		p := text[i:j]
		i = j
		if n, ok := pc.n[p]; ok {
			total += int(n)
		} else {
			missed = append(missed, p)
		}
	}
	pc.mu.RUnlock()
	if len(missed) == 0 {
		return total
	}
	counted := make([]int32, len(missed))
	for k, p := range missed {
		counted[k] = int32(countPiece(p))
		total += int(counted[k])
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.n == nil || len(pc.n)+len(missed) > maxPieces {
		pc.n = make(map[string]int32, 1024)
	}
	for k, p := range missed {
		if len(pc.n) >= maxPieces {
			break // one enormous text: remember what fits
		}
		if len(p) <= maxPiece {
			pc.n[strings.Clone(p)] = counted[k]
		}
	}
	return total
}

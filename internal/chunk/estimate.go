package chunk

import (
	"unicode"
	"unicode/utf8"
)

// EstimateTokens estimates how many tokens OpenAI's cl100k_base encoding
// makes of s, erring on the high side. It never returns 0 for text with
// anything but white space in it.
//
// It follows cl100k's pre-tokenizer, which cuts text into runs of letters
// (with one leading space or mark), groups of up to three digits, runs of
// punctuation and runs of white space, and prices each run by its length and
// script. The prices were fitted on English and Japanese documentation,
// scientific abstracts and Go source so that the estimate is at least the
// real count for about 99% of chunk-sized texts and some 20% above it on
// average; see TestEstimateTokensAgainstCl100k.
func EstimateTokens(s string) int {
	cost, text := estimateCost(s)
	n := (cost + 99) / 100
	if n == 0 && text {
		n = 1
	}
	return n
}

// Prices, in hundredths of a token.
const (
	costWord       = 110 // a run of ASCII letters, up to four of them
	costLetter     = 12  // each ASCII letter after the fourth
	costLongLetter = 31  // and after the twelfth, in addition
	costCapital    = 40  // each capital after the first in a run (acronyms, base64)
	costCamel      = 45  // each lower-to-upper change in a run (camelCase)
	costLead       = 35  // a mark or tab leading a word, which often fails to merge with it
	costDigits     = 113 // up to three digits
	costPunct      = 142 // a run of punctuation
	costPunctMore  = 20  // each further character of that run
	costSpace      = 94  // white space that is a token of its own, per 16 characters
	costNewline    = 150 // a run of line breaks
	costHan        = 151 // a CJK ideograph
	costKana       = 96  // hiragana or katakana
	costHangul     = 120 // a Hangul syllable
	costLatin      = 100 // an accented Latin letter
	costCyrillic   = 60  // a Cyrillic letter
	costLetterMisc = 100 // a letter of another script, of two UTF-8 bytes
	costLetterWide = 200 // of three or four bytes: Greek Extended, Georgian, Indic
	costSymbol2    = 100 // another character of two UTF-8 bytes
	costSymbol3    = 118 // of three bytes: “”, —, …, 。, ①
	costSymbol4    = 250 // of four bytes: emoji and the like
	costInvalid    = 100 // a byte that is not UTF-8
)

// Byte classes.
const (
	cPunct = iota
	cLower
	cUpper
	cDigit
	cSpace
	cNewline
	cHigh // part of a multi-byte character
)

var byteClass = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case c >= 'a' && c <= 'z':
			t[c] = cLower
		case c >= 'A' && c <= 'Z':
			t[c] = cUpper
		case c >= '0' && c <= '9':
			t[c] = cDigit
		case c == ' ' || c == '\t' || c == '\v' || c == '\f':
			t[c] = cSpace
		case c == '\n' || c == '\r':
			t[c] = cNewline
		case c >= utf8.RuneSelf:
			t[c] = cHigh
		default:
			t[c] = cPunct
		}
	}
	return t
}()

// letterCost returns the price of a non-ASCII letter, or -1 if r is not one.
func letterCost(r rune) int {
	switch {
	case r >= 0x3040 && r <= 0x30FF, r >= 0x31F0 && r <= 0x31FF, r >= 0xFF66 && r <= 0xFF9F:
		return costKana
	case r >= 0x4E00 && r <= 0x9FFF, r >= 0x3400 && r <= 0x4DBF, r >= 0xF900 && r <= 0xFAFF, r >= 0x20000 && r <= 0x3FFFF:
		return costHan
	case r >= 0xAC00 && r <= 0xD7AF:
		return costHangul
	case r == utf8.RuneError || !unicode.IsLetter(r):
		return -1
	case r <= 0x24F:
		return costLatin
	case r >= 0x400 && r <= 0x4FF:
		return costCyrillic
	case r < 0x800:
		return costLetterMisc
	}
	return costLetterWide
}

// isLetterAt reports whether a letter starts at s[i].
func isLetterAt(s string, i int) bool {
	switch byteClass[s[i]] {
	case cLower, cUpper:
		return true
	case cHigh:
		r, _ := utf8.DecodeRuneInString(s[i:])
		return letterCost(r) >= 0
	}
	return false
}

// estimateCost prices s in hundredths of a token and reports whether s has
// any character that is not white space.
func estimateCost(s string) (cost int, text bool) {
	n := len(s)
	for i := 0; i < n; {
		switch byteClass[s[i]] {
		case cLower, cUpper, cHigh:
			j, c := wordCost(s, i)
			if j > i {
				cost += c
				text = true
				i = j
				continue
			}
			// Not a letter: a symbol, a space or a stray byte.
			r, size := utf8.DecodeRuneInString(s[i:])
			i += size
			switch {
			case r == utf8.RuneError && size == 1:
				cost += costInvalid
			case unicode.IsSpace(r):
				cost += costSpace
				continue
			case size == 2:
				cost += costSymbol2
			case size == 3:
				cost += costSymbol3
			default:
				cost += costSymbol4
			}
			text = true
		case cDigit:
			j := i + 1
			for j < n && byteClass[s[j]] == cDigit {
				j++
			}
			cost += costDigits * ((j - i + 2) / 3)
			text = true
			i = j
		case cSpace:
			j := i + 1
			for j < n && byteClass[s[j]] == cSpace {
				j++
			}
			if j < n && byteClass[s[j]] == cNewline {
				i = j // spaces before a line break join it
				continue
			}
			if j-i > 1 { // all but the last space are a token
				cost += costSpace * (1 + (j-i)/16)
			}
			switch {
			case j == n:
				if j-i == 1 {
					cost += costSpace
				}
			case isLetterAt(s, j):
				if s[j-1] != ' ' {
					cost += costLead
				}
			case byteClass[s[j]] == cPunct && s[j-1] == ' ':
				// " (" and the like are one token
			default:
				cost += costSpace
			}
			i = j
		case cNewline:
			last := i
			j := i + 1
			for ; j < n; j++ {
				if k := byteClass[s[j]]; k == cNewline {
					last = j
				} else if k != cSpace {
					break
				}
			}
			cost += costNewline + costSpace*((last-i)/16)
			i = last + 1
		default: // ASCII punctuation
			j := i + 1
			for j < n && byteClass[s[j]] == cPunct {
				j++
			}
			text = true
			if j-i == 1 && j < n && isLetterAt(s, j) {
				cost += costLead // one mark leads the word after it
				i = j
				continue
			}
			cost += costPunct + costPunctMore*(j-i-1)
			for j < n && byteClass[s[j]] == cNewline {
				j++ // line breaks right after punctuation join it
			}
			i = j
		}
	}
	return cost, text
}

// wordCost prices the run of letters starting at s[i] and returns where it
// ends; it returns i if no letter starts there.
func wordCost(s string, i int) (end, cost int) {
	ascii, capitals, camel := 0, 0, 0
	prevLower := false
	j := i
	for j < len(s) {
		switch byteClass[s[j]] {
		case cLower:
			// Most of a word: a run of lower-case letters, taken whole.
			k := j + 1
			for k < len(s) && byteClass[s[k]] == cLower {
				k++
			}
			ascii += k - j
			prevLower = true
			j = k
			continue
		case cUpper:
			ascii++
			capitals++
			if prevLower {
				camel++
			}
			prevLower = false
			j++
			continue
		case cHigh:
			r, size := utf8.DecodeRuneInString(s[j:])
			c := letterCost(r)
			if c < 0 {
				break
			}
			cost += c
			prevLower = false
			j += size
			continue
		}
		break
	}
	if ascii > 0 {
		cost += costWord + costLetter*max(ascii-4, 0) + costLongLetter*max(ascii-12, 0) +
			costCapital*max(capitals-1, 0) + costCamel*camel
	}
	return j, cost
}

package react

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A span is a sentence of a text and where it lies in it (byte offsets).
type span struct {
	Text       string
	Start, End int
}

// abbreviations end in a period that does not end a sentence.
var abbreviations = map[string]bool{
	"e.g": true, "i.e": true, "etc": true, "vs": true, "cf": true, "mr": true, "mrs": true, "dr": true,
	"no": true, "fig": true, "approx": true, "incl": true, "ca": true, "al": true,
}

// splitSentences cuts text into sentences: after . ! ? followed by space (not
// after an abbreviation or inside a number such as 1.5), after 。！？ and at
// line ends of list items, headings and paragraphs. Citation markers that
// follow a sentence's end ("… works. [2]") stay with that sentence.
func splitSentences(text string) []span {
	var out []span
	start := 0
	emit := func(end int) {
		seg := text[start:end]
		trimmed := strings.TrimSpace(seg)
		if trimmed != "" {
			lead := strings.Index(seg, trimmed)
			out = append(out, span{Text: trimmed, Start: start + lead, End: start + lead + len(trimmed)})
		}
		start = end
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		next := i + size
		switch {
		case r == '\n':
			// A line break ends a sentence unless the paragraph's line merely
			// wraps (the next line continues in lower case).
			if endsLine(text, i) {
				emit(next)
			}
		case r == '。' || r == '！' || r == '？':
			end := next + markersAt(text[next:])
			emit(end)
			next = end
		case r == '.' || r == '!' || r == '?':
			if r == '.' && (isAbbreviation(text[start:i]) || enumerator(text[start:i]) ||
				(next < len(text) && isDigitAt(text, next) && i > 0 && isDigitAt(text, i-1))) {
				break
			}
			rest := text[next:]
			// Closing quotes and brackets belong to the sentence.
			for len(rest) > 0 && strings.ContainsRune(`"')”’`, rune(rest[0])) {
				next++
				rest = text[next:]
			}
			end := next + markersAt(rest)
			if end == len(text) || unicode.IsSpace(rune(text[end])) {
				emit(end)
				next = end
			}
		}
		i = next
	}
	emit(len(text))
	return out
}

// markerRun matches citation markers at the start of s, spaces allowed
// before them: " [1][2]" or " [1, 3]".
var markerRun = regexp.MustCompile(`^(\s*\[\d+(?:\s*,\s*\d+)*\])+`)

func markersAt(s string) int {
	return len(markerRun.FindString(s))
}

func isDigitAt(s string, i int) bool { return s[i] >= '0' && s[i] <= '9' }

// isAbbreviation reports whether the sentence so far ends with a known
// abbreviation or a single letter (an initial).
func isAbbreviation(before string) bool {
	f := strings.Fields(before)
	if len(f) == 0 {
		return false
	}
	w := strings.ToLower(strings.TrimLeft(f[len(f)-1], `("'`))
	return abbreviations[w] || (utf8.RuneCountInString(w) == 1 && unicode.IsLetter([]rune(w)[0]))
}

// endsLine reports whether the line break at i ends a sentence: a blank
// line follows, the next line starts a list item, heading, table or fence,
// or the line itself is one of those.
func endsLine(text string, i int) bool {
	lineStart := strings.LastIndexByte(text[:i], '\n') + 1
	line := strings.TrimSpace(text[lineStart:i])
	rest := text[i+1:]
	nl := strings.IndexByte(rest, '\n')
	nextLine := rest
	if nl >= 0 {
		nextLine = rest[:nl]
	}
	next := strings.TrimSpace(nextLine)
	return line == "" || next == "" || isBlockLine(line) || isBlockLine(next)
}

// blockStart matches lines that stand on their own: list items, headings,
// tables, quotes, fences.
var blockStart = regexp.MustCompile("^(#{1,6}\\s|[-*+]\\s|\\d+[.)]\\s|\\||>|```|~~~|:::)")

func isBlockLine(s string) bool { return blockStart.MatchString(s) }

// hasCJK reports whether s has Han, Hiragana, Katakana or Hangul letters.
func hasCJK(s string) bool {
	for _, r := range s {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			return true
		}
	}
	return false
}

// hasKana reports whether s has Hiragana or Katakana: Japanese rather than
// Chinese.
func hasKana(s string) bool {
	for _, r := range s {
		if unicode.In(r, unicode.Hiragana, unicode.Katakana) {
			return true
		}
	}
	return false
}

// Lang is the language of a text as the answerer needs it.
type Lang string

// Languages.
const (
	LangEnglish  Lang = "en"
	LangJapanese Lang = "ja"
	LangOther    Lang = "other"
)

// detectLang tells Japanese (kana, or Han without Latin words) from the rest.
func detectLang(s string) Lang {
	switch {
	case hasKana(s):
		return LangJapanese
	case hasCJK(s):
		return LangOther
	}
	return LangEnglish
}

// enumerator reports a sentence so far that is only a numbered list's
// number ("1" of "1. Install it"): its period does not end a sentence.
func enumerator(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 3 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigitAt(s, i) {
			return false
		}
	}
	return true
}

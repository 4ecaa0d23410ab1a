// Package clip shortens text for people to read: previews, trace lines,
// titles and error messages that quote what a service sent. (Fitting a
// response into a token budget is budget.Truncate's job.)
package clip

import (
	"strings"
	"unicode/utf8"
)

// Ellipsis marks where text was cut.
const Ellipsis = "…"

// Runes returns s cut to at most n runes, the last of them Ellipsis, with
// the spaces before the cut dropped; s is returned whole when it fits or
// when n <= 0 (no limit). A rune is never split.
func Runes(s string, n int) string {
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return s
	}
	cut, i := 0, 0
	for ; i < n-1; i++ {
		_, size := utf8.DecodeRuneInString(s[cut:])
		cut += size
	}
	return strings.TrimRight(s[:cut], " \t\n") + Ellipsis
}

// Line is Runes on s with every run of white space (line breaks included)
// made one space, for output that must stay on one line.
func Line(s string, n int) string {
	return Runes(strings.Join(strings.Fields(s), " "), n)
}

// Package cite is the one citation grammar of sagasu's answers: both
// agents (ReAct and Plan-and-Act) read, strip, render and renumber the
// markers that point a sentence at the passages it stands on. A marker is
// [n], a list [n, m], or a run [n][m]; markers inside code (a fenced block
// or an inline span) are code, such as arr[1], not citations.
package cite

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// marker finds citation markers: [1], [1, 2], [1][3] (two markers).
var marker = regexp.MustCompile(`\[(\d+(?:\s*,\s*\d+)*)\]`)

// markerWithSpace is a marker with the space before it.
var markerWithSpace = regexp.MustCompile(`\s*\[\d+(?:\s*,\s*\d+)*\]`)

// Fence matches a code fence line (``` or ~~~, indented or not).
var Fence = regexp.MustCompile("^\\s*(```|~~~)")

// Fences follows fenced code blocks line by line as Markdown reads them:
// a block opened by three or more backticks or tildes closes only at a
// line of the same character, at least as many, and nothing else, so a
// ~~~ block may show ``` fences inside it. The zero value is outside code.
type Fences struct {
	ch byte // the open fence's character; 0 outside code
	n  int  // and its length
}

// Line takes the next line and reports whether it is code: a fence that
// opens or closes a block, or a line inside one.
func (f *Fences) Line(line string) bool {
	t := strings.TrimLeft(line, " \t")
	ch, n := byte(0), 0
	if len(t) >= 3 && (t[0] == '`' || t[0] == '~') {
		ch = t[0]
		for n < len(t) && t[n] == ch {
			n++
		}
		if n < 3 {
			ch = 0
		}
	}
	switch {
	case f.ch == 0 && ch != 0:
		f.ch, f.n = ch, n
		return true
	case f.ch != 0 && ch == f.ch && n >= f.n && strings.TrimSpace(t[n:]) == "":
		f.ch, f.n = 0, 0
		return true
	}
	return f.ch != 0
}

// Open reports whether the lines so far leave a code block open.
func (f *Fences) Open() bool { return f.ch != 0 }

// Code finds inline code spans; its group is the code.
var Code = regexp.MustCompile("`([^`]+)`")

// Numbers returns the distinct passage numbers s cites, in the order they
// first appear, outside code.
func Numbers(s string) []int {
	var ns []int
	for _, m := range marker.FindAllStringSubmatch(OutsideCode(s), -1) {
		for _, f := range strings.Split(m[1], ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err == nil && !slices.Contains(ns, n) {
				ns = append(ns, n)
			}
		}
	}
	return ns
}

// Strip removes the markers of s (and the space before each).
func Strip(s string) string {
	return strings.TrimSpace(markerWithSpace.ReplaceAllString(s, ""))
}

// Render writes passage numbers as markers: "[1][3]".
func Render(ns []int) string {
	var b strings.Builder
	for _, n := range ns {
		fmt.Fprintf(&b, "[%d]", n)
	}
	return b.String()
}

// Renumber rewrites each number of each marker outside code through to;
// a number to does not map stays as it is.
func Renumber(s string, to map[int]int) string {
	blank := OutsideCode(s)
	var b strings.Builder
	last := 0
	for _, loc := range marker.FindAllStringSubmatchIndex(blank, -1) {
		b.WriteString(s[last:loc[0]])
		var ns []string
		for _, f := range strings.Split(s[loc[2]:loc[3]], ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if m, ok := to[n]; err == nil && ok {
				n = m
			}
			ns = append(ns, strconv.Itoa(n))
		}
		b.WriteString("[" + strings.Join(ns, ", ") + "]")
		last = loc[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// OutsideCode is s with its fenced code blocks and inline code spans
// blanked out (same length, so offsets still hold), so that an index such
// as arr[1] is not read as a citation.
func OutsideCode(s string) string {
	if !strings.Contains(s, "`") && !strings.Contains(s, "~~~") {
		return s
	}
	var b strings.Builder
	var fences Fences
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		if fences.Line(line) {
			b.WriteString(strings.Repeat(" ", len(line)))
			continue
		}
		b.WriteString(Code.ReplaceAllStringFunc(line, func(c string) string { return strings.Repeat(" ", len(c)) }))
	}
	return b.String()
}

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
	inFence := false
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		if Fence.MatchString(line) || inFence {
			if Fence.MatchString(line) {
				inFence = !inFence
			}
			b.WriteString(strings.Repeat(" ", len(line)))
			continue
		}
		b.WriteString(Code.ReplaceAllStringFunc(line, func(c string) string { return strings.Repeat(" ", len(c)) }))
	}
	return b.String()
}

// Package glob matches slash-separated paths against glob patterns in which
// "**" stands for any number of whole path segments, so that "docs/**/*.md"
// selects markdown files at any depth under docs.
//
// Within one segment the syntax is that of [path.Match]: "*" matches any run
// of characters, "?" one character, "[...]" a character class ("[^...]"
// negated, "a-z" ranges), and "\" escapes the next character. A segment that
// is exactly "**" matches zero or more whole segments; "**" inside a longer
// segment ("a**b") is the same as "*". "*" and "?" never match "/", and they
// do match a leading "." (unlike a shell).
//
// Names and patterns are cleaned with [path.Clean] before matching, so
// "./docs//a.md" and "docs/a.md" are the same name. Only "/" separates
// segments; a backslash in a name is an ordinary character.
package glob

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// Match reports whether name matches pattern. A malformed pattern (see
// [Valid]) matches nothing.
func Match(pattern, name string) bool {
	states := run(pattern, name)
	return states != nil && states[len(states)-1]
}

// MatchBelow reports whether some path strictly below directory dir could
// match pattern. A walker uses it to skip directories that cannot hold a
// match: with "docs/*/a.md" it descends into "docs" and "docs/x" but not
// "docs/x/y" or "src". A malformed pattern matches nothing below anything.
func MatchBelow(pattern, dir string) bool {
	states := run(pattern, dir)
	// A state before the end can still consume more segments; the end state
	// alone means dir itself matched and nothing longer can.
	return states != nil && anyTrue(states[:len(states)-1])
}

// run feeds the segments of name through pattern and returns the states it
// ends in (see step), or nil when the pattern is malformed or no state is left.
func run(pattern, name string) []bool {
	if Valid(pattern) != nil {
		return nil
	}
	pat := segments(pattern)
	states := start(pat)
	for _, s := range segments(name) {
		states = step(pat, states, s)
		if !anyTrue(states) {
			return nil
		}
	}
	return states
}

// segments splits a cleaned path into its segments. The root of an absolute
// path is an empty first segment, so "/a" is ["", "a"] and "/" is [""]; "."
// has no segments at all.
func segments(p string) []string {
	p = path.Clean(p)
	switch p {
	case ".":
		return nil
	case "/":
		return []string{""}
	}
	return strings.Split(p, "/")
}

// The matcher runs the pattern as a small automaton over name segments:
// states[i] is true when the segments read so far can be matched by pat[:i].
// That keeps matching linear in len(pat)*len(name) however many "**" there are.

func start(pat []string) []bool {
	states := make([]bool, len(pat)+1)
	states[0] = true
	closure(pat, states)
	return states
}

// closure lets every "**" match zero segments.
func closure(pat []string, states []bool) {
	for i, p := range pat {
		if states[i] && p == "**" {
			states[i+1] = true
		}
	}
}

func step(pat []string, states []bool, seg string) []bool {
	next := make([]bool, len(states))
	for i, p := range pat {
		if !states[i] {
			continue
		}
		if p == "**" {
			next[i] = true // "**" absorbs this segment and may absorb more
		} else if matchSegment(p, seg) {
			next[i+1] = true
		}
	}
	closure(pat, next)
	return next
}

func anyTrue(states []bool) bool {
	for _, s := range states {
		if s {
			return true
		}
	}
	return false
}

// matchSegment matches one pattern segment against one name segment. The
// empty segment is the root of an absolute path: only the root of an
// absolute pattern (or "**") matches it, so "*/a" does not match "/a".
func matchSegment(p, s string) bool {
	if p == "" || s == "" {
		return p == s
	}
	ok, err := path.Match(p, s)
	return ok && err == nil
}

// ErrBadPattern is wrapped by every error [Valid] returns.
var ErrBadPattern = errors.New("malformed glob pattern")

// PatternError says what is wrong with a pattern and where.
type PatternError struct {
	Pattern string // the whole pattern as given
	Segment string // the "/"-separated segment that is malformed
	Problem string // what is wrong, in words
}

func (e *PatternError) Error() string {
	if e.Segment == "" || e.Segment == e.Pattern {
		return fmt.Sprintf("glob pattern %q: %s", e.Pattern, e.Problem)
	}
	return fmt.Sprintf("glob pattern %q: segment %q: %s", e.Pattern, e.Segment, e.Problem)
}

// Unwrap makes errors.Is(err, ErrBadPattern) true.
func (e *PatternError) Unwrap() error { return ErrBadPattern }

// Valid returns nil if pattern is well formed, or a [*PatternError] that
// says what is wrong: an unclosed or empty "[...]" class, an unescaped "-"
// or "]" where a class needs a character, invalid UTF-8 inside a class, or a
// trailing "\". The empty pattern is malformed too. A segment is accepted
// exactly when [path.Match] accepts it.
func Valid(pattern string) error {
	if pattern == "" {
		return &PatternError{Pattern: pattern, Problem: "pattern is empty"}
	}
	segs := strings.Split(pattern, "/")
	for i, seg := range segs {
		problem := checkSegment(seg)
		if problem == "" {
			continue
		}
		if strings.HasPrefix(problem, "unclosed") && i < len(segs)-1 {
			problem += `; a class cannot contain "/"`
		}
		return &PatternError{Pattern: pattern, Segment: seg, Problem: problem}
	}
	return nil
}

// checkSegment returns what is wrong with one segment, or "".
func checkSegment(seg string) string {
	for i := 0; i < len(seg); i++ {
		switch seg[i] {
		case '\\':
			if i+1 == len(seg) {
				return `ends with "\" that escapes nothing (write "\\" for a backslash)`
			}
			i++
		case '[':
			n, problem := checkClass(seg[i+1:])
			if problem != "" {
				return problem
			}
			i += n // now at the closing ']'
		}
	}
	return ""
}

// checkClass checks the body of a character class, which starts just after
// its '['. It returns the number of bytes up to and including the closing
// ']', or a problem.
func checkClass(s string) (int, string) {
	const unclosed = `unclosed character class "[" (add "]", or write "\[" for a literal "[")`
	i := 0
	if i < len(s) && s[i] == '^' {
		i++
	}
	for ranges := 0; ; ranges++ {
		if i < len(s) && s[i] == ']' {
			if ranges > 0 {
				return i + 1, ""
			}
			return 0, `empty character class "[]" (write "\]" to match "]")`
		}
		n, problem := classChar(s[i:])
		if problem != "" {
			return 0, problem
		}
		i += n
		if i == len(s) {
			return 0, unclosed
		}
		if s[i] == '-' {
			n, problem := classChar(s[i+1:])
			if problem != "" {
				return 0, problem
			}
			i += 1 + n
			if i == len(s) {
				return 0, unclosed
			}
		}
	}
}

// classChar reads one possibly escaped character of a class and returns its
// length in bytes.
func classChar(s string) (int, string) {
	const unclosed = `unclosed character class "[" (add "]", or write "\[" for a literal "[")`
	if s == "" {
		return 0, unclosed
	}
	n := 0
	switch s[0] {
	case '-':
		return 0, `"-" in a character class needs a character on each side (write "\-" for a literal "-")`
	case ']':
		return 0, `"]" in a character class needs a character before it (write "\]" for a literal "]")`
	case '\\':
		n = 1
		if len(s) == 1 {
			return 0, unclosed
		}
	}
	r, size := utf8.DecodeRuneInString(s[n:])
	if r == utf8.RuneError && size == 1 {
		return 0, "invalid UTF-8 in character class"
	}
	return n + size, ""
}

// HasMeta reports whether s contains any of the characters that are special
// in a pattern: '*', '?', '[' or the escape '\'. A string without them
// matches only itself.
func HasMeta(s string) bool {
	return strings.ContainsAny(s, `*?[\`)
}

// Base returns the longest leading directory of pattern that contains no
// metacharacters: every name the pattern matches lies in or under it.
// "docs/**/*.md" gives "docs", "/srv/*.txt" gives "/srv", and "*.md" or
// "**/x" give ".". The last segment is never part of the base, even when it
// is literal: "docs/a.md" gives "docs".
func Base(pattern string) string {
	segs := segments(pattern)
	n := 0
	for n < len(segs)-1 && !HasMeta(segs[n]) {
		n++
	}
	switch {
	case n == 0:
		return "."
	case n == 1 && segs[0] == "":
		return "/"
	}
	return strings.Join(segs[:n], "/")
}

package ignore

import (
	"bytes"
	"strings"
)

// pattern is one line of an ignore file, parsed as git parses it
// (dir.c: parse_path_pattern).
type pattern struct {
	text     string // as written in the file, for messages
	glob     string // what wildmatch is given
	negate   bool   // "!pattern": re-include
	dirOnly  bool   // "pattern/": folders only
	basename bool   // no "/" but a trailing one: matched against the name alone
	base     string // the folder of the ignore file, slash path from the tree's top ("" at the top)
	source   string // the ignore file, for messages
	line     int
}

// parse reads the patterns of an ignore file that lies in the folder base.
func parse(data []byte, base, source string) []pattern {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark
	var out []pattern
	for n, line := range strings.Split(string(data), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		line = trimTrailingSpaces(strings.TrimSuffix(line, "\r"))
		p := pattern{text: line, base: base, source: source, line: n + 1}
		if strings.HasPrefix(line, "!") {
			p.negate = true
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			p.dirOnly = true
			line = line[:len(line)-1]
		}
		p.basename = !strings.Contains(line, "/")
		// A leading "/" anchors the pattern to base; it is not part of the
		// path matched.
		p.glob = strings.TrimPrefix(line, "/")
		out = append(out, p)
	}
	return out
}

// trimTrailingSpaces drops the spaces at the end of line that no backslash
// escapes ("a\ " keeps its escaped space), as git does.
func trimTrailingSpaces(line string) string {
	lastSpace := -1
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case ' ':
			if lastSpace < 0 {
				lastSpace = i
			}
		case '\\':
			i++
			if i >= len(line) {
				return line
			}
			lastSpace = -1
		default:
			lastSpace = -1
		}
	}
	if lastSpace >= 0 {
		return line[:lastSpace]
	}
	return line
}

// match reports whether the pattern matches the path rel (a slash path
// from the tree's top) of a file or folder; name is its last element.
func (p *pattern) match(rel, name string, isDir bool) bool {
	if p.dirOnly && !isDir {
		return false
	}
	if p.basename {
		return wildmatch(p.glob, name, false)
	}
	// Anchored at the ignore file's folder: rel must lie below it.
	sub := rel
	if p.base != "" {
		var ok bool
		sub, ok = strings.CutPrefix(rel, p.base+"/")
		if !ok {
			return false
		}
	}
	return wildmatch(p.glob, sub, true)
}

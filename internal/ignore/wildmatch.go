package ignore

// wildmatch is git's pattern matcher (wildmatch.c), the one .gitignore
// patterns are matched with: byte-wise, case-sensitive. With pathname set
// ("WM_PATHNAME"), "*", "?" and classes never match "/", and "**" matches
// across folders only as a whole segment ("a/**/b", "**/b", "a/**"); else
// "*" matches "/" too. The glob package's rules differ ("**" inside a
// segment, path cleaning), so ignore files get their own matcher.
func wildmatch(pattern, text string, pathname bool) bool {
	return dowild(pattern, 0, text, 0, pathname) == wmMatch
}

// What dowild can answer. Besides a match or no match, it can tell its
// callers to give up: abortAll when no later start for a "*" can match,
// abortToStarStar when only a "**" further out may still match.
const (
	wmMatch = iota
	wmNoMatch
	wmAbortAll
	wmAbortToStarStar
)

// isGlobSpecial reports the bytes that start a wildcard, a class or an
// escape.
func isGlobSpecial(c byte) bool { return c == '*' || c == '?' || c == '[' || c == '\\' }

// at returns s[i], or 0 past its end (the C string's terminator).
func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// dowild matches p[pi:] against t[ti:].
func dowild(p string, pi int, t string, ti int, pathname bool) int {
	start := pi
	for ; pi < len(p); pi, ti = pi+1, ti+1 {
		pc := p[pi]
		tc := at(t, ti)
		if ti >= len(t) && pc != '*' {
			return wmAbortAll
		}
		switch pc {
		case '\\':
			// The next byte is literal; a trailing backslash matches
			// nothing (tc is never 0 here).
			pi++
			if at(p, pi) != tc {
				return wmNoMatch
			}
			continue
		case '?':
			if pathname && tc == '/' {
				return wmNoMatch
			}
			continue
		case '*':
			var matchSlash bool
			pi++
			if at(p, pi) == '*' {
				prev := pi - 2
				for pi++; at(p, pi) == '*'; pi++ {
				}
				switch {
				case !pathname:
					matchSlash = true
				case (prev < start || p[prev] == '/') &&
					(pi >= len(p) || p[pi] == '/' || (p[pi] == '\\' && at(p, pi+1) == '/')):
					// "**/" may match no folder at all: "a/**/b" matches "a/b".
					if at(p, pi) == '/' && dowild(p, pi+1, t, ti, pathname) == wmMatch {
						return wmMatch
					}
					matchSlash = true
				default:
					matchSlash = false
				}
			} else {
				matchSlash = !pathname
			}
			if pi >= len(p) {
				// A trailing "**" matches the rest; a trailing "*" only when
				// no "/" is left.
				if !matchSlash && indexByte(t, ti, '/') >= 0 {
					return wmNoMatch
				}
				return wmMatch
			}
			if !matchSlash && p[pi] == '/' {
				// "*/" matches the rest of this folder's name.
				slash := indexByte(t, ti, '/')
				if slash < 0 {
					return wmNoMatch
				}
				ti = slash
				continue // the loop's step consumes the "/" of both
			}
			for {
				if ti >= len(t) {
					break
				}
				if !isGlobSpecial(p[pi]) {
					// Skip ahead to the next byte that can begin what
					// follows the star; within a folder unless matchSlash.
					want := p[pi]
					for ti < len(t) && (matchSlash || t[ti] != '/') && t[ti] != want {
						ti++
					}
					if at(t, ti) != want {
						return wmNoMatch
					}
				}
				m := dowild(p, pi, t, ti, pathname)
				if m != wmNoMatch {
					if !matchSlash || m != wmAbortToStarStar {
						return m
					}
				} else if !matchSlash && at(t, ti) == '/' {
					return wmAbortToStarStar
				}
				ti++
			}
			return wmAbortAll
		case '[':
			pi++
			c := at(p, pi)
			if c == '^' {
				c = '!'
			}
			negated := c == '!'
			if negated {
				pi++
				c = at(p, pi)
			}
			var prev byte
			matched := false
			for {
				if pi >= len(p) {
					return wmAbortAll
				}
				switch {
				case c == '\\':
					pi++
					if pi >= len(p) {
						return wmAbortAll
					}
					c = p[pi]
					if tc == c {
						matched = true
					}
				case c == '-' && prev != 0 && pi+1 < len(p) && p[pi+1] != ']':
					pi++
					c = p[pi]
					if c == '\\' {
						pi++
						if pi >= len(p) {
							return wmAbortAll
						}
						c = p[pi]
					}
					if tc <= c && tc >= prev {
						matched = true
					}
					c = 0 // a range does not start another one
				case c == '[' && at(p, pi+1) == ':':
					s := pi + 2
					pi = s
					for pi < len(p) && p[pi] != ']' {
						pi++
					}
					if pi >= len(p) {
						return wmAbortAll
					}
					n := pi - s - 1
					if n < 0 || p[pi-1] != ':' {
						// No ":]": an ordinary "[" in the set.
						pi = s - 2
						c = '['
						if tc == c {
							matched = true
						}
						break
					}
					in, ok := class(p[s:s+n], tc)
					if !ok {
						return wmAbortAll // an unknown [:class:]
					}
					if in {
						matched = true
					}
					c = 0
				default:
					if tc == c {
						matched = true
					}
				}
				prev = c
				pi++
				c = at(p, pi)
				if c == ']' {
					break
				}
			}
			if matched == negated || (pathname && tc == '/') {
				return wmNoMatch
			}
			continue
		default:
			if tc != pc {
				return wmNoMatch
			}
			continue
		}
	}
	if ti < len(t) {
		return wmNoMatch
	}
	return wmMatch
}

// indexByte is the index of the first c in s at or after i, or -1.
func indexByte(s string, i int, c byte) int {
	for ; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// class reports whether c is in the POSIX class name (ASCII only, as git's
// C locale has it), and whether the class exists.
func class(name string, c byte) (in, ok bool) {
	lower := c >= 'a' && c <= 'z'
	upper := c >= 'A' && c <= 'Z'
	digit := c >= '0' && c <= '9'
	graph := c > ' ' && c < 0x7f
	switch name {
	case "alnum":
		return lower || upper || digit, true
	case "alpha":
		return lower || upper, true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < ' ' || c == 0x7f, true
	case "digit":
		return digit, true
	case "graph":
		return graph, true
	case "lower":
		return lower, true
	case "print":
		return graph || c == ' ', true
	case "punct":
		return graph && !lower && !upper && !digit, true
	case "space":
		return c == ' ' || (c >= '\t' && c <= '\r'), true
	case "upper":
		return upper, true
	case "xdigit":
		return digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'), true
	}
	return false, false
}

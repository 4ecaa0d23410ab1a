package chunk

// The code splitter knows no language. It measures each line's nesting by
// counting brackets outside strings and comments (well enough for C-like
// languages) and by indentation (for Python-like ones), and prefers to cut
// between top-level blocks, then between shallow lines.

// maxNesting caps the nesting used to rank boundaries.
const maxNesting = 20

// lineIndex returns the 0-based index of the line holding offset i.
func (s *splitter) lineIndex(i int) int { return s.lineOf(i) - 1 }

// lineNesting returns the nesting of each line: the bracket depth at its
// start or its indentation in tab stops, whichever is larger; and -1 for a
// blank line.
func (s *splitter) lineNesting() []int {
	if s.nesting != nil {
		return s.nesting
	}
	s.lineOf(0) // builds lineStarts
	s.nesting = make([]int, len(s.lineStarts))
	depth := 0
	var quote byte // the quote of the string we are in, or 0
	inComment := false
	for n, start := range s.lineStarts {
		end := len(s.src)
		if n+1 < len(s.lineStarts) {
			end = s.lineStarts[n+1]
		}
		line := s.src[start:end]
		indent, blank := indentation(line)
		switch {
		case blank && quote == 0 && !inComment:
			s.nesting[n] = -1
		default:
			s.nesting[n] = min(max(depth, indent/4), maxNesting)
		}
		for i := 0; i < len(line); i++ {
			c := line[i]
			switch {
			case inComment:
				if c == '*' && i+1 < len(line) && line[i+1] == '/' {
					inComment = false
					i++
				}
			case quote != 0:
				if c == '\\' {
					i++
				} else if c == quote {
					quote = 0
				}
			case c == '"' || c == '\'' || c == '`':
				quote = c
			case c == '/' && i+1 < len(line) && line[i+1] == '/':
				i = len(line)
			case c == '/' && i+1 < len(line) && line[i+1] == '*':
				inComment = true
				i++
			case c == '#' && (i+1 == len(line) || line[i+1] == ' ' || line[i+1] == '!' || line[i+1] == '\n'):
				i = len(line)
			case c == '{' || c == '(' || c == '[':
				depth++
			case c == '}' || c == ')' || c == ']':
				depth = max(depth-1, 0)
			}
		}
		if quote == '"' || quote == '\'' { // only backquoted strings span lines
			quote = 0
		}
	}
	return s.nesting
}

// indentation returns the width of a line's leading white space (a tab
// counts 4) and whether the line is blank.
func indentation(line string) (width int, blank bool) {
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case ' ':
			width++
		case '\t':
			width += 4
		case '\r', '\n', '\v', '\f':
		default:
			return width, false
		}
	}
	return width, true
}

// codeTopLevel cuts [a, b) into top-level blocks: before each line at
// nesting 0 that follows a blank line or a nested line. Comments directly
// above a block stay with it.
func (s *splitter) codeTopLevel(a, b int) []part {
	nest := s.lineNesting()
	c := newCutter(a, kCodeBlock)
	first := s.lineIndex(a)
	for n := first + 1; n < len(s.lineStarts) && s.lineStarts[n] < b; n++ {
		if nest[n] == 0 && nest[n-1] != 0 && s.lineStarts[n] > a {
			c.at(s.lineStarts[n], kCodeBlock, brkBlock)
		}
	}
	return c.done(b)
}

// codeLines cuts [a, b) before every line; a boundary is the stronger the
// shallower the line after it, and stronger still after a blank line.
func (s *splitter) codeLines(a, b int) []part {
	nest := s.lineNesting()
	c := newCutter(a, kLine)
	first := s.lineIndex(a)
	for n := first + 1; n < len(s.lineStarts) && s.lineStarts[n] < b; n++ {
		if s.lineStarts[n] <= a {
			continue
		}
		brk := brkCode + 2*max(nest[n], 0)
		if nest[n-1] >= 0 {
			brk++
		}
		c.at(s.lineStarts[n], kLine, brk)
	}
	return c.done(b)
}

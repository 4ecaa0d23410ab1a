package chunk

import (
	"regexp"
	"slices"
	"strings"
)

// mdInfo is what the markdown splitter learns about a document in one pass.
type mdInfo struct {
	heads   []mdHead
	headEnd map[int]int // heading start -> end of its last line
	fmEnd   int         // end of the YAML front matter, or 0 if there is none
}

// mdHead is one heading: its lines [start, end), level 1–6 and text.
type mdHead struct {
	start, end int
	level      int
	text       string
}

// parseMarkdown finds the front matter and the headings outside fenced code.
func (s *splitter) parseMarkdown() *mdInfo {
	if s.md != nil {
		return s.md
	}
	md := &mdInfo{headEnd: map[int]int{}}
	s.md = md
	n := len(s.src)
	pos := 0
	if first := s.nextLine(0, n); strings.TrimRight(lineText(s.src[:first]), " \t") == "---" {
		for i := first; i < n; {
			j := s.nextLine(i, n)
			if t := strings.TrimRight(lineText(s.src[i:j]), " \t"); t == "---" || t == "..." {
				md.fmEnd, pos = j, j
				break
			}
			i = j
		}
	}
	var f fence
	afterBreak := true // the previous line ended a block: blank, heading, fence, start
	paraStart := -1    // start of a one-line paragraph that may be a setext heading
	for pos < n {
		next := s.nextLine(pos, n)
		line := lineText(s.src[pos:next])
		switch {
		case f.open:
			f.open = !f.closes(line)
			afterBreak = !f.open
			paraStart = -1
		case f.opens(line):
			paraStart = -1
		case isBlank(line):
			afterBreak = true
			paraStart = -1
		default:
			if level, text, ok := atxHeading(line); ok {
				md.add(mdHead{pos, next, level, text})
				afterBreak, paraStart = true, -1
				break
			}
			if level := setextLevel(line); level > 0 && paraStart >= 0 {
				text := CleanHeading(lineText(s.src[paraStart:pos]))
				if text == "" {
					text = strings.TrimSpace(lineText(s.src[paraStart:pos]))
				}
				md.add(mdHead{paraStart, next, level, text})
				afterBreak, paraStart = true, -1
				break
			}
			paraStart = -1
			if afterBreak && isPlainLine(line) {
				paraStart = pos
			}
			afterBreak = false
		}
		pos = next
	}
	return md
}

func (md *mdInfo) add(h mdHead) {
	md.heads = append(md.heads, h)
	md.headEnd[h.start] = h.end
}

// lineText strips the line break from a line.
func lineText(line string) string {
	line = strings.TrimSuffix(line, "\n")
	return strings.TrimSuffix(line, "\r")
}

// fence tracks a fenced code block: ``` or ~~~, three or more.
type fence struct {
	open bool
	char byte
	n    int
}

// opens reports whether line opens a fenced code block, and if so opens f.
// Fences are recognised at any indentation, so that fences inside list items
// count too.
func (f *fence) opens(line string) bool {
	t := strings.TrimLeft(line, " \t")
	if len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return false
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 || (t[0] == '`' && strings.IndexByte(t[n:], '`') >= 0) {
		return false
	}
	*f = fence{open: true, char: t[0], n: n}
	return true
}

// closes reports whether line closes the open fence f.
func (f *fence) closes(line string) bool {
	t := strings.TrimSpace(line)
	if len(t) < f.n {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] != f.char {
			return false
		}
	}
	return true
}

// atxHeading parses "## Heading ##" (up to three spaces of indentation). The
// text loses its closing #s and a trailing {#anchor}; an empty heading is not
// taken as one.
func atxHeading(line string) (level int, text string, ok bool) {
	t := line
	for i := 0; i < 3 && strings.HasPrefix(t, " "); i++ {
		t = t[1:]
	}
	for level < len(t) && t[level] == '#' {
		level++
	}
	if level == 0 || level > 6 || (level < len(t) && t[level] != ' ' && t[level] != '\t') {
		return 0, "", false
	}
	text = strings.TrimSpace(t[level:])
	if trimmed := strings.TrimRight(text, "#"); trimmed != text && (trimmed == "" || strings.HasSuffix(trimmed, " ") || strings.HasSuffix(trimmed, "\t")) {
		text = strings.TrimSpace(trimmed)
	}
	text = CleanHeading(text)
	if text == "" {
		return 0, "", false
	}
	return level, text, true
}

var (
	// headingAttrs is a trailing attribute list: "{#anchor}", "{ #about }",
	// "{.class #id}" (markdown-it-attrs, Python-Markdown's attr_list).
	headingAttrs = regexp.MustCompile(`\s*\{\s*[#.][^{}]*\}\s*$`)
	// htmlTag is an HTML or Vue component tag, opening, closing or
	// self-closing: <Badge type="info" text="optional" />, <code>, </code>.
	htmlTag = regexp.MustCompile(`</?[A-Za-z][A-Za-z0-9.:-]*(?:\s+[^<>]*?)?\s*/?>`)
	// mdLink is a link or image: [text](url), ![alt](src).
	mdLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^()\s]*(?:\s+"[^"]*")?\)`)
	spaces = regexp.MustCompile(`\s{2,}`)
)

// CleanHeading is a heading's text as a reader sees it: without its
// attribute list, HTML and Vue component tags (their inner text kept),
// link targets and emphasis marks, and code spans as their code.
// "`useData` <Badge type="info" text="composable" /> {#use-data}" is
// "useData"; "`<ClientOnly />`" is "<ClientOnly />".
func CleanHeading(text string) string {
	text = headingAttrs.ReplaceAllString(text, "")
	var b strings.Builder
	for text != "" {
		i := strings.IndexByte(text, '`')
		if i < 0 {
			b.WriteString(cleanProse(text))
			break
		}
		b.WriteString(cleanProse(text[:i]))
		n := 1
		for i+n < len(text) && text[i+n] == '`' {
			n++
		}
		fence := text[i : i+n]
		rest := text[i+n:]
		j := strings.Index(rest, fence)
		for j >= 0 && j+n < len(rest) && rest[j+n] == '`' {
			// a longer run of backticks does not close the span
			k := strings.Index(rest[j+n:], fence)
			if k < 0 {
				j = -1
				break
			}
			j += n + k
		}
		if j < 0 {
			b.WriteString(fence) // no closing run: literal backticks
			text = rest
			continue
		}
		b.WriteString(strings.TrimSpace(rest[:j]))
		text = rest[j+n:]
	}
	return strings.TrimSpace(spaces.ReplaceAllString(b.String(), " "))
}

// cleanProse strips the markup of heading text outside code spans.
func cleanProse(text string) string {
	text = htmlTag.ReplaceAllString(text, " ")
	text = mdLink.ReplaceAllString(text, "$1")
	return strings.NewReplacer("**", "", "__", "").Replace(text)
}

// setextLevel returns 1 for a "===" underline, 2 for "---", else 0.
func setextLevel(line string) int {
	t := strings.TrimSpace(line)
	if len(line)-len(strings.TrimLeft(line, " ")) > 3 || t == "" {
		return 0
	}
	if strings.Trim(t, "=") == "" {
		return 1
	}
	if strings.Trim(t, "-") == "" {
		return 2
	}
	return 0
}

// isPlainLine reports whether a line can be the text of a setext heading: a
// paragraph line that does not start a list, quote, table, HTML block or
// container.
func isPlainLine(line string) bool {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || t == "" || isListItem(t) {
		return false
	}
	return !strings.ContainsRune("-*+>|<:=#\t", rune(t[0]))
}

// isListItem reports whether line starts a list item: "- ", "* ", "+ ",
// "1. " or "1) " after any indentation.
func isListItem(line string) bool {
	t := strings.TrimLeft(line, " \t")
	if len(t) >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && (t[1] == ' ' || t[1] == '\t') {
		return true
	}
	d := 0
	for d < len(t) && d < 9 && t[d] >= '0' && t[d] <= '9' {
		d++
	}
	return d > 0 && d+1 < len(t) && (t[d] == '.' || t[d] == ')') && (t[d+1] == ' ' || t[d+1] == '\t')
}

// isTableRow reports whether line looks like a row of a pipe table.
func isTableRow(line string) bool {
	return strings.HasPrefix(strings.TrimLeft(line, " \t"), "|")
}

// mdSection is the text from one heading to the next.
type mdSection struct {
	group
	bodyEmpty bool // nothing but white space after the heading
	preamble  bool // the text before the first heading
}

// markdownGroups cuts a markdown document into sections on its headings and
// merges sections that would make useless chunks (see the package comment).
func (s *splitter) markdownGroups() []group {
	md := s.parseMarkdown()
	var secs []mdSection
	if len(md.heads) == 0 || md.heads[0].start > 0 {
		end := len(s.src)
		if len(md.heads) > 0 {
			end = md.heads[0].start
		}
		secs = append(secs, mdSection{
			group:     group{start: 0, end: end, k: kMarkdown},
			bodyEmpty: isBlank(s.src[:end]),
			preamble:  true,
		})
	}
	var stack []mdHead
	for i, h := range md.heads {
		for len(stack) > 0 && stack[len(stack)-1].level >= h.level {
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, h)
		path := make([]string, len(stack))
		for j, sh := range stack {
			path[j] = sh.text
		}
		end := len(s.src)
		if i+1 < len(md.heads) {
			end = md.heads[i+1].start
		}
		secs = append(secs, mdSection{
			group:     group{start: h.start, end: end, heading: path, k: kMarkdown},
			bodyEmpty: isBlank(s.src[h.end:end]),
		})
	}
	return s.mergeSmall(mergeEmpty(secs))
}

// mergeEmpty joins each section with no body (only a heading, or blank
// preamble) to the section after it. The joined section keeps the later
// heading path if it lies under the earlier one, else their common part.
// Empty sections at the very end stay as they are.
func mergeEmpty(secs []mdSection) []mdSection {
	var out []mdSection
	for i := 0; i < len(secs); i++ {
		sec := secs[i]
		j := i
		for secs[j].bodyEmpty && j+1 < len(secs) {
			j++
		}
		if j == i {
			out = append(out, sec)
			continue
		}
		last := secs[j]
		path := last.heading
		for k := j - 1; k >= i; k-- {
			if !secs[k].preamble && !isPrefix(secs[k].heading, path) {
				path = commonPrefix(path, secs[k].heading)
			}
		}
		last.start, last.heading = sec.start, path
		out = append(out, last)
		i = j
	}
	return out
}

// mergeSmall joins neighbouring sections when one of them is smaller than
// MinTokens, the two fit in MaxTokens together, and the joined heading path
// (their common part) drops at most one level from either. A small preamble
// joins the first section and takes its path.
func (s *splitter) mergeSmall(secs []mdSection) []group {
	var out []group
	var lastTokens int
	lastPreamble := false
	for _, sec := range secs {
		a, b := s.trim(sec.start, sec.end)
		tokens := s.count(a, b)
		if len(out) > 0 {
			last := &out[len(out)-1]
			if (lastTokens < s.opt.MinTokens || tokens < s.opt.MinTokens) &&
				lastTokens <= s.opt.MaxTokens && tokens <= s.opt.MaxTokens {
				path, ok := sec.heading, lastPreamble && lastTokens < s.opt.MinTokens
				if !ok {
					path = commonPrefix(last.heading, sec.heading)
					ok = len(path) >= len(last.heading)-1 && len(path) >= len(sec.heading)-1
				}
				if ok {
					a, b := s.trim(last.start, sec.end)
					if n := s.count(a, b); n <= s.opt.MaxTokens {
						last.end, last.heading = sec.end, path
						lastTokens, lastPreamble = n, false
						continue
					}
				}
			}
		}
		out = append(out, sec.group)
		lastTokens, lastPreamble = tokens, sec.preamble
	}
	return out
}

func isPrefix(prefix, path []string) bool {
	return len(prefix) <= len(path) && slices.Equal(prefix, path[:len(prefix)])
}

func commonPrefix(a, b []string) []string {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return a[:n:n]
}

// markdownBlocks cuts markdown sections into blocks: paragraphs, list items,
// fenced code blocks, tables and front matter. A heading starts a block and
// stays glued to the block after it. Code, tables and front matter are cut
// further by lines, other blocks by sentences.
func (s *splitter) markdownBlocks(a, b int) []part {
	md := s.parseMarkdown()
	c := newCutter(a, kProse)
	c.brk = brkHeading
	pos := a
	boundary := false // the next non-blank line starts a block
	if a == 0 && md.fmEnd > 0 {
		c.k = kLines
		pos = min(md.fmEnd, b)
		boundary = true
	}
	var f fence
	blank := false
	glued := false // the previous block is a heading: the next line joins it
	headEnd := -1
	inTable := false
	for pos < b {
		next := s.nextLine(pos, b)
		line := lineText(s.src[pos:next])
		switch {
		case pos < headEnd: // the underline of a setext heading
		case f.open:
			if f.closes(line) {
				f.open = false
				boundary = true
			}
		case isBlank(line):
			blank = true
		default:
			start := blank || boundary
			k := kProse
			if end, ok := md.headEnd[pos]; ok {
				c.at(pos, kProse, brkHeading)
				glued, headEnd, inTable = true, end, false
				blank, boundary = false, false
				break
			}
			switch {
			case f.opens(line):
				start, k = true, kLines
			case isTableRow(line):
				start, k = start || !inTable, kLines
				inTable = true
			case isListItem(line):
				start, inTable = true, false
			default:
				inTable = false
			}
			if glued {
				if k == kLines {
					c.k = kLines
				}
				glued = false
			} else if start {
				c.at(pos, k, brkBlock)
			}
			blank, boundary = false, false
		}
		pos = next
	}
	return c.done(b)
}

package react

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/sagasu-dev/sagasu/internal/cite"
)

// A section answer quotes the retrieved section that answers the question:
// whole when it is short, else its opening sentence and the sentences,
// list items, table rows and code blocks that carry the question's key
// terms. What it quotes is the section's own markdown, so code stays code
// and a table stays a table.

// blockKind is what a block of a section's markdown is.
type blockKind int

const (
	blockProse blockKind = iota
	blockList
	blockCode
	blockTable
	blockHeading
)

// block is a paragraph, a list, a fenced code block, a table or a
// sub-heading of a section, in the section's order.
type block struct {
	kind  blockKind
	lines []string
}

func (b block) text() string { return strings.Join(b.lines, "\n") }

// Sizes of a section answer.
const (
	// wholeRunes: a section up to this size (code included) is quoted whole.
	wholeRunes = 1400
	// partRunes bounds the prose quoted from a longer section.
	partRunes = 700
	// maxCodeLines bounds one quoted code block; a longer block is cut
	// with a note that points to the passage holding all of it.
	maxCodeLines = 40
	// maxTableRows bounds a quoted table's body rows.
	maxTableRows = 12
)

// mdxImport is an MDX file's import of a component, outside code.
var mdxImport = regexp.MustCompile(`^import\s+.*\s+from\s+['"][^'"]+['"];?$`)

// tagLine is a line of HTML or JSX markup alone (<Tabs>, </TabItem>,
// <p>, <Since v="4.0" />).
var tagLine = regexp.MustCompile(`^</?[A-Za-z][\w.-]*(\s[^>]*)?/?>$`)

// inlineTag is HTML markup inside a line of prose (<br />, <kbd>).
var inlineTag = regexp.MustCompile(`</?(?:br|kbd|code|em|strong|b|i|span|p|sup|sub)\b[^>]*>`)

// tabsOpen and tabsClose are the lines that open and close a group of
// tabs in MDX.
var (
	tabsOpen  = regexp.MustCompile(`^<(?:Tabs|PackageManagerTabs|CodeGroup)\b`)
	tabsClose = regexp.MustCompile(`^</(?:Tabs|PackageManagerTabs|CodeGroup)>`)
)

// imageRE is a markdown image: it is not quoted.
var imageRE = regexp.MustCompile(`!\[[^\]]*\]\([^)]*\)`)

// includeLine is a documentation tool's include of a file ({* path *}).
var includeLine = regexp.MustCompile(`^\{\*.*\*\}$`)

// fenceMark is the run of backticks or tildes that opens a fence.
func fenceMark(open string) string {
	n := 0
	for n < len(open) && open[n] == open[0] {
		n++
	}
	return open[:n]
}

// admonitionLine opens or closes a block of Python-Markdown's blocks
// extension (/// note | Title, then ///), as ::: does in VitePress.
var admonitionLine = regexp.MustCompile(`^///(?:\s.*)?$`)

// anchorRE is a heading's explicit anchor ({#id}, { #id }).
var anchorRE = regexp.MustCompile(`\s*\{\s*#[^}]*\}\s*$`)

// codeNoise is a line of a code block that only documentation tooling
// reads (twoslash's cut and type-query markers).
var codeNoise = regexp.MustCompile(`^\s*//\s*(?:---cut(?:-before|-after)?---|\^\?)\s*$`)

// blocksOf parses a section's markdown into blocks. Front matter, MDX
// imports, markup-only lines, admonition fences and include directives
// are left out; a chunk that starts inside a code block loses that
// fragment (it is not prose and not a whole block).
func blocksOf(text string) []block {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var out []block
	var cur *block
	flush := func() {
		if cur != nil && len(cur.lines) > 0 {
			out = append(out, *cur)
		}
		cur = nil
	}
	i := 0
	// Inside a group of tabs (::: code-group, <Tabs>, <PackageManagerTabs>)
	// the code blocks are alternatives: the first is quoted.
	group, groupCode := false, false
	// Front matter.
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	if i < len(lines) && strings.TrimSpace(lines[i]) == "---" {
		for j := i + 1; j < len(lines); j++ {
			if strings.TrimSpace(lines[j]) == "---" {
				i = j + 1
				break
			}
		}
	}
	if startsInCode(lines[i:]) {
		for j := i; j < len(lines); j++ {
			if fence.MatchString(lines[j]) {
				i = j + 1
				break
			}
		}
	}
	for ; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], " \t")
		t := strings.TrimSpace(line)
		switch {
		case fence.MatchString(line):
			flush()
			skip := group && groupCode
			groupCode = groupCode || group
			open := t
			indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
			code := block{kind: blockCode, lines: []string{fenceInfo(strings.TrimPrefix(line, indent))}}
			closed := false
			var fences cite.Fences
			fences.Line(line)
			for i++; i < len(lines); i++ {
				l := strings.TrimRight(lines[i], " \t")
				if fences.Line(l); !fences.Open() {
					code.lines = append(code.lines, strings.TrimPrefix(l, indent))
					closed = true
					break
				}
				if codeNoise.MatchString(l) {
					continue
				}
				code.lines = append(code.lines, strings.TrimPrefix(l, indent))
			}
			if !closed {
				code.lines = append(code.lines, fenceMark(open))
			}
			if !skip {
				out = append(out, code)
			}
			continue
		case strings.HasPrefix(t, "::: code-group") || tabsOpen.MatchString(t):
			flush()
			group, groupCode = true, false
			continue
		case group && (t == ":::" || tabsClose.MatchString(t)):
			flush()
			group = false
			continue
		case t == "":
			flush()
			continue
		case strings.HasPrefix(t, "#"):
			flush()
			h := anchorRE.ReplaceAllString(strings.TrimSpace(strings.TrimLeft(t, "#")), "")
			if i := strings.Index(h, " <"); i > 0 { // a badge
				h = strings.TrimSpace(h[:i])
			}
			if h != "" {
				out = append(out, block{kind: blockHeading, lines: []string{h}})
			}
			continue
		case mdxImport.MatchString(t) || tagLine.MatchString(t) || includeLine.MatchString(t) ||
			strings.HasPrefix(t, ":::") || admonitionLine.MatchString(t) || t == "---" || strings.HasPrefix(t, "<!--"):
			flush()
			continue
		case strings.HasPrefix(t, "|"):
			if cur == nil || cur.kind != blockTable {
				flush()
				cur = &block{kind: blockTable}
			}
			cur.lines = append(cur.lines, t)
			continue
		case listMark.MatchString(line) && !strings.HasPrefix(line, "    "):
			if cur == nil || cur.kind != blockList {
				flush()
				cur = &block{kind: blockList}
			}
			cur.lines = append(cur.lines, tidyLine(line))
			continue
		}
		if cur != nil && cur.kind == blockList {
			// A list item's continuation line.
			cur.lines[len(cur.lines)-1] += " " + tidyLine(t)
			continue
		}
		if tidyLine(t) == "" {
			continue
		}
		if cur == nil || cur.kind != blockProse {
			flush()
			cur = &block{kind: blockProse}
		}
		cur.lines = append(cur.lines, tidyLine(t))
	}
	flush()
	return out
}

// fenceInfo is an opening fence with its language only: words such as
// twoslash or a title={...} are for the documentation's tooling.
func fenceInfo(line string) string {
	t := strings.TrimSpace(line)
	f := strings.Fields(t[3:])
	if len(f) == 0 {
		return t[:3]
	}
	return t[:3] + f[0]
}

// tidyLine drops inline markup from a line of prose and trims it.
func tidyLine(s string) string {
	s = imageRE.ReplaceAllString(s, "")
	s = inlineTag.ReplaceAllString(s, " ")
	s = strings.Join(strings.Fields(s), " ")
	if m := listMark.FindString(s); m != "" {
		return strings.TrimSpace(m) + " " + strings.TrimSpace(s[len(m):])
	}
	return s
}

// proseOf is a prose or list block as one line of text (links keep their
// text): what the claim checker and the reader see.
func proseOf(b block) string {
	if b.kind == blockList {
		lines := make([]string, len(b.lines))
		for i, l := range b.lines {
			lines[i] = linkRE.ReplaceAllString(l, "$1")
		}
		return strings.Join(lines, "\n")
	}
	return linkRE.ReplaceAllString(strings.Join(b.lines, " "), "$1")
}

// sectionScore is how well a retrieved section answers the question: the
// question's key terms (weighted by how rare they are among the retrieved
// sections) found in its heading path and in its text, a small prior for
// its retrieval rank, and its closeness by meaning when the index has
// vectors (related: standard deviations above the index's mean).
type sectionScore struct {
	score   float64
	heading float64 // share of the question's weight in the heading path
	body    float64 // share of it in the text
	any     float64 // share of it in either
}

func scoreSection(q []string, idf func(string) float64, head, leaf, body map[string]bool, rank int, related float64) sectionScore {
	var total, inHead, inBody, inAny float64
	for _, t := range q {
		w := idf(t)
		total += w
		if head[t] {
			inHead += w
		}
		if body[t] {
			inBody += w
		}
		if head[t] || body[t] {
			inAny += w
		}
	}
	if total == 0 {
		return sectionScore{}
	}
	s := sectionScore{heading: inHead / total, body: inBody / total, any: inAny / total}
	// A section titled with the question's words is about it: the share
	// of its own heading's words that the question uses.
	about := 0.0
	if len(leaf) > 0 {
		n := 0
		for t := range leaf {
			if slices.Contains(q, t) {
				n++
			}
		}
		about = float64(n) / float64(len(leaf))
	}
	s.score = 0.8*s.heading + s.body + 0.6*inAny/total + 0.5*about + 0.25/float64(rank+1) +
		0.4*min(1, max(0, (related-1)/4))
	return s
}

// renderSection writes the answer's part quoted from one section, citing
// it as n: a bold title (its heading path), then its blocks, whole or only
// those that carry the question's key terms. Each paragraph and list ends
// with the citation marker; a code block or table is backed by the marker
// of the line before it.
func renderSection(an analyzer, q []string, title string, blocks []block, n int, lang Lang) string {
	m := marker([]int{n})
	var b strings.Builder
	b.WriteString("**" + title + "**" + citeSep(lang) + m)
	for len(blocks) > 0 && blocks[0].kind == blockHeading && strings.Contains(title, stripCode(blocks[0].lines[0])) {
		blocks = blocks[1:] // the title says it
	}
	keep := chooseBlocks(an, q, blocks)
	for i, bl := range blocks {
		if !keep[i] || dangling(blocks, keep, i) {
			continue
		}
		b.WriteString("\n\n")
		switch bl.kind {
		case blockHeading:
			b.WriteString("**" + stripCode(bl.lines[0]) + "**")
		case blockCode:
			b.WriteString(cutCode(bl, n, lang))
		case blockTable:
			b.WriteString(cutTable(an, q, bl, n, lang))
		default:
			b.WriteString(withMarker(proseOf(bl), m, lang))
		}
	}
	return b.String()
}

// dangling reports a paragraph that leads into something ("Example
// result:") that is not quoted after it: an image, a component, a block
// left out.
func dangling(blocks []block, keep []bool, i int) bool {
	if blocks[i].kind != blockProse {
		return false
	}
	t := strings.TrimSpace(blocks[i].text())
	if !strings.HasSuffix(t, ":") && !strings.HasSuffix(t, "：") {
		return false
	}
	if i+1 >= len(blocks) || !keep[i+1] {
		return true
	}
	k := blocks[i+1].kind
	return k == blockProse || k == blockHeading
}

// analyzer is what rendering needs of the analyzer.
type analyzer interface {
	Terms(text string) []string
}

// chooseBlocks picks the blocks of a section to quote: all of a short
// section; of a long one, the first paragraph, the blocks that carry the
// question's key terms (best first, within the size bound), and the code
// block or table a chosen paragraph leads into.
func chooseBlocks(an analyzer, q []string, blocks []block) []bool {
	keep := make([]bool, len(blocks))
	size := 0
	for _, b := range blocks {
		size += utf8.RuneCountInString(b.text())
	}
	if size <= wholeRunes {
		for i := range keep {
			keep[i] = true
		}
		return trimHeadings(blocks, keep)
	}
	want := map[string]bool{}
	for _, t := range q {
		want[t] = true
	}
	type scored struct {
		i int
		n int
	}
	var order []scored
	firstProse := -1
	for i, b := range blocks {
		if b.kind == blockHeading {
			continue
		}
		if b.kind == blockProse && firstProse < 0 {
			firstProse = i
		}
		seen := map[string]bool{}
		for _, t := range an.Terms(splitIdentifiers(b.text())) {
			if want[t] {
				seen[t] = true
			}
		}
		if len(seen) > 0 {
			order = append(order, scored{i, len(seen)})
		}
	}
	// Best first; ties keep the section's order.
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && order[j].n > order[j-1].n; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	prose, code := 0, 0
	take := func(i int) {
		if keep[i] {
			return
		}
		keep[i] = true
		if blocks[i].kind == blockCode || blocks[i].kind == blockTable {
			code++
		} else {
			prose += utf8.RuneCountInString(blocks[i].text())
		}
		// A paragraph that leads into a code block or table brings it.
		if (blocks[i].kind == blockProse || blocks[i].kind == blockList) && i+1 < len(blocks) &&
			(blocks[i+1].kind == blockCode || blocks[i+1].kind == blockTable) {
			keep[i+1] = true
			code++
		}
		// A code block or table is introduced by the paragraph before it.
		if (blocks[i].kind == blockCode || blocks[i].kind == blockTable) && i > 0 && blocks[i-1].kind == blockProse {
			keep[i-1] = true
		}
	}
	if firstProse >= 0 {
		take(firstProse)
	}
	for _, s := range order {
		if prose >= partRunes || code >= 3 {
			break
		}
		kind := blocks[s.i].kind
		if (kind == blockCode || kind == blockTable) && code >= 2 {
			continue
		}
		take(s.i)
	}
	return trimHeadings(blocks, keep)
}

// trimHeadings drops sub-headings that nothing kept follows.
func trimHeadings(blocks []block, keep []bool) []bool {
	for i, b := range blocks {
		if b.kind != blockHeading || !keep[i] && i > 0 {
			continue
		}
		next := false
		for j := i + 1; j < len(blocks) && blocks[j].kind != blockHeading; j++ {
			if keep[j] {
				next = true
				break
			}
		}
		keep[i] = next
	}
	return keep
}

// cutNoteRE matches the note that follows a cut code block or table: it
// is the answer's own, not a claim.
var cutNoteRE = regexp.MustCompile(`^\*\((?:cut|一部):? [^)]*\)\*(?:\s*\[\d+\])*$`)

// cutCode is a code block, cut after maxCodeLines lines with a note that
// says how much is left out and which passage holds all of it.
func cutCode(bl block, n int, lang Lang) string {
	body := bl.lines[1 : len(bl.lines)-1]
	if len(body) <= maxCodeLines {
		return bl.text()
	}
	kept := append([]string{bl.lines[0]}, body[:maxCodeLines]...)
	kept = append(kept, bl.lines[len(bl.lines)-1])
	return strings.Join(kept, "\n") + "\n\n" + cutNote(len(body)-maxCodeLines, "lines", n, lang)
}

// cutNote says what a cut left out and where the whole is.
func cutNote(more int, what string, n int, lang Lang) string {
	if lang == LangJapanese {
		unit := "行"
		if what == "rows" {
			unit = "行（表）"
		}
		return fmt.Sprintf("*(一部: 残り %d %sは [%d] にあります)*", more, unit, n)
	}
	return fmt.Sprintf("*(cut: %d more %s in [%d])*", more, what, n)
}

// cutTable is a table, its body rows cut to those that carry the
// question's key terms when it has more than maxTableRows.
func cutTable(an analyzer, q []string, bl block, n int, lang Lang) string {
	if len(bl.lines) <= maxTableRows+2 {
		return bl.text()
	}
	want := map[string]bool{}
	for _, t := range q {
		want[t] = true
	}
	head := bl.lines[:2]
	var rows []string
	for _, r := range bl.lines[2:] {
		for _, t := range an.Terms(splitIdentifiers(r)) {
			if want[t] {
				rows = append(rows, r)
				break
			}
		}
		if len(rows) == maxTableRows {
			break
		}
	}
	if len(rows) == 0 {
		rows = bl.lines[2 : 2+maxTableRows]
	}
	out := strings.Join(append(append([]string{}, head...), rows...), "\n")
	return out + "\n\n" + cutNote(len(bl.lines)-2-len(rows), "rows", n, lang)
}

// withMarker puts a citation marker at the end of a paragraph or list:
// after the last sentence's end in English ("… it. [1]"), before the
// closing 。 in Japanese ("…します[1]。").
func withMarker(text, m string, lang Lang) string {
	text = strings.TrimRight(text, " ")
	if lang == LangJapanese || strings.HasSuffix(text, "。") {
		if strings.HasSuffix(text, "。") {
			return strings.TrimSuffix(text, "。") + m + "。"
		}
		return text + m
	}
	return text + " " + m
}

// citeSep is what stands between a text and its marker.
func citeSep(lang Lang) string {
	if lang == LangJapanese {
		return ""
	}
	return " "
}

// stripCode removes backticks around a heading's names.
func stripCode(s string) string { return strings.ReplaceAll(s, "`", "") }

// idfOver returns an IDF over a collection of term sets.
func idfOver(sets []map[string]bool) func(string) float64 {
	n := float64(len(sets))
	return func(t string) float64 {
		d := 0.0
		for _, s := range sets {
			if s[t] {
				d++
			}
		}
		return math.Log(1 + (n-d+0.5)/(d+0.5))
	}
}

package source

import (
	"fmt"
	"path"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/sagasu-dev/sagasu/internal/clip"
	"github.com/sagasu-dev/sagasu/internal/doc"
)

// FromText makes a document of text given directly, on the command line or
// by an agent. Its URI is "text:" and the first 12 hex digits of the
// content's hash, so the same text always has the same URI. Its format is
// markdown if the text looks like markdown, else text. An empty title is
// taken from the text: its markdown title, else its first line. Invalid
// UTF-8 is replaced with U+FFFD.
func FromText(text, title string) doc.Document {
	if !utf8.ValidString(text) {
		text, _ = repairUTF8(text)
	}
	d := textDocument("text:", text, title)
	if d.Title == "" {
		d.Title = firstLine(text, 80)
	}
	if d.Title == "" {
		d.Title = d.URI
	}
	return d
}

// textDocument builds a document of type text whose URI is prefix plus a
// hash prefix. Title is left empty when neither title nor markdown gives one.
func textDocument(prefix, text, title string) doc.Document {
	format := doc.FormatText
	if looksLikeMarkdown(text) {
		format = doc.FormatMarkdown
	}
	title = strings.TrimSpace(title)
	if title == "" && format == doc.FormatMarkdown {
		title = markdownTitle(text)
	}
	return doc.Document{
		URI:     prefix + doc.ContentHash(text)[:12],
		Type:    doc.TypeText,
		Format:  format,
		Title:   title,
		Content: text,
	}
}

// fileDocument builds the document of a file whose URI is uri.
func fileDocument(uri, text string) doc.Document {
	format, lang := Detect(uri)
	title := ""
	if format == doc.FormatMarkdown {
		title = markdownTitle(text)
	}
	if title == "" {
		title = path.Base(uri)
	}
	return doc.Document{
		URI:     uri,
		Type:    doc.TypeFile,
		Format:  format,
		Title:   title,
		Content: text,
		Lang:    lang,
	}
}

// firstLine returns the first non-blank line of s, cut to at most max runes.
func firstLine(s string, max int) string {
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		return clip.Runes(line, max)
	}
	return ""
}

// maxTitle is the most runes of a title taken from a document's text.
const maxTitle = 200

// addLine adds a line to a paragraph, keeping only the first few: a heading
// longer than that is clipped anyway.
func addLine(para []string, line string) []string {
	if len(para) >= 8 {
		return para
	}
	return append(para, line)
}

// sniffLen is how much of a file is searched for a NUL byte.
const sniffLen = 8 << 10

// decodeText turns raw bytes into valid UTF-8 text, as decodeString does.
func decodeText(data []byte) (text string, repaired int, err error) {
	return decodeString(string(data))
}

// decodeString turns raw bytes, held in a string, into valid UTF-8 text. A
// leading UTF-8 byte order mark is dropped, and UTF-16 with a byte order
// mark is converted. Data with a NUL byte in its first 8 KB, or with more
// than a quarter of its bytes invalid UTF-8, is binary: decodeString returns
// an error saying which. Otherwise invalid bytes are replaced with U+FFFD and
// repaired counts them. Valid UTF-8 is returned as it is, a substring of
// data and never a copy, so a large file is held in memory once.
func decodeString(data string) (text string, repaired int, err error) {
	if s, ok := decodeUTF16(data); ok {
		data = s
	}
	data = strings.TrimPrefix(data, "\xEF\xBB\xBF")
	if i := strings.IndexByte(data[:min(len(data), sniffLen)], 0); i >= 0 {
		return "", 0, fmt.Errorf("looks binary: NUL byte at offset %d", i)
	}
	if utf8.ValidString(data) {
		return data, 0, nil
	}
	text, repaired = repairUTF8(data)
	if repaired*4 > len(data) {
		return "", 0, fmt.Errorf("looks binary: %d of %d bytes are not UTF-8 (a legacy encoding such as Shift_JIS or Latin-1 must be converted to UTF-8 first)", repaired, len(data))
	}
	return text, repaired, nil
}

// repairUTF8 replaces every byte that is not part of a valid UTF-8 sequence
// with U+FFFD and returns how many it replaced.
func repairUTF8(data string) (string, int) {
	var b strings.Builder
	b.Grow(len(data) + 16)
	bad := 0
	for len(data) > 0 {
		r, size := utf8.DecodeRuneInString(data)
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
			bad++
		} else {
			b.WriteString(data[:size])
		}
		data = data[size:]
	}
	return b.String(), bad
}

// decodeUTF16 converts UTF-16 that starts with a byte order mark, as some
// Windows editors save text. Other data is left alone.
func decodeUTF16(data string) (string, bool) {
	if len(data) < 2 || len(data)%2 != 0 {
		return "", false
	}
	var big bool
	switch {
	case data[0] == 0xFE && data[1] == 0xFF:
		big = true
	case data[0] == 0xFF && data[1] == 0xFE:
	default:
		return "", false
	}
	units := make([]uint16, 0, len(data)/2-1)
	for i := 2; i+1 < len(data); i += 2 {
		if big {
			units = append(units, uint16(data[i])<<8|uint16(data[i+1]))
		} else {
			units = append(units, uint16(data[i+1])<<8|uint16(data[i]))
		}
	}
	return string(utf16.Decode(units)), true
}

// markdownTitle returns a markdown document's title: front matter "title",
// else the first level-1 heading (ATX "# Title" or setext "Title\n====="),
// outside fenced and indented code. It returns "" when there is none.
func markdownTitle(s string) string {
	fm, fmBytes := frontMatterLines(s)
	title, end := frontMatterTitle(fm)
	if title != "" {
		return clip.Runes(title, maxTitle)
	}
	if end == 0 {
		fmBytes = 0
	}

	var para []string // the paragraph so far, for setext headings
	fence := ""       // the open code fence, if any
	for line := range strings.Lines(s[fmBytes:]) {
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		indent, rest := splitIndent(line)
		if fence != "" {
			if indent < 4 && strings.HasPrefix(rest, fence) && strings.Trim(rest, fence[:1]+" \t") == "" {
				fence = ""
			}
			continue
		}
		switch {
		case rest == "":
			para = nil
		case indent >= 4 && para == nil:
			// indented code
		case indent >= 4:
			para = addLine(para, rest) // paragraph continuation
		case strings.HasPrefix(rest, "```") || strings.HasPrefix(rest, "~~~"):
			fence = openingFence(rest)
			para = nil
		case strings.HasPrefix(rest, "#"):
			level := len(rest) - len(strings.TrimLeft(rest, "#"))
			text := rest[level:]
			if level > 6 || (text != "" && text[0] != ' ' && text[0] != '\t') {
				para = addLine(para, rest) // "#hashtag" is text
				continue
			}
			if level == 1 {
				if t := atxText(text); t != "" {
					return clip.Runes(t, maxTitle)
				}
			}
			para = nil
		case para != nil && strings.Trim(rest, "=") == "":
			return clip.Runes(strings.Join(para, " "), maxTitle)
		case para != nil && strings.Trim(rest, "- \t") == "":
			para = nil // a setext level-2 heading
		default:
			para = addLine(para, rest)
		}
	}
	return ""
}

// splitIndent returns the width of a line's leading whitespace (a tab
// counts 4) and the line without it or trailing whitespace.
func splitIndent(line string) (int, string) {
	width := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case ' ':
			width++
		case '\t':
			width += 4 - width%4
		default:
			return width, strings.TrimRight(line[i:], " \t")
		}
	}
	return width, ""
}

// openingFence returns the run of backticks or tildes that opens a fence.
func openingFence(s string) string {
	n := len(s) - len(strings.TrimLeft(s, s[:1]))
	return s[:n]
}

// atxText strips an ATX heading's optional closing "#"s: "Title ##" is
// "Title", but "C#" stays.
func atxText(s string) string {
	s = strings.TrimSpace(s)
	trimmed := strings.TrimRight(s, "#")
	if trimmed == "" {
		return ""
	}
	if trimmed != s && (strings.HasSuffix(trimmed, " ") || strings.HasSuffix(trimmed, "\t")) {
		s = strings.TrimSpace(trimmed)
	}
	return s
}

// frontMatterLines returns the lines (without line breaks) of the front
// matter block that a document may start with, up to and including its
// closing delimiter, and how many bytes of s they take. A document that does
// not start with a delimiter line gives none; an unclosed block gives every
// line. Only these lines are split, not the whole document.
func frontMatterLines(s string) (lines []string, n int) {
	delim := ""
	for line := range strings.Lines(s) {
		n += len(line)
		l := strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		lines = append(lines, l)
		t := strings.TrimRight(l, " \t\r")
		if len(lines) == 1 {
			if t != "---" && t != "+++" {
				return lines, n
			}
			delim = t
			continue
		}
		if t == delim || (delim == "---" && t == "...") {
			return lines, n
		}
	}
	return lines, n
}

// frontMatterTitle reads a YAML ("---") or TOML ("+++") front matter block
// at the top of a document. end is the index of the first line after the
// block, 0 if there is none; title is "" if the block has none.
func frontMatterTitle(lines []string) (title string, end int) {
	if len(lines) == 0 {
		return "", 0
	}
	delim := strings.TrimRight(lines[0], " \t\r")
	if delim != "---" && delim != "+++" {
		return "", 0
	}
	closing := -1
	for i := 1; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], " \t\r")
		if l == delim || (delim == "---" && l == "...") {
			closing = i
			break
		}
	}
	if closing < 0 {
		return "", 0
	}
	block := lines[1:closing]
	for i, l := range block {
		var value string
		var ok bool
		if delim == "---" {
			value, ok = yamlKey(l, "title", ':')
		} else {
			value, ok = yamlKey(l, "title", '=')
		}
		if !ok {
			continue
		}
		if delim == "---" && (value == "" || strings.ContainsAny(value[:1], "|>")) {
			value = blockScalar(block[i+1:])
		}
		if value = unquote(value); value != "" {
			return value, closing + 1
		}
	}
	return "", closing + 1
}

// yamlKey returns the value of a top-level "key: value" (or "key = value")
// line. The key is matched without regard to case.
func yamlKey(line, key string, sep byte) (string, bool) {
	if len(line) <= len(key) || !strings.EqualFold(line[:len(key)], key) {
		return "", false
	}
	rest := strings.TrimLeft(line[len(key):], " \t")
	if rest == "" || rest[0] != sep {
		return "", false
	}
	return strings.TrimSpace(rest[1:]), true
}

// blockScalar joins the indented lines of a YAML "|" or ">" value.
func blockScalar(lines []string) string {
	var parts []string
	for _, l := range lines {
		if l != "" && l[0] != ' ' && l[0] != '\t' {
			break
		}
		if t := strings.TrimSpace(l); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, " ")
}

// unquote strips YAML/TOML quotes from a scalar, or a trailing comment from
// an unquoted one.
func unquote(v string) string {
	switch {
	case len(v) >= 2 && v[0] == '"':
		if end := strings.LastIndexByte(v, '"'); end > 0 {
			inner := v[1:end]
			var b strings.Builder
			for i := 0; i < len(inner); i++ {
				if inner[i] == '\\' && i+1 < len(inner) {
					i++
					switch inner[i] {
					case 'n':
						b.WriteByte(' ')
						continue
					case 't':
						b.WriteByte('\t')
						continue
					}
				}
				b.WriteByte(inner[i])
			}
			return strings.TrimSpace(b.String())
		}
	case len(v) >= 2 && v[0] == '\'':
		if end := strings.LastIndexByte(v, '\''); end > 0 {
			return strings.TrimSpace(strings.ReplaceAll(v[1:end], "''", "'"))
		}
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(v)
}

// looksLikeMarkdown guesses whether plain text is markdown: a heading, a
// code fence, a link or a table is enough; otherwise it needs two kinds of
// lighter markup (lists, quotes, emphasis, inline code).
func looksLikeMarkdown(s string) bool {
	if _, end := frontMatterTitle(strings.SplitN(s, "\n", 200)); end > 0 {
		return true
	}
	var list, quote, emphasis, code bool
	prevText := false
	for line := range strings.Lines(s) {
		line = strings.TrimRight(line, "\r\n")
		_, t := splitIndent(line)
		switch {
		case t == "":
			prevText = false
			continue
		case isATXHeading(t):
			return true
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			return true
		case prevText && (strings.Trim(t, "=") == "" || (len(t) >= 3 && strings.Trim(t, "-") == "")):
			return true // setext underline
		case strings.HasPrefix(t, "|") && strings.Contains(t, "---") && strings.Trim(t, "|-: \t") == "":
			return true // table delimiter row
		case strings.HasPrefix(t, "> "):
			quote = true
		case isListItem(t):
			list = true
		}
		if hasLink(t) {
			return true
		}
		if strings.Contains(t, "**") || strings.Contains(t, "__") {
			emphasis = true
		}
		if strings.Count(t, "`") >= 2 {
			code = true
		}
		prevText = true
	}
	kinds := 0
	for _, k := range []bool{list, quote, emphasis, code} {
		if k {
			kinds++
		}
	}
	return kinds >= 2
}

func isATXHeading(t string) bool {
	level := len(t) - len(strings.TrimLeft(t, "#"))
	if level == 0 || level > 6 {
		return false
	}
	return len(t) > level && (t[level] == ' ' || t[level] == '\t') && strings.TrimSpace(t[level:]) != ""
}

func isListItem(t string) bool {
	if len(t) >= 2 && strings.ContainsRune("-*+", rune(t[0])) && t[1] == ' ' {
		return true
	}
	digits := len(t) - len(strings.TrimLeft(t, "0123456789"))
	return digits > 0 && digits < 10 && len(t) > digits+1 &&
		(t[digits] == '.' || t[digits] == ')') && t[digits+1] == ' '
}

// hasLink reports an inline link or image: "[text](target)".
func hasLink(t string) bool {
	for {
		i := strings.Index(t, "](")
		if i < 0 {
			return false
		}
		open := strings.LastIndexByte(t[:i], '[')
		end := strings.IndexByte(t[i+2:], ')')
		if end < 0 {
			return false // no ")" anywhere after: no link, and no need to look again
		}
		if open >= 0 && i-open > 1 && end > 0 && !strings.ContainsAny(t[i+2:i+2+end], " \t") {
			return true
		}
		t = t[i+2:]
	}
}

package source

import (
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// HTMLToMarkdown turns an HTML page into markdown-like text for indexing:
// h1–h6 become "#" headings (so the markdown chunker gives heading paths),
// paragraphs and list items their own lines, pre blocks fenced code, tables
// rows of "a | b" cells. Scripts, styles, forms and page chrome (nav,
// header, footer, aside) are dropped; when the page has a <main> element, or
// exactly one <article>, only that is kept. title is the page's <title>
// ("" if none).
func HTMLToMarkdown(src string) (markdown, title string) {
	root, err := html.Parse(strings.NewReader(src))
	if err != nil {
		// html.Parse only fails on reader errors; a string reader has none.
		return src, ""
	}
	if t := find(root, func(n *html.Node) bool { return n.DataAtom == atom.Title }); t != nil {
		title = collapse(textOf(t))
	}
	body := find(root, func(n *html.Node) bool { return n.DataAtom == atom.Body })
	if body == nil {
		body = root
	}
	start, chrome := body, true
	if m := find(body, func(n *html.Node) bool {
		return n.DataAtom == atom.Main || attr(n, "role") == "main"
	}); m != nil {
		start, chrome = m, false
	} else if arts := findAll(body, atom.Article); len(arts) == 1 {
		start, chrome = arts[0], false
	}
	w := &mdWriter{dropChrome: chrome}
	w.children(start)
	return strings.TrimSpace(w.b.String()) + "\n", title
}

// mdWriter accumulates the markdown.
type mdWriter struct {
	b          strings.Builder
	dropChrome bool // drop header/footer/aside (outside <main>)
	space      bool // a space is owed before the next word
	depth      int  // list nesting
	inPre      bool
}

func (w *mdWriter) children(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.node(c)
	}
}

func (w *mdWriter) atLineStart() bool {
	s := w.b.String()
	return s == "" || strings.HasSuffix(s, "\n")
}

// blank ends the current block with an empty line.
func (w *mdWriter) blank() {
	w.space = false
	s := w.b.String()
	switch {
	case s == "" || strings.HasSuffix(s, "\n\n"):
	case strings.HasSuffix(s, "\n"):
		w.b.WriteByte('\n')
	default:
		w.b.WriteString("\n\n")
	}
}

func (w *mdWriter) newline() {
	w.space = false
	if !w.atLineStart() {
		w.b.WriteByte('\n')
	}
}

// text writes inline text with whitespace collapsed.
func (w *mdWriter) text(s string) {
	if w.inPre {
		w.b.WriteString(s)
		return
	}
	if s != "" && isSpace(s[0]) {
		w.space = true
	}
	words := strings.Fields(s)
	for i, word := range words {
		if w.atLineStart() {
			if strings.HasPrefix(word, "#") || strings.HasPrefix(word, "```") || word == "---" {
				word = `\` + word // text, not markdown structure
			}
		} else if w.space || i > 0 {
			w.b.WriteByte(' ')
		}
		w.b.WriteString(word)
		w.space = false
	}
	if len(words) > 0 && isSpace(s[len(s)-1]) {
		w.space = true
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' }

func (w *mdWriter) node(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		w.text(n.Data)
		return
	case html.ElementNode:
	default:
		return
	}
	switch n.DataAtom {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Svg, atom.Canvas,
		atom.Iframe, atom.Object, atom.Form, atom.Button, atom.Select, atom.Nav, atom.Head, atom.Img:
		return
	case atom.Header, atom.Footer, atom.Aside:
		if w.dropChrome {
			return
		}
		w.block(n)
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		level := int(n.Data[1] - '0')
		heading := collapse(textOf(n))
		if heading == "" {
			return
		}
		w.blank()
		w.b.WriteString(strings.Repeat("#", level) + " " + heading)
		w.blank()
	case atom.Br:
		w.newline()
	case atom.Hr:
		w.blank()
	case atom.Pre:
		code := textOf(n)
		fence := "```"
		for strings.Contains(code, fence) {
			fence += "`"
		}
		w.blank()
		w.b.WriteString(fence + "\n" + strings.TrimRight(code, "\n") + "\n" + fence)
		w.blank()
	case atom.Code, atom.Kbd, atom.Samp:
		if t := collapse(textOf(n)); t != "" {
			if w.space && !w.atLineStart() {
				w.b.WriteByte(' ')
			}
			w.b.WriteString("`" + t + "`")
			w.space = false
		}
	case atom.Ul, atom.Ol:
		if w.depth == 0 {
			w.blank()
		}
		w.depth++
		i := 0
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode || c.DataAtom != atom.Li {
				w.node(c)
				continue
			}
			i++
			w.newline()
			marker := "- "
			if n.DataAtom == atom.Ol {
				marker = strconv.Itoa(i) + ". "
			}
			w.b.WriteString(strings.Repeat("  ", w.depth-1) + marker)
			w.children(c)
		}
		w.depth--
		if w.depth == 0 {
			w.blank()
		} else {
			w.newline()
		}
	case atom.Tr:
		w.newline()
		first := true
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode || (c.DataAtom != atom.Td && c.DataAtom != atom.Th) {
				continue
			}
			if !first {
				w.b.WriteString(" | ")
			}
			first = false
			w.b.WriteString(collapse(textOf(c)))
		}
		w.newline()
	case atom.Table:
		w.blank()
		w.children(n)
		w.blank()
	case atom.P, atom.Div, atom.Section, atom.Article, atom.Main, atom.Blockquote, atom.Figure,
		atom.Figcaption, atom.Dl, atom.Dt, atom.Dd, atom.Address, atom.Details, atom.Summary,
		atom.Li, atom.Body, atom.Html:
		w.block(n)
	default:
		w.children(n)
	}
}

func (w *mdWriter) block(n *html.Node) {
	if w.depth > 0 {
		// Inside a list item a block stays on the item's line.
		w.children(n)
		return
	}
	w.blank()
	w.children(n)
	w.blank()
}

// textOf is the text inside n, scripts and styles left out.
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch {
		case n.Type == html.TextNode:
			b.WriteString(n.Data)
		case n.Type == html.ElementNode && (n.DataAtom == atom.Script || n.DataAtom == atom.Style):
			return
		case n.Type == html.ElementNode && n.DataAtom == atom.Br:
			b.WriteByte('\n')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// find returns the first node, depth first, for which ok holds.
func find(n *html.Node, ok func(*html.Node) bool) *html.Node {
	if n.Type == html.ElementNode && ok(n) {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := find(c, ok); f != nil {
			return f
		}
	}
	return nil
}

func findAll(n *html.Node, a atom.Atom) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.DataAtom == a {
			out = append(out, n)
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

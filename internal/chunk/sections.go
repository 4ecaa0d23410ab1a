package chunk

// Section is one section of a markdown document: a heading and everything
// under it, subsections included.
type Section struct {
	Heading    []string // heading path, outermost first
	Level      int      // 1–6
	Start, End int      // byte span [Start, End): the heading line up to the next heading of the same or a higher level
}

// Sections lists the sections of a markdown document in document order,
// with the same heading rules the splitter uses (ATX and setext headings,
// never inside fenced code).
func Sections(content string) []Section {
	s := &splitter{src: content}
	md := s.parseMarkdown()
	out := make([]Section, 0, len(md.heads))
	var stack []int // indexes into out of the open sections
	for _, h := range md.heads {
		for len(stack) > 0 && out[stack[len(stack)-1]].Level >= h.level {
			out[stack[len(stack)-1]].End = h.start
			stack = stack[:len(stack)-1]
		}
		path := make([]string, 0, len(stack)+1)
		for _, i := range stack {
			path = append(path, out[i].Heading[len(out[i].Heading)-1])
		}
		path = append(path, h.text)
		out = append(out, Section{Heading: path, Level: h.level, Start: h.start, End: len(content)})
		stack = append(stack, len(out)-1)
	}
	return out
}

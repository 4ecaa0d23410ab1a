package chunk

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/sagasu-dev/sagasu/internal/doc"
)

var fuzzFormats = []doc.Format{doc.FormatMarkdown, doc.FormatGo, doc.FormatCode, doc.FormatText}

// FuzzSplit checks the invariants on arbitrary content, formats and sizes.
// Its seeds are the fixtures and a few real files, so that mutations start
// from realistic documents.
func FuzzSplit(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*")
	seeds = append(seeds, "chunk.go", "markdown.go", "doc.go")
	for i, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 {
			continue
		}
		f.Add(string(b), uint8(i), uint16(24+i*40), uint8(i*3))
	}
	for _, in := range []string{
		"", " \n", "# a\n## b\n### c\n", "---\nx: 1\n---\n# T\n\ntext\n", "```\n# x\n```\n# y\nz\n",
		"a\xffb\xc3", "日本語。テスト！", "Title\n=====\n\nbody\n\nSub\n---\nmore\n", "\t\t}}}{{{",
		"package p\nfunc f() {}\n", "- a\n- b\n\n| x | y |\n|---|---|\n| 1 | 2 |\n",
	} {
		f.Add(in, uint8(len(in)), uint16(len(in)), uint8(len(in)))
	}
	f.Fuzz(func(t *testing.T, content string, format uint8, maxTokens uint16, overlap uint8) {
		opt := fuzzOptions(maxTokens, overlap, format&0x80 != 0)
		d := doc.Document{URI: "fuzz", Format: fuzzFormats[int(format)%len(fuzzFormats)], Content: content}
		checkSplit(t, d, opt)
	})
}

// fuzzOptions turns fuzzed numbers into valid Options: MaxTokens 4–1027, any
// allowed overlap (255 turns it off), small-section merging on or off.
func fuzzOptions(maxTokens uint16, overlap uint8, noMerge bool) Options {
	opt := Options{MaxTokens: 4 + int(maxTokens%1024)}
	switch {
	case overlap == 255:
		opt.Overlap = -1
	case opt.MaxTokens > 2:
		opt.Overlap = int(overlap) % ((opt.MaxTokens + 1) / 2) // 0 means the default
	}
	if noMerge {
		opt.MinTokens = -1
	}
	return opt
}

// addFileSeeds adds the files as seeds of a fuzz target taking content,
// maxTokens, overlap and a merge switch, at a few sizes each.
func addFileSeeds(f *testing.F, files ...string) {
	for i, p := range files {
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 {
			continue
		}
		for _, size := range []uint16{16, 60, 300} {
			f.Add(string(b), size+uint16(i), uint8(i), i%2 == 0)
		}
	}
}

// fuzzFormat is the body shared by the per-format targets: the package
// invariants (checkSplit: no chunk over MaxTokens, chunks cover every
// non-space byte of the input, spans and lines exact), determinism, and
// whatever more check adds for the format.
func fuzzFormat(f *testing.F, format doc.Format, check func(t *testing.T, content string, chunks []doc.Chunk)) {
	f.Fuzz(func(t *testing.T, content string, maxTokens uint16, overlap uint8, noMerge bool) {
		opt := fuzzOptions(maxTokens, overlap, noMerge)
		d := doc.Document{URI: "fuzz", Format: format, Content: content}
		chunks := checkSplit(t, d, opt)
		again, err := Split(d, opt)
		if err != nil || !reflect.DeepEqual(chunks, again) {
			t.Fatalf("splitting the same %s twice gave different chunks (err %v)", format, err)
		}
		if check != nil {
			check(t, content, chunks)
		}
	})
}

// noHeadings is the check for formats whose chunks have no heading path.
func noHeadings(t *testing.T, _ string, chunks []doc.Chunk) {
	for _, c := range chunks {
		if len(c.Heading) != 0 {
			t.Fatalf("chunk %d of a headingless format has heading %q", c.Index, c.Heading)
		}
	}
}

// FuzzSplitText fuzzes the plain-text splitter: paragraphs, sentences (with
// Japanese sentence ends), lines, words and runes.
func FuzzSplitText(f *testing.F) {
	addFileSeeds(f, "testdata/essay.txt", "doc.go")
	for _, in := range []string{
		"", "a", " \n\t", "One. Two! Three? Four.\n\nNext paragraph.", "日本語の文。次の文！「引用。」最後？",
		"word " + strings.Repeat("x", 300), "a\xffb\xc3\n\n\xe3\x81", "(quoted.) \"Ends.\" Then\r\n\r\nmore",
		"\u3000全角\u3000空白。\u2028line sep\u00a0nbsp", "1,2;3、4，5；6：7",
	} {
		f.Add(in, uint16(len(in)), uint8(len(in)), false)
	}
	fuzzFormat(f, doc.FormatText, noHeadings)
}

// FuzzSplitCode fuzzes the language-agnostic code splitter: bracket and
// indentation nesting, strings and comments.
func FuzzSplitCode(f *testing.F) {
	addFileSeeds(f, "testdata/tasks.py", "testdata/store.go", "code.go")
	for _, in := range []string{
		"", "}", "{{{{", "def f():\n    return 1\n\n\nclass A:\n    pass\n", "/* open comment\nx = 1\n",
		"s = \"unterminated\nnext = `raw\nstring`\n", "# comment\n#!shebang\n\tx()", "a = [\n1,\n2,\n]\n\n\nb = (\n)\n",
	} {
		f.Add(in, uint16(len(in)), uint8(len(in)), true)
	}
	fuzzFormat(f, doc.FormatCode, noHeadings)
}

// FuzzSplitGo fuzzes the Go splitter: one group per declaration, named
// after it. Every word of a chunk's heading ("func (s *Store) Put",
// "const (A, B, C, …)") must occur in the source.
func FuzzSplitGo(f *testing.F) {
	addFileSeeds(f, "testdata/store.go", "gosrc.go", "chunk.go")
	for _, in := range []string{
		"package p\n", "package p\n\nimport \"fmt\"\n\nfunc f() { fmt.Println() }\n",
		"package p\n// Doc.\ntype T struct{ A int }\n\nfunc (t *T) M() {}; func g() {}\n",
		"package p\nconst (\n\tA = iota\n\tB\n\tC\n\tD\n)\nvar x, y = 1, 2\n", "package p\nfunc broken(\n",
		"package p\n\nfunc (Recv[T]) Generic[U any]() {}\n", "package 日本\nvar 変数 = \"値\"\n",
	} {
		f.Add(in, uint16(len(in)), uint8(len(in)), false)
	}
	fuzzFormat(f, doc.FormatGo, func(t *testing.T, content string, chunks []doc.Chunk) {
		for _, c := range chunks {
			for _, h := range c.Heading {
				for _, w := range strings.FieldsFunc(h, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' }) {
					if !strings.Contains(content, w) {
						t.Fatalf("chunk %d heading %q: %q is not in the source", c.Index, h, w)
					}
				}
			}
		}
	})
}

// FuzzSplitMarkdown fuzzes the markdown splitter. Besides the package
// invariants, every chunk's heading path must be a path the document's
// headings make: a prefix of the path of a section (Sections), whose
// headings FuzzSections checks are written in the text. (A heading with an
// empty section takes the path of the section after it, so the section need
// not overlap the chunk.)
func FuzzSplitMarkdown(f *testing.F) {
	addFileSeeds(f, "testdata/guide.md", "../../README.md", "../../docs/design.md")
	for _, in := range []string{
		"", "#", "# a\n## b\n### c\n", "---\ntitle: x\n---\n# T\n\ntext\n", "```\n# x\n```\n# y\nz\n",
		"Title\n=====\n\nbody\n\nSub\n---\nmore\n", "## Heading ##\n# C#\n#hashtag\n   # indented\n    # code\n",
		"# 見出し {#anchor}\n本文。\n\n## 小見出し\n\n- 項目\n- 項目\n", "~~~\n```\n~~~\n# after\n", "# a\n\n# a\n\n## a\n",
		"| x | y |\n|---|---|\n| 1 | 2 |\n\n# T\n> quote\n", "#\t\tTab heading\t#\t\n\ntext",
	} {
		f.Add(in, uint16(len(in)), uint8(len(in)), false)
	}
	fuzzFormat(f, doc.FormatMarkdown, func(t *testing.T, content string, chunks []doc.Chunk) {
		secs := Sections(content)
		for _, c := range chunks {
			if len(c.Heading) == 0 {
				continue
			}
			found := false
			for _, s := range secs {
				if isPrefix(c.Heading, s.Heading) {
					found = true
					break
				}
			}
			if !found {
				t.Fatalf("chunk %d [%d,%d) has heading path %q, the path of no section: %+v", c.Index, c.StartByte, c.EndByte, c.Heading, secs)
			}
		}
	})
}

// FuzzSections fuzzes the markdown heading parser: sections come in
// document order, nest inside their parents, and each one's heading path is
// its parent's path plus its own heading, whose text is written in the
// section's first lines.
func FuzzSections(f *testing.F) {
	for _, p := range []string{"testdata/guide.md", "../../README.md"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b))
		}
	}
	for _, in := range []string{
		"", "# a\n## b\n### c\n# d\n", "Title\n=====\n\nSub\n---\n", "```\n# x\n```\n# y\n", "## Heading ##\n# C#\n",
		"---\ntitle: x\n---\n# T\n", "# 見出し {#id}\n## 小見出し\n", "#### deep\n# shallow\n###### six\n####### seven\n",
		"text\n- - -\n* list\n---\n", "# a\r\n## b\r\n", "   ### indented\n    # code\n",
	} {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, content string) {
		secs := Sections(content)
		var open []Section // the ancestors of the current section
		prevStart := -1
		for i, s := range secs {
			switch {
			case s.Start <= prevStart || s.Start >= s.End || s.End > len(content):
				t.Fatalf("section %d has span [%d,%d) after %d in %d bytes", i, s.Start, s.End, prevStart, len(content))
			case s.Level < 1 || s.Level > 6:
				t.Fatalf("section %d has level %d", i, s.Level)
			case len(s.Heading) == 0:
				t.Fatalf("section %d has no heading", i)
			}
			prevStart = s.Start
			for len(open) > 0 && open[len(open)-1].End <= s.Start {
				open = open[:len(open)-1]
			}
			if len(open) > 0 {
				parent := open[len(open)-1]
				if parent.Level >= s.Level || s.End > parent.End || !isPrefix(parent.Heading, s.Heading) || len(s.Heading) != len(parent.Heading)+1 {
					t.Fatalf("section %d %q (level %d, [%d,%d)) does not nest in %q (level %d, [%d,%d))",
						i, s.Heading, s.Level, s.Start, s.End, parent.Heading, parent.Level, parent.Start, parent.End)
				}
			} else if len(s.Heading) != 1 {
				t.Fatalf("top-level section %d has path %q", i, s.Heading)
			}
			text := s.Heading[len(s.Heading)-1]
			if text == "" || strings.TrimSpace(text) != text {
				t.Fatalf("section %d has heading %q", i, text)
			}
			// An ATX heading is one line; a setext heading is its text line
			// and the underline.
			head := content[s.Start:s.End]
			for n, i := 0, 0; n < 2 && i < len(head); n++ {
				if j := strings.IndexByte(head[i:], '\n'); j >= 0 {
					i += j + 1
				} else {
					i = len(head)
				}
				if n == 1 {
					head = head[:i]
				}
			}
			if !strings.Contains(head, text) {
				t.Fatalf("section %d heading %q is not in its first lines %q", i, text, head)
			}
			open = append(open, s)
		}
	})
}

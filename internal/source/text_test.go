package source

import (
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/sagasu-dev/sagasu/internal/clip"
	"github.com/sagasu-dev/sagasu/internal/doc"
)

func TestMarkdownTitle(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"atx", "# Hello\n\ntext", "Hello"},
		{"atx with closing hashes", "# Hello #####\n", "Hello"},
		{"atx keeps C#", "# Learning C#\n", "Learning C#"},
		{"atx indented up to 3", "   # Hi\n", "Hi"},
		{"atx indented 4 is code", "    # code\n\n# Real\n", "Real"},
		{"atx tab", "#\tTabbed\n", "Tabbed"},
		{"hashtag is not a heading", "#hashtag\n\n# Real\n", "Real"},
		{"empty atx is skipped", "#\n\n# Real\n", "Real"},
		{"h2 before h1", "## Sub\n\n# Main\n", "Main"},
		{"only h2", "## Sub\n", ""},
		{"setext", "Title here\n==========\n", "Title here"},
		{"setext multi-line paragraph", "Long\ntitle\n===\n", "Long title"},
		{"setext h2 is not h1", "Sub\n---\n\nMain\n====\n", "Main"},
		{"setext needs a paragraph", "\n===\n# Real\n", "Real"},
		{"crlf", "# Windows\r\n\r\ntext\r\n", "Windows"},
		{"fenced code is skipped", "```sh\n# not a title\n```\n# Real\n", "Real"},
		{"tilde fence", "~~~\n# no\n~~~\nReal\n===\n", "Real"},
		{"longer closing fence", "````\n# no\n```\n# still code\n`````\n# Real\n", "Real"},
		{"unclosed fence", "```\n# no\n", ""},
		{"yaml front matter", "---\ntitle: Front Title\ndate: 2024\n---\n# Heading\n", "Front Title"},
		{"yaml double quoted", "---\ntitle: \"Quoted: yes\"\n---\n", "Quoted: yes"},
		{"yaml single quoted", "---\ntitle: 'It''s here'\n---\n", "It's here"},
		{"yaml comment", "---\ntitle: Plain # note\n---\n", "Plain"},
		{"yaml block scalar", "---\ntitle: >\n  Folded\n  title\nauthor: x\n---\n", "Folded title"},
		{"yaml capital key", "---\nTitle: Cap\n---\n", "Cap"},
		{"yaml nested title is ignored", "---\nmeta:\n  title: nested\n---\n# Top\n", "Top"},
		{"yaml ... end", "---\ntitle: Dots\n...\n", "Dots"},
		{"yaml without title falls back", "---\ndate: 2024\n---\n# After\n", "After"},
		{"front matter not skipped into heading detection", "---\ndate: x\n---\nSetext\n===\n", "Setext"},
		{"toml front matter", "+++\ntitle = \"Hugo page\"\n+++\n# H\n", "Hugo page"},
		{"unclosed front matter is text", "---\ntitle: x\n# Real\n", "Real"},
		{"crlf front matter", "---\r\ntitle: CRLF\r\n---\r\n", "CRLF"},
		{"long setext is clipped to its first lines", strings.Repeat("word\n", 100) + "===\n", strings.TrimSpace(strings.Repeat("word ", 8))},
		{"long heading is clipped", "# " + strings.Repeat("x", 300), strings.Repeat("x", 199) + "…"},
		{"no heading", "just text\n", ""},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := markdownTitle(tt.text); got != tt.want {
				t.Errorf("markdownTitle(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestLooksLikeMarkdown(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"# Title\n\nbody", true},
		{"Some text\n\n## Section\n", true},
		{"```go\nx := 1\n```\n", true},
		{"Title\n=====\n", true},
		{"Title\n-----\n", true},
		{"See [the docs](https://example.com) for more.", true},
		{"![img](a.png)", true},
		{"| a | b |\n|---|:-:|\n| 1 | 2 |\n", true},
		{"---\ntitle: x\n---\nbody\n", true},
		{"- one\n- two\n\nuse **bold** here\n", true},
		{"> quoted\n\nand `code` too\n", true},

		{"", false},
		{"Just a sentence.", false},
		{"Dear team,\n\nthe meeting moved to 3pm.\n\nThanks", false},
		{"- milk\n- eggs\n", false},
		{"#hashtag only", false},
		{"a [bracket] and (paren)", false},
		{"f(x) = [a](b c)", false},
		{"--\nsignature", false},
		{"x = 1\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			if got := looksLikeMarkdown(tt.text); got != tt.want {
				t.Errorf("looksLikeMarkdown(%q) = %v, want %v", tt.text, got, tt.want)
			}
		})
	}
}

func TestFromText(t *testing.T) {
	long := strings.Repeat("word ", 40)
	tests := []struct {
		name, text, title string
		format            doc.Format
		wantTitle         string
		content           string // "" means the same as text
	}{
		{"markdown, title from heading", "# Notes\n\nbody\n", "", doc.FormatMarkdown, "Notes", ""},
		{"given title wins", "# Notes\n", "  Mine  ", doc.FormatMarkdown, "Mine", ""},
		{"plain text, title from first line", "\n  first line\nsecond\n", "", doc.FormatText, "first line", ""},
		{"long first line is cut", long, "", doc.FormatText, strings.TrimSpace(strings.Repeat("word ", 16)) + "…", ""},
		{"markdown without heading", "- a\n- **b**\n", "", doc.FormatMarkdown, "- a", ""},
		{"invalid UTF-8 repaired", "caf\xe9", "", doc.FormatText, "caf\uFFFD", "caf\uFFFD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := FromText(tt.text, tt.title)
			content := tt.content
			if content == "" {
				content = tt.text
			}
			want := doc.Document{
				URI:     "text:" + doc.ContentHash(content)[:12],
				Type:    doc.TypeText,
				Format:  tt.format,
				Title:   tt.wantTitle,
				Content: content,
			}
			if d != want {
				t.Errorf("got  %+v\nwant %+v", d, want)
			}
			if !utf8.ValidString(d.Content) {
				t.Error("content is not valid UTF-8")
			}
		})
	}

	if a, b := FromText("same", ""), FromText("same", "other title"); a.URI != b.URI {
		t.Errorf("the URI depends only on the content: %q vs %q", a.URI, b.URI)
	}
	if e := FromText("", ""); e.Title != e.URI || !strings.HasPrefix(e.URI, "text:") || len(e.URI) != len("text:")+12 {
		t.Errorf("empty text: %+v", e)
	}
}

func TestDetect(t *testing.T) {
	tests := []struct {
		path   string
		format doc.Format
		lang   string
	}{
		{"README.md", doc.FormatMarkdown, ""},
		{"docs/a.MARKDOWN", doc.FormatMarkdown, ""},
		{"page.mdx", doc.FormatMarkdown, ""},
		{"main.go", doc.FormatGo, "go"},
		{"/abs/x/y.go", doc.FormatGo, "go"},
		{"a.py", doc.FormatCode, "python"},
		{"a.js", doc.FormatCode, "javascript"},
		{"a.ts", doc.FormatCode, "typescript"},
		{"a.tsx", doc.FormatCode, "tsx"},
		{"a.jsx", doc.FormatCode, "jsx"},
		{"A.java", doc.FormatCode, "java"},
		{"a.c", doc.FormatCode, "c"},
		{"a.h", doc.FormatCode, "c"},
		{"a.cpp", doc.FormatCode, "cpp"},
		{"a.rs", doc.FormatCode, "rust"},
		{"a.rb", doc.FormatCode, "ruby"},
		{"a.php", doc.FormatCode, "php"},
		{"a.cs", doc.FormatCode, "csharp"},
		{"a.kt", doc.FormatCode, "kotlin"},
		{"a.swift", doc.FormatCode, "swift"},
		{"a.scala", doc.FormatCode, "scala"},
		{"run.sh", doc.FormatCode, "shell"},
		{"q.sql", doc.FormatCode, "sql"},
		{"App.vue", doc.FormatCode, "vue"},
		{"App.svelte", doc.FormatCode, "svelte"},
		{"ci.yml", doc.FormatCode, "yaml"},
		{"ci.YAML", doc.FormatCode, "yaml"},
		{"Cargo.toml", doc.FormatCode, "toml"},
		{"package.json", doc.FormatCode, "json"},
		{"Makefile", doc.FormatCode, "make"},
		{"build/Dockerfile", doc.FormatCode, "dockerfile"},
		{"notes.txt", doc.FormatText, ""},
		{"guide.rst", doc.FormatText, ""},
		{"LICENSE", doc.FormatText, ""},
		{".bashrc", doc.FormatText, ""},
		{"archive.tar.gz", doc.FormatText, ""},
		{"noext.", doc.FormatText, ""},
		{"", doc.FormatText, ""},
		{`C:\docs\a.md`, doc.FormatMarkdown, ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			f, lang := Detect(tt.path)
			if f != tt.format || lang != tt.lang {
				t.Errorf("Detect(%q) = %q, %q; want %q, %q", tt.path, f, lang, tt.format, tt.lang)
			}
		})
	}
}

func TestDecodeText(t *testing.T) {
	tests := []struct {
		name     string
		data     string
		want     string
		repaired int
		binary   bool
	}{
		{"ascii", "hello", "hello", 0, false},
		{"utf-8", "日本語のテキスト", "日本語のテキスト", 0, false},
		{"empty", "", "", 0, false},
		{"utf-8 bom dropped", "\xEF\xBB\xBFhi", "hi", 0, false},
		{"utf-16le", "\xFF\xFEh\x00i\x00", "hi", 0, false},
		{"utf-16be", "\xFE\xFF\x00h\x00i", "hi", 0, false},
		{"utf-16 surrogate pair", "\xFF\xFE\x3D\xD8\x00\xDE", "😀", 0, false},
		{"utf-16 with NUL is binary", "\xFF\xFEh\x00\x00\x00", "", 0, true},
		{"odd-length FF FE is not utf-16", "\xFF\xFEabc", "", 0, true},
		{"nul", "a\x00b", "", 0, true},
		{"a few bad bytes", "na\xefve caf\xe9 text", "na\uFFFDve caf\uFFFD text", 2, false},
		{"truncated sequence", "cut off at \xe3\x81", "cut off at \uFFFD\uFFFD", 2, false},
		{"mostly bad", "\x80\x81\x82\x83a", "", 0, true},
		{"shift_jis", "\x93\xfa\x96\x7b\x8c\xea", "", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, repaired, err := decodeText([]byte(tt.data))
			if tt.binary {
				if err == nil || !strings.Contains(err.Error(), "looks binary") {
					t.Errorf("decodeText(%q) = %q, %v; want binary", tt.data, got, err)
				}
				return
			}
			if err != nil || got != tt.want || repaired != tt.repaired {
				t.Errorf("decodeText(%q) = %q, %d, %v; want %q, %d", tt.data, got, repaired, err, tt.want, tt.repaired)
			}
		})
	}
}

// FuzzText checks that no text makes the parsers panic and that every
// document's content is valid UTF-8.
func FuzzText(f *testing.F) {
	for _, s := range []string{
		"# T\n", "---\ntitle: x\n---\n", "+++\ntitle = 'x'\n+++", "---\ntitle: |\n", "T\n===",
		"```\n", "\xFF\xFEa\x00", "\xFE\xFF", "caf\xe9", "[a](b)", "1. x\n> y", "#\t#", "\t\t# x",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		text, _, err := decodeText(data)
		if err == nil && !utf8.ValidString(text) {
			t.Fatalf("decodeText(%q) = %q is not valid UTF-8", data, text)
		}
		if got, want := markdownTitle(string(data)), markdownTitleOfLines(string(data)); got != want {
			t.Fatalf("markdownTitle(%q) = %q; splitting into lines first gives %q", data, got, want)
		}
		_ = looksLikeMarkdown(string(data))
		d := FromText(string(data), "")
		if !utf8.ValidString(d.Content) || !utf8.ValidString(d.Title) || d.Title == "" {
			t.Fatalf("FromText(%q) = %+v", data, d)
		}
		fd := fileDocument("x.md", text)
		if fd.Title == "" {
			t.Fatalf("file document without a title: %+v", fd)
		}
	})
}

// markdownTitleOfLines is markdownTitle as it was written first, splitting
// the whole document into lines; markdownTitle now splits only the front
// matter, and must find the same titles.
func markdownTitleOfLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	title, start := frontMatterTitle(lines)
	if title != "" {
		return clip.Runes(title, maxTitle)
	}

	var para []string // the paragraph so far, for setext headings
	fence := ""       // the open code fence, if any
	for _, line := range lines[start:] {
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

// TestDecodeStringKeepsValidText checks that valid UTF-8 (after a byte order
// mark) comes back as the very bytes read, not a copy: a large file is then
// held in memory once.
func TestDecodeStringKeepsValidText(t *testing.T) {
	data := "\xEF\xBB\xBF" + strings.Repeat("日本語 and English\n", 100)
	text, repaired, err := decodeString(data)
	if err != nil || repaired != 0 || text != data[3:] {
		t.Fatalf("decodeString = %d bytes, %d repaired, %v", len(text), repaired, err)
	}
	if unsafe.StringData(text) != unsafe.StringData(data[3:]) {
		t.Error("valid UTF-8 was copied")
	}
}

package chunk

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/doc"
)

// junk returns n deterministic random bytes, many of them not valid UTF-8.
func junk(n int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return string(b)
}

// hugeInputs are inputs built to break a splitter: no spaces for a megabyte,
// a table of thousands of rows, a code fence longer than any chunk, binary
// junk and invalid UTF-8.
func hugeInputs() []struct {
	name    string
	content string
} {
	row := "| `option` | string | The quick brown fox jumps over the lazy dog. |\n"
	return []struct {
		name    string
		content string
	}{
		{"1MB line without spaces", strings.Repeat("abcdefghij", 100_000)},
		{"1MB of one letter", strings.Repeat("a", 1<<20)},
		{"1MB of kanji", strings.Repeat("漢字仮名交じり文", 1<<20/24)},
		{"huge table", "# Options\n\n| name | type | about |\n|---|---|---|\n" + strings.Repeat(row, 5000)},
		{"giant code fence", "# Code\n\n````go\n" + strings.Repeat("\tx := compute(a, b, c) // step\n", 5000) + "````\n\nAfter.\n"},
		{"unclosed fence", "# A\n\n```\n" + strings.Repeat("# not a heading\n", 3000)},
		{"binary junk", junk(200_000, 1)},
		{"invalid UTF-8 in text", strings.Repeat("ok \xff\xfe\xc3 \xe6\x97 done. ", 20_000)},
		{"spaces and newlines between words", strings.Repeat("word"+strings.Repeat(" ", 5000)+"\n\n\n", 100)},
		{"deep headings", strings.Repeat("# a\n## b\n### c\n#### d\n##### e\n###### f\ntext\n", 2000)},
		{"only headings", strings.Repeat("## heading\n", 5000)},
		{"long list", strings.Repeat("- item with a few words in it\n", 10000)},
		{"nested braces", strings.Repeat("{", 20000) + strings.Repeat("}", 20000)},
		{"long sentences", strings.Repeat("This is one sentence that goes on and on without a single full stop at all ", 5000)},
		{"japanese without breaks", strings.Repeat("日本語の文章が句点なしで延々と続いていくところ", 20000)},
		{"crlf", strings.Repeat("# Title\r\n\r\nSome text here.\r\n\r\n```\r\ncode\r\n```\r\n", 2000)},
		{"front matter only", "---\ntitle: x\n---\n"},
		{"emoji", strings.Repeat("😀🎉👍🏽", 50_000)},
	}
}

func TestHugeInputs(t *testing.T) {
	t.Parallel()
	formats := []doc.Format{doc.FormatMarkdown, doc.FormatText, doc.FormatCode, doc.FormatGo}
	for _, in := range hugeInputs() {
		t.Run(in.name, func(t *testing.T) {
			for _, f := range formats {
				for _, opt := range []Options{{MaxTokens: 32}, {}} {
					d := doc.Document{URI: in.name, Format: f, Content: in.content}
					chunks := checkSplit(t, d, opt)
					if len(chunks) == 0 {
						t.Fatalf("%s: no chunks", f)
					}
				}
			}
		})
	}
}

// With the default counter no single character counts more than two tokens
// once cut to bytes, so even MaxTokens 2 always works.
func TestTinyMaxTokens(t *testing.T) {
	content := "Hi! 日本語、テスト。😀👍🏽 a\xffb\xc3 ¿Qué? 123456 {x: [1, 2]}\n\n# T\n```\ncode\n```\n"
	for _, f := range fuzzFormats {
		chunks := checkSplit(t, doc.Document{URI: "tiny", Format: f, Content: content}, Options{MaxTokens: 2, Overlap: -1})
		if len(chunks) < 20 {
			t.Errorf("%s: %d chunks", f, len(chunks))
		}
	}
}

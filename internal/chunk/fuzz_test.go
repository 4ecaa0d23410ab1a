package chunk

import (
	"os"
	"path/filepath"
	"testing"

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
		opt := Options{MaxTokens: 4 + int(maxTokens%1024)}
		switch {
		case overlap == 255:
			opt.Overlap = -1
		case opt.MaxTokens > 2:
			opt.Overlap = int(overlap) % ((opt.MaxTokens + 1) / 2) // 0 means the default
		}
		if format&0x80 != 0 {
			opt.MinTokens = -1
		}
		d := doc.Document{URI: "fuzz", Format: fuzzFormats[int(format)%len(fuzzFormats)], Content: content}
		checkSplit(t, d, opt)
	})
}

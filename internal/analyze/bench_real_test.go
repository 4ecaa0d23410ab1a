package analyze

import (
	"github.com/sagasu-dev/sagasu/internal/testenv"
	"os"
	"path/filepath"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/analyze/analyzetest"
)

// BenchmarkTermsSciFact analyses SciFact abstracts with the default
// analyzer and reports MB/s of text.
func BenchmarkTermsSciFact(b *testing.B) {
	texts := analyzetest.SciFact(b, 2000)
	n := 0
	for _, t := range texts {
		n += len(t)
	}
	a := New(Options{})
	b.SetBytes(int64(n))
	for b.Loop() {
		for _, t := range texts {
			a.Terms(t)
		}
	}
}

// BenchmarkTermsJapanese analyses the Japanese VitePress documentation
// (../shared/data/vitepress-docs/ja) when it is there: what indexing
// Japanese text costs with the morphological analyser.
func BenchmarkTermsJapanese(b *testing.B) {
	texts, n := japaneseDocs(b)
	b.SetBytes(n)
	a := New(Options{})
	a.Terms("日本語") // load the dictionary outside the timing
	dst := make([]string, 0, 1<<16)
	b.ResetTimer()
	for b.Loop() {
		for _, s := range texts {
			dst = a.AppendTerms(dst[:0], s)
		}
	}
}

// japaneseDocs reads the pages of the Japanese VitePress docs, and their
// size in bytes.
func japaneseDocs(b *testing.B) (texts []string, n int64) {
	files, _ := filepath.Glob(filepath.Join(testenv.Shared(b, "vitepress-docs"), "ja", "*", "*.md"))
	testenv.Need(b, len(files) > 0, "the Japanese VitePress docs have no pages under vitepress-docs/ja")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		texts = append(texts, string(data))
		n += int64(len(data))
	}
	return texts, n
}

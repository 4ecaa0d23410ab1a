package analyze

import (
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

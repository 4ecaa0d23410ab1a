package analyze

import (
	"slices"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/analyze/analyzetest"
)

// stemPlain is what the default analyzer made of a text before stems were
// memoised: the unstemmed analyzer's terms, each lower-case ASCII word
// stemmed on its own.
func stemPlain(t *testing.T, text string) []string {
	t.Helper()
	terms := New(Options{NoStem: true}).Terms(text)
	out := make([]string, len(terms))
	for i, term := range terms {
		if isASCIILower([]byte(term)) {
			term = string(porterStem([]byte(term)))
		}
		out[i] = term
	}
	return out
}

// TestStemMemoKeepsTerms checks on real text (SciFact abstracts, the
// VitePress docs in English and Japanese) that the default analyzer, whose
// stem memo is warm from every text before and overflows more than once
// (SciFact has far more distinct words than maxStems), makes exactly the
// terms that stemming every word afresh makes.
func TestStemMemoKeepsTerms(t *testing.T) {
	texts := append(analyzetest.SciFact(t, 0), analyzetest.VitePress(t)...)
	a := New(Options{})
	distinct := map[string]bool{}
	for i, text := range texts {
		got := a.Terms(text)
		want := stemPlain(t, text)
		if !slices.Equal(got, want) {
			for j := range min(len(got), len(want)) {
				if got[j] != want[j] {
					t.Fatalf("text %d: term %d is %q, want %q", i, j, got[j], want[j])
				}
			}
			t.Fatalf("text %d: %d terms, want %d", i, len(got), len(want))
		}
		for _, w := range New(Options{NoStem: true}).Terms(text) {
			distinct[w] = true
		}
	}
	if len(distinct) <= 2*maxStems {
		t.Errorf("only %d distinct words: the memo never overflowed twice", len(distinct))
	}
}

// TestStemMemoRewrittenSuffix checks words whose stem is not a prefix of
// the word ("happy" -> "happi", "happily" -> "happili") beside words cut to a prefix,
// asked twice so the second answer comes from the memo.
func TestStemMemoRewrittenSuffix(t *testing.T) {
	a := New(Options{})
	for range 2 {
		got := a.Terms("relational conditional happy ponies happily generalization relational happy ponies")
		want := []string{"relat", "condit", "happi", "poni", "happili", "gener", "relat", "happi", "poni"}
		if !slices.Equal(got, want) {
			t.Fatalf("Terms = %q, want %q", got, want)
		}
	}
}

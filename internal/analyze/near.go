package analyze

import (
	"strings"
	"unicode/utf8"
)

// TermsNear returns the terms of text in order for measuring how close
// together the terms of a query occur in it (a proximity re-rank), without
// the morphological analyser: text that is not Japanese is analysed as
// Terms analyses it, and in a run of Japanese the query's terms are found
// where they are written, with one empty term for every two other
// characters (about a word) between them. query is the query's terms, as
// QueryTerms returns them.
//
// It is for ranking only, and approximate where Japanese is concerned: a
// query term also matches inside a longer word (使 in 使用), except that a
// katakana term must not be part of a longer run of katakana.
func (a *Analyzer) TermsNear(text string, query []string) []string {
	var ja []string
	for _, q := range query {
		if r, _ := utf8.DecodeRuneInString(q); classify(r) >= clHan {
			ja = append(ja, q)
		}
	}
	// Short texts (titles and headings, mostly): a scratch of their own.
	sc := &scratch{near: ja, locate: true}
	a.run(sc, text)
	return sc.appendTerms(nil)
}

// locateJapanese emits the query's terms found in a run of Japanese and
// fillers for the characters between them (see TermsNear).
func (t *tokenizer) locateJapanese(run string) {
	gap := 0
	for i := 0; i < len(run); {
		if n := t.nearTerm(run, i); n > 0 {
			t.cjkTerm(run[i : i+n])
			i += n
			gap = 0
			continue
		}
		_, size := utf8.DecodeRuneInString(run[i:])
		i += size
		if gap++; gap == 2 {
			t.emit(nil)
			gap = 0
		}
	}
}

// nearTerm returns the length of the longest query term written at run[i:],
// 0 for none.
func (t *tokenizer) nearTerm(run string, i int) int {
	best := 0
	for _, q := range t.sc.near {
		if len(q) <= best || !strings.HasPrefix(run[i:], q) {
			continue
		}
		if onlyKatakana(q) && (katakanaBefore(run, i) || katakanaAt(run, i+len(q))) {
			continue
		}
		best = len(q)
	}
	return best
}

func katakanaBefore(s string, i int) bool {
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return i > 0 && isKatakana(r)
}

func katakanaAt(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return i < len(s) && isKatakana(r)
}

package analyze

// This file implements the Porter stemming algorithm as published in
// M.F. Porter, "An algorithm for suffix stripping", Program 14(3), 1980,
// pp. 130-137: steps 1a, 1b, 1c, 2, 3, 4, 5a and 5b, with the paper's
// rule lists (so "abli" -> "able" in step 2, not the later "bli" -> "ble",
// and no "logi" rule).
//
// Notation, as in the paper: a consonant (c) is a letter other than a, e, i,
// o, u, and other than y preceded by a consonant; any other letter is a vowel
// (v). Every word has the form [C](VC)^m[V], and m is its measure. In each
// step, the rule whose suffix is the longest match is selected; if its
// condition fails, no shorter rule of that step is tried.
//
// One addition, as in the author's own reference implementation: words of
// one or two letters are returned unchanged (so "is" does not become "i").

// porterStem stems the lower-case ASCII word b in place and returns the stem,
// which is a prefix of b's backing array and never longer than b.
func porterStem(b []byte) []byte {
	if len(b) <= 2 {
		return b
	}
	b = step1a(b)
	b = step1b(b)
	b = step1c(b)
	b = step2(b)
	b = step3(b)
	b = step4(b)
	b = step5a(b)
	b = step5b(b)
	return b
}

// vowels has bit c-'a' set for each vowel letter c other than y.
const vowels = 1 | 1<<('e'-'a') | 1<<('i'-'a') | 1<<('o'-'a') | 1<<('u'-'a')

// isCons reports whether b[i] is a consonant in the paper's sense.
func isCons(b []byte, i int) bool {
	c := b[i]
	if c == 'y' {
		// A leading y is a consonant; otherwise y is a consonant after a vowel
		// and a vowel after a consonant. Recursion depth is bounded by the
		// word length (at most MaxTermBytes).
		return i == 0 || !isCons(b, i-1)
	}
	return vowels>>(c-'a')&1 == 0
}

// measure returns m for the word b: the number of VC sequences in [C](VC)^m[V].
func measure(b []byte) int {
	n, i, m := len(b), 0, 0
	for i < n && isCons(b, i) {
		i++
	}
	for i < n {
		for i < n && !isCons(b, i) {
			i++
		}
		if i == n {
			break
		}
		for i < n && isCons(b, i) {
			i++
		}
		m++
	}
	return m
}

// hasVowel is the paper's *v*: the stem contains a vowel.
func hasVowel(b []byte) bool {
	for i := range b {
		if !isCons(b, i) {
			return true
		}
	}
	return false
}

// endsDouble is *d: the stem ends with a double consonant.
func endsDouble(b []byte) bool {
	n := len(b)
	return n >= 2 && b[n-1] == b[n-2] && isCons(b, n-1)
}

// endsCVC is *o: the stem ends consonant-vowel-consonant, where the second
// consonant is not w, x or y.
func endsCVC(b []byte) bool {
	n := len(b)
	if n < 3 || !isCons(b, n-3) || isCons(b, n-2) || !isCons(b, n-1) {
		return false
	}
	switch b[n-1] {
	case 'w', 'x', 'y':
		return false
	}
	return true
}

func hasSuffix(b []byte, s string) bool {
	if len(b) < len(s) {
		return false
	}
	b = b[len(b)-len(s):]
	// A byte loop beats a memequal call for suffixes this short.
	for i := len(s) - 1; i >= 0; i-- {
		if b[i] != s[i] {
			return false
		}
	}
	return true
}

// replace swaps the suffix of length n for rep; rep is never longer than the
// suffix it replaces, so this never grows b past its original length.
func replace(b []byte, n int, rep string) []byte {
	return append(b[:len(b)-n], rep...)
}

// rule is one "(condition) SUFFIX -> REPLACEMENT" line of steps 2 to 4.
type rule struct {
	suffix, rep string
}

// ruleSet is the rules of one step, grouped by the next-to-last letter of
// their suffix (every suffix has at least two letters), so that a word is
// checked only against the few rules that can match it.
type ruleSet [26][]rule

// newRuleSet groups rules by next-to-last letter, keeping their order.
// Rules are listed so that a suffix comes before every shorter suffix it
// ends with; the first match is therefore the longest.
func newRuleSet(rules []rule) *ruleSet {
	var rs ruleSet
	for _, r := range rules {
		c := r.suffix[len(r.suffix)-2] - 'a'
		rs[c] = append(rs[c], r)
	}
	return &rs
}

// applyRules selects the rule with the longest matching suffix and applies
// it when the stem before the suffix has measure > minM and passes extra (if
// any).
func applyRules(b []byte, rs *ruleSet, minM int, extra func(stem []byte, r rule) bool) []byte {
	if len(b) < 2 {
		return b
	}
	c := b[len(b)-2] - 'a'
	if c >= 26 {
		return b
	}
	for _, r := range rs[c] {
		if !hasSuffix(b, r.suffix) {
			continue
		}
		stem := b[:len(b)-len(r.suffix)]
		if measure(stem) > minM && (extra == nil || extra(stem, r)) {
			return replace(b, len(r.suffix), r.rep)
		}
		return b
	}
	return b
}

// Step 1a: plurals.
func step1a(b []byte) []byte {
	switch {
	case hasSuffix(b, "sses"), hasSuffix(b, "ies"):
		return b[:len(b)-2] // sses -> ss, ies -> i
	case hasSuffix(b, "ss"):
		return b
	case hasSuffix(b, "s"):
		return b[:len(b)-1]
	}
	return b
}

// Step 1b: -eed, -ed, -ing, with a tidy-up after -ed and -ing.
func step1b(b []byte) []byte {
	switch {
	case hasSuffix(b, "eed"):
		if measure(b[:len(b)-3]) > 0 {
			return b[:len(b)-1]
		}
		return b
	case hasSuffix(b, "ed"):
		if stem := b[:len(b)-2]; hasVowel(stem) {
			return step1bTidy(stem)
		}
	case hasSuffix(b, "ing"):
		if stem := b[:len(b)-3]; hasVowel(stem) {
			return step1bTidy(stem)
		}
	}
	return b
}

func step1bTidy(b []byte) []byte {
	switch {
	case hasSuffix(b, "at"), hasSuffix(b, "bl"), hasSuffix(b, "iz"):
		return append(b, 'e')
	case endsDouble(b):
		switch b[len(b)-1] {
		case 'l', 's', 'z':
			return b
		}
		return b[:len(b)-1]
	case measure(b) == 1 && endsCVC(b):
		return append(b, 'e')
	}
	return b
}

// Step 1c: (*v*) y -> i.
func step1c(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == 'y' && hasVowel(b[:n-1]) {
		b[n-1] = 'i'
	}
	return b
}

// Rules of step 2, condition m > 0. Longer suffixes come before any shorter
// suffix they end with (ational before tional, ization before ation).
var step2Rules = newRuleSet([]rule{
	{"ational", "ate"},
	{"tional", "tion"},
	{"enci", "ence"},
	{"anci", "ance"},
	{"izer", "ize"},
	{"abli", "able"},
	{"alli", "al"},
	{"entli", "ent"},
	{"eli", "e"},
	{"ousli", "ous"},
	{"ization", "ize"},
	{"ation", "ate"},
	{"ator", "ate"},
	{"alism", "al"},
	{"iveness", "ive"},
	{"fulness", "ful"},
	{"ousness", "ous"},
	{"aliti", "al"},
	{"iviti", "ive"},
	{"biliti", "ble"},
})

func step2(b []byte) []byte { return applyRules(b, step2Rules, 0, nil) }

// Rules of step 3, condition m > 0.
var step3Rules = newRuleSet([]rule{
	{"icate", "ic"},
	{"ative", ""},
	{"alize", "al"},
	{"iciti", "ic"},
	{"ical", "ic"},
	{"ful", ""},
	{"ness", ""},
})

func step3(b []byte) []byte { return applyRules(b, step3Rules, 0, nil) }

// Rules of step 4, condition m > 1 (and *s or *t for -ion). ement before
// ment before ent, so the longest match wins.
var step4Rules = newRuleSet([]rule{
	{"al", ""},
	{"ance", ""},
	{"ence", ""},
	{"er", ""},
	{"ic", ""},
	{"able", ""},
	{"ible", ""},
	{"ant", ""},
	{"ement", ""},
	{"ment", ""},
	{"ent", ""},
	{"ion", ""},
	{"ou", ""},
	{"ism", ""},
	{"ate", ""},
	{"iti", ""},
	{"ous", ""},
	{"ive", ""},
	{"ize", ""},
})

func step4Extra(stem []byte, r rule) bool {
	if r.suffix != "ion" {
		return true
	}
	last := stem[len(stem)-1] // measure(stem) > 1 guarantees a non-empty stem
	return last == 's' || last == 't'
}

func step4(b []byte) []byte { return applyRules(b, step4Rules, 1, step4Extra) }

// Step 5a: (m > 1) e -> ; (m = 1 and not *o) e -> .
func step5a(b []byte) []byte {
	n := len(b)
	if n == 0 || b[n-1] != 'e' {
		return b
	}
	stem := b[:n-1]
	if m := measure(stem); m > 1 || (m == 1 && !endsCVC(stem)) {
		return stem
	}
	return b
}

// Step 5b: (m > 1 and *d and *l) -> single letter.
func step5b(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == 'l' && endsDouble(b) && measure(b) > 1 {
		return b[:n-1]
	}
	return b
}

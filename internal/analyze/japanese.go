package analyze

import (
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/sagasu-dev/sagasu/internal/analyze/ipadic"
)

// Japanese text is analysed into words with the IPA dictionary (IPADIC, as
// kagome-dict/ipa ships it, segmented as kagome v2 does in its search mode;
// package ipadic). The dictionary is part of the binary in a flat layout
// that is read in place: it is not decoded when a process starts, and a
// query touches only the pages of the words it looks up. The content words
// are the terms: nouns as written, verbs and adjectives as their stem (the
// written form without its trailing kana, so 使う, 使い and 使って are all
// 使), and the words the dictionary does not know as character bigrams, as
// version 1 analysed all CJK text. Particles, auxiliary verbs, endings
// ("する", "ください", "について"), pronouns, adverbs and symbols make no
// terms.
//
// From version 3 a run of katakana is one word: the dictionary's word when
// it is one (ポート), else its parts when it is made of words of three
// characters or more (ビルドツール → ビルド, ツール), else its bigrams
// (インポート → イン, ンポ, ポー, ート), so that ポート does not find
// インポート (version 2 cut it into イン and ポート).

// segmenter cuts a run of Japanese into dictionary words; the dictionary's
// own by default (a test puts kagome in its place to compare).
type segmenter func(dst []ipadic.Token, run string) []ipadic.Token

func (a *Analyzer) segment(dst []ipadic.Token, run string) []ipadic.Token {
	if a.seg != nil {
		return a.seg(dst, run)
	}
	return ipadic.Load().AppendTokens(dst, run)
}

// maxJapaneseRun bounds the text given to the morphological analyser at
// once (its lattice grows with the text); a longer run of Japanese without
// punctuation is cut at a kana that follows a kanji, where a word ends.
const maxJapaneseRun = 3000

// japanese analyses one run of Japanese (kanji, hiragana, katakana) and
// emits its terms.
func (t *tokenizer) japanese(run string) {
	for len(run) > maxJapaneseRun {
		cut := japaneseCut(run, maxJapaneseRun)
		t.japaneseWords(run[:cut])
		run = run[cut:]
	}
	t.japaneseWords(run)
}

// japaneseCut returns where to cut run, at most max bytes in: before the
// last hiragana that follows a kanji (where a word usually ends), else at
// the last rune boundary.
func japaneseCut(run string, max int) int {
	cut, last, prevHan := 0, 0, false
	for i, r := range run {
		if i > max {
			break
		}
		if prevHan && unicode.Is(unicode.Hiragana, r) {
			cut = i
		}
		last, prevHan = i, unicode.Is(unicode.Han, r)
	}
	if cut == 0 {
		cut = last
	}
	if cut == 0 {
		_, cut = utf8.DecodeRuneInString(run)
	}
	return cut
}

// jaMemo remembers the terms of short runs of Japanese: documentation
// repeats its phrases, titles and headings ("の設定", "を使用します"), and the
// morphological analysis of a run costs far more than a map look-up. It is
// bounded: when full it starts over.
type jaMemo struct {
	mu    sync.Mutex
	terms map[string][]string
}

// Memo bounds: runs longer than maxMemoRun bytes are not remembered, and at
// most maxMemoRuns are.
const (
	maxMemoRun  = 48
	maxMemoRuns = 1 << 15
)

func (m *jaMemo) get(run string) ([]string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ts, ok := m.terms[run]
	return ts, ok
}

func (m *jaMemo) put(run string, terms []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.terms == nil || len(m.terms) >= maxMemoRuns {
		m.terms = make(map[string][]string, 1024)
	}
	m.terms[run] = terms
}

func (t *tokenizer) japaneseWords(run string) {
	short := len(run) <= maxMemoRun
	if short {
		if ts, ok := t.a.ja.get(run); ok {
			for _, term := range ts {
				t.cjkTerm(term)
			}
			return
		}
	}
	from := len(t.sc.ends)
	t.analyseJapanese(run)
	if short {
		// The run's terms are the ones just emitted.
		ts := make([]string, 0, len(t.sc.ends)-from)
		start := 0
		if from > 0 {
			start = t.sc.ends[from-1]
		}
		for _, end := range t.sc.ends[from:] {
			ts = append(ts, string(t.sc.terms[start:end]))
			start = end
		}
		t.a.ja.put(run, ts)
	}
}

// analyseJapanese runs the morphological analysis of run and emits its terms.
func (t *tokenizer) analyseJapanese(run string) {
	d := ipadic.Load()
	toks := t.a.segment(t.sc.jaToks[:0], run)
	t.sc.jaToks = toks
	katakana := t.a.Version() >= 3 // and interjections
	for i := 0; i < len(toks); i++ {
		tok := toks[i]
		s := tok.Surface
		if s == "" {
			continue
		}
		if katakana && onlyKatakana(s) {
			// The whole run of katakana the word starts.
			j := i + 1
			for j < len(toks) && onlyKatakana(toks[j].Surface) {
				j++
			}
			if j > i+1 || tok.Class != ipadic.Known {
				end := toks[j-1].Position + len(toks[j-1].Surface)
				t.katakanaWord(d, run[tok.Position:end])
				i = j - 1
				continue
			}
		}
		switch tok.Class {
		case ipadic.Known:
			if term := contentWord(d.Kind(tok.ID), s, katakana); term != "" {
				t.cjkTerm(term)
			}
		case ipadic.Unknown:
			// Unknown to the dictionary: bigrams, which match however the
			// word is cut in other text.
			t.bigrams(s)
		}
	}
}

// minKatakanaPart is the fewest characters a dictionary word must have to
// be taken as a part of a katakana compound: shorter ones (イン, パス, ア)
// are as often a piece of a longer loanword as a word.
const minKatakanaPart = 3

// katakanaWord emits the terms of a run of katakana that is not one known
// word: its parts when the dictionary covers it with nouns of
// minKatakanaPart characters or more, else its bigrams.
func (t *tokenizer) katakanaWord(d *ipadic.Dict, run string) {
	parts := d.Cover(run, minKatakanaPart)
	if parts == nil {
		t.bigrams(run)
		return
	}
	for _, p := range parts {
		t.cjkTerm(p)
	}
}

// onlyKatakana reports whether s is katakana (with the prolonged sound
// mark) only.
func onlyKatakana(s string) bool {
	for _, r := range s {
		if !isKatakana(r) {
			return false
		}
	}
	return s != ""
}

func isKatakana(r rune) bool { return r == '\u30FC' || unicode.Is(unicode.Katakana, r) }

// contentWord returns the term of a known word of kind k, "" for a word
// that is not content. Interjections of two characters or more
// (こんにちは) are content from version 3 (interjections set).
// The term of a word with kanji or katakana is its stem, so that a verb's
// forms and the noun made of it are one term (読み込む, 読み込みます, 読み込み
// → 読み込); a noun of hiragana only is kept as written, a verb or adjective
// of hiragana only (する, できる, ある, いい, ない) is a function word here.
func contentWord(k ipadic.Kind, surface string, interjections bool) string {
	switch k {
	case ipadic.Noun: // nouns but こと, ため; これ, 何; 〜的, 〜さん; そう
		if onlyHiragana(surface) {
			if utf8.RuneCountInString(surface) == 1 {
				return ""
			}
			return surface
		}
		return stem(surface)
	case ipadic.Inflected: // verbs, adjectives but ください, 〜ている, 〜れる
		return stem(surface)
	case ipadic.Interjection: // こんにちは, ありがとう (version 3 on)
		if !interjections || utf8.RuneCountInString(surface) < 2 {
			return ""
		}
		return surface
	}
	return ""
}

// Words returns the content words of a run of Japanese (kanji and kana) as
// they are written, what a person would type to search for them: adjacent
// content words stay one compound ("サイトマップ", "データ読み込み"), and
// particles and endings between them part them. Each analyses to terms of
// the run. It returns nil for an analyzer that reads Japanese as bigrams
// (version 1).
func (a *Analyzer) Words(run string) []string {
	if !a.Japanese() {
		return nil
	}
	d := ipadic.Load()
	var out []string
	end := -1 // where the last content word ended
	for _, tok := range a.segment(nil, run) {
		s := tok.Surface
		content := false
		switch tok.Class {
		case ipadic.Known:
			content = contentWord(d.Kind(tok.ID), s, a.Version() >= 3) != "" || a.Version() >= 3 && onlyKatakana(s)
		case ipadic.Unknown:
			content = s != "" && !(onlyHiragana(s) && utf8.RuneCountInString(s) == 1)
		}
		if !content {
			continue
		}
		if tok.Position == end && len(out) > 0 {
			out[len(out)-1] += s
		} else {
			out = append(out, s)
		}
		end = tok.Position + len(s)
	}
	return out
}

// stem drops the trailing hiragana of an inflected word (its okurigana and
// inflection): 使っ → 使, 読み込ま → 読み込, 新しく → 新. A word of hiragana
// only has no stem.
func stem(s string) string {
	end := len(s)
	for end > 0 {
		r, size := utf8.DecodeLastRuneInString(s[:end])
		if !unicode.Is(unicode.Hiragana, r) {
			break
		}
		end -= size
	}
	return s[:end]
}

func onlyHiragana(s string) bool {
	for _, r := range s {
		if !unicode.Is(unicode.Hiragana, r) {
			return false
		}
	}
	return s != ""
}

// HasKana reports whether s has hiragana or katakana: text an analyzer of
// version 2 on reads as Japanese.
func HasKana(s string) bool { return hasKana(s) }

// hasKana reports whether s has hiragana or katakana (U+3041–U+30FF, which
// is E3 81 81 to E3 83 BF in UTF-8): text with kana is Japanese, text with
// kanji and no kana is analysed as Chinese (bigrams).
func hasKana(s string) bool {
	for i := 0; i+2 < len(s); i++ {
		if s[i] != 0xE3 {
			continue
		}
		switch b := s[i+1]; {
		case b == 0x81 && s[i+2] >= 0x81, b == 0x82, b == 0x83:
			return true
		}
	}
	return false
}

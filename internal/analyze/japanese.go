package analyze

import (
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/ikawaha/kagome-dict/dict"
	"github.com/ikawaha/kagome-dict/ipa"
	kagome "github.com/ikawaha/kagome/v2/tokenizer"
)

// Japanese text is analysed into words with kagome and the IPA dictionary
// (IPADIC, in its shrunk form without the reading columns): about 13 MB of
// binary, loaded on the first Japanese text (about a second, 30 MB of heap;
// UniDic measured 47 MB, 4.5 s and 122 MB, with no gain for search that
// the extra size would pay for). The content words are the terms: nouns
// as written, verbs and adjectives as their stem (the written form without
// its trailing kana, so 使う, 使い and 使って are all 使), and the words the
// dictionary does not know as character bigrams, as version 1 analysed all
// CJK text. Particles, auxiliary verbs, endings ("する", "ください",
// "について"), pronouns, adverbs and symbols make no terms.

// morphology is the loaded analyser. It is read-only once made, so one is
// shared by every Analyzer (a dictionary, not state).
type morphology struct {
	tok *kagome.Tokenizer
	pos dict.POSTable
	unk dict.UnkDict
	// unkPOS is where the part of speech starts in an unknown word's features.
	unkPOS int
}

var loadMorphology = sync.OnceValue(func() *morphology {
	d := ipa.DictShrink()
	t, err := kagome.New(d, kagome.OmitBosEos())
	if err != nil {
		// Only an empty dictionary makes New fail; the embedded one is not.
		panic("analyze: kagome tokenizer: " + err.Error())
	}
	m := &morphology{tok: t, pos: d.POSTable, unk: d.UnkDict}
	if v, ok := d.UnkDict.ContentsMeta[dict.POSStartIndex]; ok {
		m.unkPOS = int(v)
	}
	return m
})

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
	m := loadMorphology()
	for _, tok := range m.tok.Analyze(run, kagome.Search) {
		s := tok.Surface
		if s == "" {
			continue
		}
		switch tok.Class {
		case kagome.KNOWN:
			pos, sub := m.posOf(tok)
			if term := contentWord(pos, sub, s); term != "" {
				t.cjkTerm(term)
			}
		case kagome.UNKNOWN:
			// Unknown to the dictionary: bigrams, which match however the
			// word is cut in other text.
			t.bigrams(s)
		}
	}
}

// posOf returns a known word's part of speech and its first sub-category
// ("名詞", "サ変接続"); "" for a word the dictionary gives none.
func (m *morphology) posOf(tok kagome.Token) (pos, sub string) {
	ids := m.pos.POSs[tok.ID]
	if len(ids) > 0 {
		pos = m.pos.NameList[ids[0]]
	}
	if len(ids) > 1 {
		sub = m.pos.NameList[ids[1]]
	}
	return pos, sub
}

// contentWord returns the term of a known word with part of speech pos
// (and its first sub-category sub), "" for a word that is not content.
// The term of a word with kanji or katakana is its stem, so that a verb's
// forms and the noun made of it are one term (読み込む, 読み込みます, 読み込み
// → 読み込); a noun of hiragana only is kept as written, a verb or adjective
// of hiragana only (する, できる, ある, いい, ない) is a function word here.
func contentWord(pos, sub, surface string) string {
	switch pos {
	case "名詞": // nouns
		switch sub {
		case "非自立", "代名詞", "接尾", "特殊":
			// こと, ため; これ, 何; 〜的, 〜さん; そう
			return ""
		}
		if onlyHiragana(surface) {
			if utf8.RuneCountInString(surface) == 1 {
				return ""
			}
			return surface
		}
		return stem(surface)
	case "動詞", "形容詞": // verbs, adjectives
		if sub != "自立" {
			return "" // ください, 〜ている, 〜れる
		}
		return stem(surface)
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
	m := loadMorphology()
	var out []string
	end := -1 // where the last content word ended
	for _, tok := range m.tok.Analyze(run, kagome.Search) {
		s := tok.Surface
		content := false
		switch tok.Class {
		case kagome.KNOWN:
			pos, sub := m.posOf(tok)
			content = contentWord(pos, sub, s) != ""
		case kagome.UNKNOWN:
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

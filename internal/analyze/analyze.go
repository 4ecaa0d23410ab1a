package analyze

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/sagasu-dev/sagasu/internal/analyze/ipadic"
)

// Version identifies the analyzer's behaviour. The index pins it (see
// Analyzer.Signature); any change to the terms produced for any input must
// bump it, and the behaviour of every older version stays available
// (Options.Version, Parse) so that an index pinned to it keeps working.
//
//	1: every CJK run as character bigrams
//	2: Japanese text (text with kana) as content words (japanese.go)
//	3: a run of katakana as one word, its parts or its bigrams, and
//	   interjections (こんにちは) as words (japanese.go)
const Version = "3"

// version is Version as a number.
const version = 3

// MaxTermBytes is the longest word token kept, in bytes after normalization.
// Longer tokens (base64 blobs, minified code, runs of an unsegmented script)
// are dropped whole rather than truncated: a truncated prefix would only ever
// match another token with the same 64-byte prefix. A SHA-256 in hex (64
// bytes) is still kept.
const MaxTermBytes = 64

// Options select a variant of the analyzer. The zero value is the default
// analyzer: stopwords removed and English words stemmed.
type Options struct {
	// NoStem keeps Latin-script words as they are instead of Porter-stemming them.
	NoStem bool
	// NoStopwords keeps the English stopwords instead of dropping them.
	NoStopwords bool
	// Version is the analyzer version to behave as, 1 up to the current
	// one; 0 means the current Version. An older version is for reading an
	// index pinned to it (see Parse).
	Version int
}

// Analyzer turns text into index terms. It holds no mutable state apart
// from a pool of scratch buffers, so one Analyzer may be used by many
// goroutines at once. The zero value is the default analyzer; an Analyzer
// must not be copied after first use.
type Analyzer struct {
	opt   Options
	pool  sync.Pool // of *scratch
	ja    jaMemo    // the terms of short Japanese runs already analysed
	stems stemCache // the stems of words already stemmed
	seg   segmenter // cuts Japanese into words; nil: the IPA dictionary's
}

// New returns an analyzer with the given options.
func New(opt Options) *Analyzer {
	return &Analyzer{opt: opt}
}

// Options returns the options the analyzer was built with.
func (a *Analyzer) Options() Options { return a.opt }

// Version returns the analyzer version the analyzer behaves as.
func (a *Analyzer) Version() int {
	if a.opt.Version <= 0 || a.opt.Version > version {
		return version
	}
	return a.opt.Version
}

// Japanese reports whether the analyzer reads Japanese as words (version 2
// on), so that a query's Japanese question and request endings are words
// a caller can recognise ("方法", "教える").
func (a *Analyzer) Japanese() bool { return a.Version() >= 2 }

// Signature names the analyzer's exact behaviour, version and options
// together, e.g. "analyze/2" or "analyze/1+nostem+nostop". An index stores it
// and refuses to mix terms made under different signatures.
func (a *Analyzer) Signature() string {
	s := "analyze/" + strconv.Itoa(a.Version())
	if a.opt.NoStem {
		s += "+nostem"
	}
	if a.opt.NoStopwords {
		s += "+nostop"
	}
	return s
}

// ErrUnknownSignature is returned by Parse for a signature this build does
// not know: a newer sagasu pinned it.
var ErrUnknownSignature = fmt.Errorf("unknown analyzer signature")

// Parse returns the analyzer a signature names ("analyze/1+nostem"), the
// one to read an index pinned to it with.
func Parse(signature string) (*Analyzer, error) {
	rest, ok := strings.CutPrefix(signature, "analyze/")
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownSignature, signature)
	}
	parts := strings.Split(rest, "+")
	v, err := strconv.Atoi(parts[0])
	if err != nil || v < 1 || v > version {
		return nil, fmt.Errorf("%w %q: this build knows versions 1 to %d", ErrUnknownSignature, signature, version)
	}
	opt := Options{Version: v}
	for _, p := range parts[1:] {
		switch {
		case p == "nostem" && !opt.NoStem:
			opt.NoStem = true
		case p == "nostop" && !opt.NoStopwords:
			opt.NoStopwords = true
		default:
			return nil, fmt.Errorf("%w %q: option %q", ErrUnknownSignature, signature, p)
		}
	}
	a := New(opt)
	if a.Signature() != signature {
		return nil, fmt.Errorf("%w %q", ErrUnknownSignature, signature)
	}
	return a, nil
}

// Pinned says how an index pinned to the signature pinned is read by a
// build whose analyzer is a. With the same signature it is a itself. An
// older version of a's options (the index made by an earlier sagasu) gives
// that older analyzer and upgrade: the index can be rebuilt with a, and is
// read correctly with the older one until it is. Anything else (another
// variant, or a version newer than this build knows) is an error that says
// what to do.
func (a *Analyzer) Pinned(pinned string) (old *Analyzer, upgrade bool, err error) {
	if pinned == a.Signature() {
		return a, false, nil
	}
	old, err = Parse(pinned)
	if err != nil {
		return nil, false, fmt.Errorf("its keyword index was built by analyzer %q, which this sagasu (%q) does not know: upgrade sagasu: %w", pinned, a.Signature(), err)
	}
	o, n := old.Options(), a.Options()
	if o.NoStem != n.NoStem || o.NoStopwords != n.NoStopwords || old.Version() > a.Version() {
		return nil, false, fmt.Errorf("its keyword index was built by analyzer %q and this sagasu uses %q", pinned, a.Signature())
	}
	return old, true, nil
}

// Terms returns the index terms of text in order, with repeats. The returned
// strings share one backing allocation per call; a caller that keeps a few
// terms long after dropping the rest may strings.Clone them.
func (a *Analyzer) Terms(text string) []string {
	return a.AppendTerms(nil, text)
}

// AppendTerms appends the index terms of text to dst and returns the
// extended slice. It allocates once for the text of all the terms (plus
// whatever growing dst takes), not once per term.
func (a *Analyzer) AppendTerms(dst []string, text string) []string {
	sc, _ := a.pool.Get().(*scratch)
	if sc == nil {
		sc = new(scratch)
	}
	sc.reset()
	a.run(sc, text)
	dst = sc.appendTerms(dst)
	// Do not let one huge text pin huge buffers in the pool forever.
	if cap(sc.norm) <= 1<<20 && cap(sc.terms) <= 1<<20 {
		a.pool.Put(sc)
	}
	return dst
}

// QueryTerms returns the distinct terms of a query, in first-seen order.
func (a *Analyzer) QueryTerms(q string) []string {
	terms := a.Terms(q)
	if len(terms) < 2 {
		return terms
	}
	seen := make(map[string]struct{}, len(terms))
	out := terms[:0]
	for _, t := range terms {
		if _, dup := seen[t]; dup {
			continue
		}
		seen[t] = struct{}{}
		out = append(out, t)
	}
	return out
}

// scratch holds the per-call buffers.
type scratch struct {
	norm   []byte         // NFKC form of the text, when it differs from the text
	tok    []byte         // the word token being built
	terms  []byte         // the text of all terms so far, back to back
	ends   []int          // end offset in terms of each term
	ja     []byte         // the run of Japanese being read
	jaToks []ipadic.Token // its words
	// With locate, Japanese is not analysed: the near terms are found in
	// it (TermsNear).
	locate bool
	near   []string
}

// appendTerms appends the terms in sc to dst, as strings that share one
// allocation.
func (sc *scratch) appendTerms(dst []string) []string {
	if len(sc.ends) > 0 {
		all := string(sc.terms)
		start := 0
		for _, end := range sc.ends {
			dst = append(dst, all[start:end])
			start = end
		}
	}
	return dst
}

func (sc *scratch) reset() {
	sc.norm = sc.norm[:0]
	sc.tok = sc.tok[:0]
	sc.terms = sc.terms[:0]
	sc.ends = sc.ends[:0]
	sc.ja = sc.ja[:0]
}

// class is what a character does in tokenization.
type class uint8

const (
	clSep  class = iota // ends any token
	clWord              // letter or digit outside the CJK scripts
	clApos              // apostrophe: may join two letters of a word
	clMark              // combining mark: belongs to the preceding character
	clHan               // CJK runs: split at each change between these four
	clHira
	clKata
	clHangul
	clJa // a run of Japanese (kanji and kana together) in Japanese text
)

// classify returns the class of a non-ASCII rune.
func classify(r rune) class {
	switch {
	case r == '\u2019' || r == '\u02BC': // right single quote, modifier letter apostrophe
		return clApos
	case r == '\u30FC': // prolonged sound mark: script Common, but written in katakana words
		return clKata
	case r >= 0x1100:
		switch {
		case unicode.Is(unicode.Han, r):
			return clHan
		case unicode.Is(unicode.Hiragana, r):
			return clHira
		case unicode.Is(unicode.Katakana, r):
			return clKata
		case unicode.Is(unicode.Hangul, r):
			return clHangul
		}
	}
	switch {
	case unicode.IsLetter(r) || unicode.IsNumber(r):
		return clWord
	case unicode.In(r, unicode.Mn, unicode.Mc, unicode.Me):
		return clMark
	}
	return clSep
}

// tokenizer state for one call.
type tokenizer struct {
	a  *Analyzer
	sc *scratch
	// ja is set for Japanese text (version 2 on, and the text has kana):
	// its kanji and kana runs are read as words, not bigrams.
	ja bool

	// word token state
	inWord      bool
	tooLong     bool // the token passed MaxTermBytes: drop it at the end
	hasApos     bool // tok contains an apostrophe between letters
	pendingApos bool // an apostrophe followed the token; joined only if a letter comes next
	lastLatin   bool // the last character added was Latin (or ASCII): strip marks after it

	// CJK run state
	cjk     class // clSep when not in a CJK run
	cjkPrev rune
	cjkN    int
}

// run analyses text, appending terms to sc.
func (a *Analyzer) run(sc *scratch, text string) {
	s := text
	if !isASCII(text) && norm.NFKC.QuickSpanString(text) != len(text) {
		sc.norm = norm.NFKC.AppendString(sc.norm[:0], text)
		s = string(sc.norm)
	}
	// Kana are three bytes led by 0xE3: text without that byte (all English
	// text) is known not to be Japanese after one vectorised scan.
	t := tokenizer{a: a, sc: sc, ja: a.Version() >= 2 && strings.IndexByte(s, 0xE3) >= 0 && hasKana(s)}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if isASCIIAlnum(c) {
				// The common case, a run of ASCII letters and digits: add it whole.
				j := i + 1
				for j < len(s) && isASCIIAlnum(s[j]) {
					j++
				}
				t.wordASCII(s[i:j])
				i = j
				continue
			}
			i++
			if c == '\'' {
				t.apostrophe()
			} else {
				t.sep()
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			i++
			t.sep()
			continue
		}
		switch cl := classify(r); cl {
		case clWord:
			t.wordRune(r, s[i:])
		case clApos:
			t.apostrophe()
		case clMark:
			t.mark(r)
		case clSep:
			t.sep()
		default:
			t.cjkRune(cl, r)
		}
		i += size
	}
	t.sep()
}

// startWord is called before adding a word character; letter says whether
// it is a letter (rather than a digit).
func (t *tokenizer) startWord(letter bool) {
	if t.cjk != clSep {
		t.endCJK()
	}
	if t.pendingApos {
		if letter {
			// An apostrophe between a word and a letter: keep it in the
			// token for the contraction rules to look at.
			t.pendingApos = false
			t.hasApos = true
			t.add('\'')
		} else {
			t.endWord() // 5'10 is two tokens
		}
	}
	t.inWord = true
}

func (t *tokenizer) add(b byte) {
	if len(t.sc.tok) >= MaxTermBytes {
		t.tooLong = true
		return
	}
	t.sc.tok = append(t.sc.tok, b)
}

func (t *tokenizer) addRune(r rune) {
	if len(t.sc.tok)+utf8.RuneLen(r) > MaxTermBytes {
		t.tooLong = true
		return
	}
	t.sc.tok = utf8.AppendRune(t.sc.tok, r)
}

// wordASCII adds a run of ASCII letters and digits.
func (t *tokenizer) wordASCII(run string) {
	t.startWord(run[0] > '9')
	t.lastLatin = true
	tok := t.sc.tok
	if len(tok)+len(run) > MaxTermBytes {
		t.tooLong = true
		return
	}
	for i := 0; i < len(run); i++ {
		c := run[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		tok = append(tok, c)
	}
	t.sc.tok = tok
}

// isASCII reports whether s is all ASCII, which NFKC leaves as it is:
// eight bytes at a time, faster than asking the normaliser.
func isASCII(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if binary.LittleEndian.Uint64([]byte(s[i:i+8]))&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func isASCIIAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// wordRune adds a non-ASCII letter or digit r, found at the start of rest.
func (t *tokenizer) wordRune(r rune, rest string) {
	t.startWord(unicode.IsLetter(r))
	r = unicode.ToLower(r)
	if r == 'ς' {
		r = 'σ' // final sigma folds to sigma, as in Unicode case folding
	}
	t.lastLatin = unicode.Is(unicode.Latin, r)
	if t.lastLatin {
		t.addLatin(r, rest)
		return
	}
	t.addRune(r)
}

// addLatin adds the lower-case Latin letter r without its diacritics ("é" ->
// "e", "ǖ" -> "u") and with ligatures and a few letters spelled out in ASCII
// ("ß" -> "ss", "æ" -> "ae", "ø" -> "o"). rest is the text starting with the
// original (not yet lower-cased) letter.
func (t *tokenizer) addLatin(r rune, rest string) {
	// Canonical decomposition puts the base letter first: é = e + U+0301.
	if d := norm.NFD.PropertiesString(rest).Decomposition(); len(d) > 0 {
		if base, _ := utf8.DecodeRune(d); unicode.IsLetter(base) {
			r = unicode.ToLower(base)
		}
	}
	var fold string
	switch r {
	case 'ß':
		fold = "ss"
	case 'æ':
		fold = "ae"
	case 'œ':
		fold = "oe"
	case 'ø':
		fold = "o"
	case 'ł':
		fold = "l"
	case 'đ', 'ð':
		fold = "d"
	case 'þ':
		fold = "th"
	case 'ı':
		fold = "i"
	default:
		t.addRune(r)
		return
	}
	for i := 0; i < len(fold); i++ {
		t.add(fold[i])
	}
}

func (t *tokenizer) apostrophe() {
	if t.inWord && !t.pendingApos {
		t.pendingApos = true
		return
	}
	t.sep()
}

// mark handles a combining mark: dropped after a Latin letter (a diacritic
// NFKC could not compose), kept inside words of other scripts (Devanagari
// vowel signs and the like), ignored elsewhere.
func (t *tokenizer) mark(r rune) {
	switch {
	case t.inWord && !t.pendingApos:
		if !t.lastLatin {
			t.addRune(r)
		}
	case t.cjk != clSep:
		// Variation selectors and stray voicing marks: skip, keep the run.
	default:
		t.sep()
	}
}

func (t *tokenizer) sep() {
	if t.inWord {
		t.endWord()
	}
	if t.cjk != clSep {
		t.endCJK()
	}
}

// endWord finishes the current word token and emits its term, if any.
func (t *tokenizer) endWord() {
	tok := t.sc.tok
	keep := !t.tooLong
	if keep && t.hasApos {
		tok = contraction(tok)
	}
	t.sc.tok = t.sc.tok[:0]
	t.inWord, t.tooLong, t.hasApos, t.pendingApos, t.lastLatin = false, false, false, false, false
	if !keep || len(tok) == 0 {
		return
	}
	if !t.a.opt.NoStopwords && isStopword(tok) {
		return
	}
	if !t.a.opt.NoStem && isASCIILower(tok) {
		tok = t.a.stems.stem(tok)
	}
	t.emit(tok)
}

func (t *tokenizer) emit(term []byte) {
	t.sc.terms = append(t.sc.terms, term...)
	t.sc.ends = append(t.sc.ends, len(t.sc.terms))
}

// cjkRune adds a Han, Hiragana, Katakana or Hangul character: each pair of
// neighbours in a run of one script is a term.
func (t *tokenizer) cjkRune(cl class, r rune) {
	if t.inWord {
		t.endWord()
	}
	if t.ja && cl != clHangul {
		if t.cjk != clJa {
			if t.cjk != clSep {
				t.endCJK()
			}
			t.cjk = clJa
			t.sc.ja = t.sc.ja[:0]
		}
		t.sc.ja = utf8.AppendRune(t.sc.ja, r)
		return
	}
	if t.cjk != cl {
		if t.cjk != clSep {
			t.endCJK()
		}
		t.cjk, t.cjkPrev, t.cjkN = cl, r, 1
		return
	}
	terms := utf8.AppendRune(t.sc.terms, t.cjkPrev)
	t.sc.terms = utf8.AppendRune(terms, r)
	t.sc.ends = append(t.sc.ends, len(t.sc.terms))
	t.cjkPrev = r
	t.cjkN++
}

// endCJK finishes a CJK run. A run of one character is a term by itself,
// unless it is a lone hiragana (a particle such as を, は, が) or a lone
// prolonged sound mark (often written as a dash).
func (t *tokenizer) endCJK() {
	if t.cjk == clJa {
		t.cjk = clSep
		if t.sc.locate {
			t.locateJapanese(string(t.sc.ja))
		} else {
			t.japanese(string(t.sc.ja))
		}
		return
	}
	if t.cjkN == 1 && t.cjk != clHira && t.cjkPrev != '\u30FC' {
		t.sc.terms = utf8.AppendRune(t.sc.terms, t.cjkPrev)
		t.sc.ends = append(t.sc.ends, len(t.sc.terms))
	}
	t.cjk, t.cjkN = clSep, 0
}

// cjkTerm emits a term of CJK text.
func (t *tokenizer) cjkTerm(term string) {
	if len(term) > MaxTermBytes {
		t.bigrams(term)
		return
	}
	t.sc.terms = append(t.sc.terms, term...)
	t.sc.ends = append(t.sc.ends, len(t.sc.terms))
}

// bigrams emits the character bigrams of a CJK word, or the word itself
// when it is one character, except a lone hiragana or prolonged sound mark
// (as version 1 read every CJK run).
func (t *tokenizer) bigrams(word string) {
	prev, n := rune(0), 0
	for _, r := range word {
		if n > 0 {
			t.sc.terms = utf8.AppendRune(t.sc.terms, prev)
			t.sc.terms = utf8.AppendRune(t.sc.terms, r)
			t.sc.ends = append(t.sc.ends, len(t.sc.terms))
		}
		prev = r
		n++
	}
	if n == 1 && !unicode.Is(unicode.Hiragana, prev) && prev != '\u30FC' {
		t.sc.terms = utf8.AppendRune(t.sc.terms, prev)
		t.sc.ends = append(t.sc.ends, len(t.sc.terms))
	}
}

// contraction resolves a token with apostrophes between letters. English
// clitics after the last apostrophe are removed: "user's" -> "user",
// "we're" -> "we", "they've" -> "they", "i'll" -> "i", "she'd" -> "she",
// "i'm" -> "i"; "n't" is removed from the word it negates: "don't" -> "do",
// "isn't" -> "is", with "can't" -> "can", "won't" -> "will", "shan't" ->
// "shall". Other apostrophes are removed and the parts joined: "o'clock" ->
// "oclock", "O'Brien" -> "obrien".
func contraction(tok []byte) []byte {
	last := -1
	for i := len(tok) - 1; i >= 0; i-- {
		if tok[i] == '\'' {
			last = i
			break
		}
	}
	if last < 0 {
		return tok
	}
	base, suffix := tok[:last], tok[last+1:]
	switch string(suffix) {
	case "s", "re", "ve", "ll", "d", "m":
		tok = base
	case "t":
		switch string(base) {
		case "can":
			tok = base
		case "won":
			tok = append(base[:0], "will"...) // fits: "won't" is 5 bytes
		case "shan":
			tok = append(base[:0], "shall"...) // fits: "shan't" is 6 bytes
		default:
			if n := len(base); n >= 2 && base[n-1] == 'n' {
				tok = base[:n-1]
			}
		}
	}
	// Join whatever apostrophes remain.
	out := tok[:0]
	for _, b := range tok {
		if b != '\'' {
			out = append(out, b)
		}
	}
	return out
}

func isASCIILower(b []byte) bool {
	for _, c := range b {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

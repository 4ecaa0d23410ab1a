package loop

import (
	"context"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/chunk"
	"github.com/sagasu-dev/sagasu/internal/doc"
)

// TermStats gives how many chunks of the index contain each of some
// analysed terms, and how many chunks there are. store.Store implements it.
type TermStats interface {
	DocFreq(ctx context.Context, terms []string) (map[string]int, int, error)
}

// weights looks up and remembers document frequencies for one operation
// (one evaluation, one refinement, one loop run), so the index is asked
// about each term once.
type weights struct {
	src TermStats // nil: every term weighs 1 and counts as indexed
	an  *analyze.Analyzer
	df  map[string]int
	n   int
}

func newWeights(src TermStats, an *analyze.Analyzer) *weights {
	return &weights{src: src, an: an, df: map[string]int{}}
}

// load fetches the document frequencies of the terms of texts not yet known.
func (w *weights) load(ctx context.Context, texts ...string) error {
	if w.src == nil {
		return nil
	}
	// Ask about the terms w.an makes of the texts (the analyzer the index
	// is pinned to), in batches.
	var batch []string
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		df, total, err := w.src.DocFreq(ctx, batch)
		if err != nil {
			return err
		}
		w.n = total
		for _, t := range batch {
			w.df[t] = df[t] // absent means 0
		}
		batch = batch[:0]
		return nil
	}
	for _, text := range texts {
		for _, term := range w.an.QueryTerms(text) {
			if _, ok := w.df[term]; !ok && !slices.Contains(batch, term) {
				batch = append(batch, term)
			}
		}
		if len(batch) >= 400 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// idf is the BM25 inverse document frequency of term, the weight a term has
// in matching: a term in every chunk weighs almost nothing, a rare one a lot.
// Without statistics every term weighs 1.
func (w *weights) idf(term string) float64 {
	if w.src == nil || w.n == 0 {
		return 1
	}
	df := w.df[term]
	return math.Log(1 + (float64(w.n-df)+0.5)/(float64(df)+0.5))
}

// indexed reports whether the index has term at all (always true without
// statistics).
func (w *weights) indexed(term string) bool {
	if w.src == nil {
		return true
	}
	return w.df[term] > 0
}

// share returns the fraction of the chunks that contain term (0 without
// statistics).
func (w *weights) share(term string) float64 {
	if w.src == nil || w.n == 0 {
		return 0
	}
	return float64(w.df[term]) / float64(w.n)
}

// termsMatch reports whether a query term and a text term are the same word:
// equal, or Latin stems of one word that Porter stemming left apart
// ("config" and "configur", "deploi" and "deploy"): a shared prefix of at
// least five letters that is all but at most one letter of the shorter.
func termsMatch(a, b string) bool {
	if a == b {
		return true
	}
	if len(a) < 5 || len(b) < 5 || !isASCIIWord(a) || !isASCIIWord(b) {
		return false
	}
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n >= 5 && n >= min(len(a), len(b))-1
}

func isASCIIWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// termSet is the distinct terms of a piece of text.
type termSet map[string]struct{}

func (s termSet) has(term string) bool {
	if _, ok := s[term]; ok {
		return true
	}
	if len(term) < 5 || !isASCIIWord(term) {
		return false
	}
	for t := range s {
		if termsMatch(term, t) {
			return true
		}
	}
	return false
}

func makeSet(an *analyze.Analyzer, text string) termSet {
	s := termSet{}
	for _, t := range an.Terms(text) {
		s[t] = struct{}{}
	}
	return s
}

// unit is a span of a result that an aspect must fall within to count as
// covered: a line of its text, or its heading path with its title. An
// aspect's words spread over a whole chunk are weaker evidence than the same
// words in one line or heading.
type unit struct {
	label string // the heading path or line, for evidence
	terms termSet
}

// shape is a result cut into units: its sections, each with a heading path
// (with the source title) that says what the section is about, and its
// lines. A chunk is usually one section; when the chunker packed small
// sections together, the markdown headings in its text start new ones.
type shape struct {
	sections []section
}

type section struct {
	head  unit    // title and every heading segment together
	parts []unit  // title and heading segments one by one
	deep  termSet // the deepest heading segment (the title when there is none)
	lines []unit
}

func newSection(an *analyze.Analyzer, title string, path []string) section {
	sec := section{}
	head := []string{title}
	sec.parts = append(sec.parts, unit{label: title, terms: makeSet(an, title)})
	sec.deep = sec.parts[0].terms
	label := title
	var shown []string
	for _, seg := range path {
		seg = CleanHeading(seg) // badge markup is not content
		if seg == "" {
			continue
		}
		shown = append(shown, seg)
		head = append(head, seg)
		u := unit{label: seg, terms: makeSet(an, seg)}
		sec.parts = append(sec.parts, u)
		sec.deep = u.terms
	}
	if len(shown) > 0 {
		label = strings.Join(shown, " > ")
	}
	sec.head = unit{label: label, terms: makeSet(an, strings.Join(head, "\n"))}
	return sec
}

// resultShape cuts a result into its sections and units.
func resultShape(an *analyze.Analyzer, r doc.Hit) shape {
	var sh shape
	for _, sp := range splitSections(r.Chunk.Heading, r.Chunk.Text) {
		sec := newSection(an, r.Source.Title, sp.path)
		for _, line := range sp.lines {
			if set := makeSet(an, line); len(set) > 0 {
				sec.lines = append(sec.lines, unit{label: line, terms: set})
			}
		}
		sh.sections = append(sh.sections, sec)
	}
	return sh
}

// HeadingPaths returns the heading paths of the sections a result holds,
// without markup (badges, anchors, backticks): its own, and those of the
// sections the chunker packed into its text (read as the loop reads them).
func HeadingPaths(r doc.Hit) [][]string {
	var out [][]string
	for _, sec := range splitSections(r.Chunk.Heading, r.Chunk.Text) {
		path := make([]string, 0, len(sec.path))
		for _, seg := range sec.path {
			path = append(path, CleanHeading(seg))
		}
		out = append(out, path)
	}
	return out
}

// textSection is a heading path and the non-blank lines under it.
type textSection struct {
	path  []string
	lines []string
}

// splitSections splits a chunk's text at its markdown headings, as the
// chunker reads them (chunk.Sections). The first section has the chunk's own
// heading path; a heading of level n in the text sits below the first n-1
// segments of it.
func splitSections(path []string, text string) []textSection {
	out := []textSection{{path: path}}
	add := func(part string) {
		for _, line := range strings.Split(part, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				out[len(out)-1].lines = append(out[len(out)-1].lines, line)
			}
		}
	}
	secs := chunk.Sections(text)
	end := len(text)
	if len(secs) > 0 {
		end = secs[0].Start
	}
	add(text[:end])
	for i, sec := range secs {
		end := len(text)
		if i+1 < len(secs) {
			end = secs[i+1].Start
		}
		h := sec.Heading[len(sec.Heading)-1]
		body := skipHeadingLine(text[sec.Start:end])
		if n := len(path); n > 0 && strings.EqualFold(CleanHeading(path[n-1]), CleanHeading(h)) {
			add(body) // the chunk's own heading, repeated in its text
			continue
		}
		sub := append(append([]string(nil), path[:min(sec.Level-1, len(path))]...), h)
		out = append(out, textSection{path: sub})
		add(body)
	}
	return out
}

// skipHeadingLine drops a section's heading from its text: one line for an
// ATX heading ("## Title"), two for a setext one (a title underlined).
func skipHeadingLine(s string) string {
	lines := 1
	if !strings.HasPrefix(strings.TrimLeft(s, " "), "#") {
		lines = 2
	}
	for range lines {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			return ""
		}
		s = s[i+1:]
	}
	return s
}

// headCoverage is how much a section's heading is about aspect a: the whole
// heading path counts when its deepest heading has a word of the aspect
// ("Deploy Your Site > Platform Guides > GitHub Pages" for "deploy to GitHub
// Pages"); otherwise only the best single heading does, so that words of an
// ancestor and an unrelated child ("Frontmatter Config > Default Theme Only >
// sidebar") are not read as one phrase.
func (a aspect) headCoverage(sec section) float64 {
	deep := false
	for _, t := range a.terms {
		if sec.deep.has(t) {
			deep = true
			break
		}
	}
	if deep {
		return a.coverage(sec.head)
	}
	best := 0.0
	for _, u := range sec.parts {
		best = max(best, a.coverage(u))
	}
	return best
}

// score is how well a result covers aspect a (0..1), and the unit that
// shows it. A heading path that names the aspect covers it fully. A line of
// text counts in proportion to how much its section's heading is about the
// aspect too, from half (a heading about something else: a passing mention,
// or a summary listing many topics) to whole.
func (a aspect) score(sh shape) (float64, string) {
	best, label := 0.0, ""
	for _, sec := range sh.sections {
		head := a.headCoverage(sec)
		if head > best {
			best, label = head, sec.head.label
		}
		g := 0.5 + 0.5*head
		if a.plain {
			g = 1
		}
		for _, u := range sec.lines {
			if c := a.coverage(u) * g; c > best {
				best, label = c, u.label
			}
		}
	}
	return best, label
}

// hasText reports whether a result carries anything to evaluate.
func hasText(r doc.Hit) bool {
	return strings.TrimSpace(r.Chunk.Text) != "" || strings.TrimSpace(r.Chunk.HeadingPath()) != ""
}

// surfaceWords splits text into the words a person would type: runs of
// Latin letters and digits (with inner hyphens, dots and underscores, as in
// "server-side" or "config.mts"), and runs of one CJK script (katakana with
// ー, or Han). Hiragana runs, which are mostly particles and endings, are
// left out.
func surfaceWords(text string) []string {
	var out []string
	start, kind := -1, 0 // kind: 1 word, 2 han, 3 katakana
	flush := func(end int) {
		if start >= 0 {
			w := strings.Trim(text[start:end], "-._")
			if w != "" {
				out = append(out, w)
			}
		}
		start, kind = -1, 0
	}
	for i, r := range text {
		k := 0
		switch {
		case r == 'ー' || unicode.Is(unicode.Katakana, r):
			k = 3
		case unicode.Is(unicode.Han, r):
			k = 2
		case unicode.Is(unicode.Hiragana, r):
			k = 0
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			k = 1
		case (r == '-' || r == '.' || r == '_') && kind == 1:
			continue // inside a word; trimmed at its ends
		}
		if k != kind {
			flush(i)
			if k != 0 {
				start, kind = i, k
			}
		}
	}
	flush(len(text))
	return out
}

// words splits text into the words a person would type, as surfaceWords
// does; with an analyzer that reads Japanese as words, a run of Japanese in
// text with kana is split into its content words as written (ビルド, データ,
// 読み込み), each of which the analyzer reads as the text does, where
// surfaceWords would cut it at every change of script (読, 込).
func words(an *analyze.Analyzer, text string) []string {
	if !an.Japanese() || !analyze.HasKana(text) {
		return surfaceWords(text)
	}
	var out []string
	start, ja := 0, false
	flush := func(end int) {
		if start >= end {
			return
		}
		if ja {
			out = append(out, an.Words(text[start:end])...)
		} else {
			out = append(out, surfaceWords(text[start:end])...)
		}
	}
	for i, r := range text {
		if j := isCJK(r); j != ja {
			flush(i)
			start, ja = i, j
		}
	}
	flush(len(text))
	return out
}

// isCJK reports whether r is Han, Hiragana or Katakana.
func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) || r == 'ー'
}

// hasCJK reports whether s contains Japanese or Chinese characters.
func hasCJK(s string) bool {
	for _, r := range s {
		if isCJK(r) {
			return true
		}
	}
	return false
}

// candidate is a surface word found in some results, scored for use in a
// query.
type candidate struct {
	word  string
	terms []string
	score float64
	docs  int // results it appears in
}

// feedbackWords ranks the surface words of texts (pseudo-relevance feedback):
// a word scores by how many of the texts contain it times the mean weight of
// its terms. Words whose terms are all in skip, or that are in more than
// maxShare of the index, are left out. Each word is returned in the surface
// form most often written.
func feedbackWords(ctx context.Context, w *weights, texts []string, skip termSet, maxShare float64) ([]candidate, error) {
	type agg struct {
		forms map[string]int
		docs  int
		terms []string
	}
	byKey := map[string]*agg{}
	var order []string
	var all []string
	for _, text := range texts {
		inDoc := map[string]bool{}
		for _, word := range words(w.an, text) {
			if utf8.RuneCountInString(word) < 2 || isFunctionWord(word) {
				continue
			}
			terms := w.an.QueryTerms(word)
			if len(terms) == 0 || len(terms) > 6 {
				continue
			}
			key := strings.Join(terms, " ")
			a := byKey[key]
			if a == nil {
				a = &agg{forms: map[string]int{}, terms: terms}
				byKey[key] = a
				order = append(order, key)
				all = append(all, word)
			}
			a.forms[word]++
			if !inDoc[key] {
				inDoc[key] = true
				a.docs++
			}
		}
	}
	if err := w.load(ctx, all...); err != nil {
		return nil, err
	}
	var out []candidate
	for _, key := range order {
		a := byKey[key]
		fresh, sum, common := false, 0.0, false
		for _, t := range a.terms {
			if !skip.has(t) {
				fresh = true
			}
			if !w.indexed(t) {
				common = true // not in the index: no use in a query
			}
			if w.share(t) > maxShare {
				common = true
			}
			sum += w.idf(t)
		}
		if !fresh || common {
			continue
		}
		out = append(out, candidate{word: commonest(a.forms), terms: a.terms, score: float64(a.docs) * sum / float64(len(a.terms)), docs: a.docs})
	}
	slices.SortStableFunc(out, byDesc(func(c candidate) float64 { return c.score }))
	return out, nil
}

// commonest returns the most frequent form, the lexically first on ties. A
// capitalised form ("Helpful", from the start of a sentence) is lower-cased;
// names written with inner capitals or all in capitals (VitePress, HTTP) stay.
func commonest(forms map[string]int) string {
	best, n := "", -1
	for f, c := range forms {
		if c > n || c == n && f < best {
			best, n = f, c
		}
	}
	if r, size := utf8.DecodeRuneInString(best); unicode.IsUpper(r) && size < len(best) && strings.ToLower(best[size:]) == best[size:] {
		return strings.ToLower(best)
	}
	return best
}

// functionWords are English words that say nothing about a topic, beyond
// the analyzer's stopwords; feedback never proposes them.
var functionWords = map[string]bool{
	"when": true, "where": true, "what": true, "which": true, "who": true, "how": true, "why": true, "whether": true,
	"under": true, "over": true, "after": true, "before": true, "than": true, "also": true, "only": true, "more": true,
	"most": true, "about": true, "above": true, "below": true, "between": true, "through": true, "during": true,
	"without": true, "within": true, "while": true, "because": true, "so": true, "can": true, "could": true,
	"should": true, "would": true, "may": true, "might": true, "must": true, "shall": true, "do": true, "does": true,
	"did": true, "done": true, "being": true, "you": true, "your": true, "we": true, "our": true, "he": true, "she": true,
	"his": true, "her": true, "here": true, "via": true, "per": true, "etc": true, "e.g": true, "i.e": true, "like": true,
	"see": true, "same": true, "just": true, "yes": true, "any": true, "some": true, "each": true, "every": true,
	"other": true, "others": true, "both": true, "either": true, "neither": true, "all": true, "many": true,
	"much": true, "few": true, "own": true, "one": true, "ones": true, "way": true, "ways": true, "thing": true,
	"things": true, "following": true, "example": true, "examples": true,
	"now": true, "again": true, "already": true, "always": true, "never": true, "often": true, "still": true,
	"even": true, "instead": true, "otherwise": true, "however": true, "therefore": true, "though": true,
}

// isFunctionWord reports whether a surface word is a function or goal word.
func isFunctionWord(word string) bool {
	w := asciiLower(word)
	return functionWords[w] || enGeneric[w] || enStop[w]
}

package react

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/cite"
	"github.com/sagasu-dev/sagasu/internal/clip"
	"github.com/sagasu-dev/sagasu/internal/doc"
)

// DefaultMinSupport is the share of a claim's words that its cited passages
// must contain for the claim to count as supported.
const DefaultMinSupport = 0.6

// Claim is one sentence of an answer judged against the passages it cites
// (a sentence is a claim; it is supported when its cited passages together
// contain it: its words, and every number and name in it).
type Claim struct {
	Text      string `json:"text"` // the sentence without its markers
	Citations []int  `json:"citations"`
	// Checked is false for sentences too short to state anything ("Here is
	// how:"); they are neither supported nor unsupported.
	Checked   bool    `json:"checked"`
	Supported bool    `json:"supported"`
	Support   float64 `json:"support"` // share of the claim's words found in its cited passages
	Reason    string  `json:"reason,omitempty"`
	// Answers is set on a sentence that speaks to the question: it holds
	// at least two of the question's key terms (all of them when there are
	// fewer). A supported sentence without it is backed by its passage but
	// not about what was asked.
	Answers bool `json:"answers"`
	// Code marks a block quoted verbatim (a fenced code block or a
	// table), backed by containment.
	Code bool `json:"code,omitempty"`
	// Start and End are the claim's byte span in the answer.
	Start int `json:"-"`
	End   int `json:"-"`
	// quotes holds, per cited passage, its sentence closest to the claim.
	quotes map[int]string
}

// Checker judges claims lexically: no model is needed.
type Checker struct {
	An         *analyze.Analyzer
	MinSupport float64 // 0 means DefaultMinSupport
	// Common, when set, reports a term that much of the index holds
	// (CommonShare of its chunks or more): the name of what the whole
	// documentation is about, such as its package (`fastapi` in FastAPI's
	// documentation). A name that is one such word need not be quoted
	// by the cited passage; it still counts among the sentence's words.
	Common func(term string) bool
}

// CommonShare is the share of an index's chunks that hold a word the
// whole documentation is about. In FastAPI's English documentation
// (10,659 chunks) `fastapi` is in 16% of them, the next name, `pydantic`,
// in 3%.
const CommonShare = 0.1

// numberRE finds numbers: 42, 1.5, 10,000, v2.
var numberRE = regexp.MustCompile(`\d+(?:[.,]\d+)*`)

// codeRE finds inline code spans (the citation grammar's).
var codeRE = cite.Code

// Check splits answer into sentences and blocks (fenced code, tables)
// and judges each against the passages it cites. A sentence without a
// marker of its own is cited by the next marker of its paragraph (a
// paragraph that ends "… [1]" cites [1] for each of its sentences). A
// block is backed when a passage cited by the nearest sentence before it
// (after it, when none is before) contains it verbatim.
func (c Checker) Check(answer string, ps *Passages) []Claim {
	minSupport := c.MinSupport
	if minSupport <= 0 {
		minSupport = DefaultMinSupport
	}
	segs := splitAnswer(answer)
	inherit(answer, segs)
	var claims []Claim
	for i, seg := range segs {
		var cl Claim
		switch {
		case seg.Note:
			cl = Claim{Text: stripMarkers(seg.Text), Citations: seg.Cites}
		case seg.Code:
			cl = c.codeClaim(seg.Text, blockCites(segs, i), ps)
		default:
			cl = c.claim(seg.Text, seg.Cites, ps, minSupport)
		}
		if cl.Citations == nil {
			cl.Citations = []int{}
		}
		cl.Start, cl.End = seg.Start, seg.End
		claims = append(claims, cl)
	}
	return claims
}

// labelRE is a line in bold alone, with its markers: a title, not a claim.
var labelRE = regexp.MustCompile(`^\*\*[^*]+\*\*(?:\s*\[\d+(?:\s*,\s*\d+)*\])*$`)

// blockCites are the citations that back block i: those of the nearest
// sentence before it, else of the nearest after it.
func blockCites(segs []segment, i int) []int {
	for j := i - 1; j >= 0; j-- {
		if !segs[j].Code && len(segs[j].Cites) > 0 {
			return segs[j].Cites
		}
	}
	for j := i + 1; j < len(segs); j++ {
		if !segs[j].Code && len(segs[j].Cites) > 0 {
			return segs[j].Cites
		}
	}
	return nil
}

// inherit gives each sentence its markers, or, when it has none, those of
// the next marked sentence of its paragraph (no blank line or block
// between them).
func inherit(answer string, segs []segment) {
	for i := range segs {
		if segs[i].Code {
			continue
		}
		segs[i].Cites = citedIn(segs[i].Text)
	}
	for i := len(segs) - 2; i >= 0; i-- {
		s, next := &segs[i], segs[i+1]
		if s.Code || next.Code || next.Note && labelRE.MatchString(next.Text) || len(s.Cites) > 0 || len(next.Cites) == 0 {
			continue
		}
		if gap := answer[s.End:next.Start]; strings.Count(gap, "\n") < 2 {
			s.Cites = next.Cites
		}
	}
}

// codeClaim judges a code block by verbatim containment.
func (c Checker) codeClaim(block string, cites []int, ps *Passages) Claim {
	cl := Claim{Text: block, Citations: cites, Checked: true, Code: true}
	if cl.Citations == nil {
		cl.Citations = []int{}
	}
	body := codeBody(block)
	for _, n := range cites {
		if h, ok := ps.Get(n); ok && strings.Contains(squash(h.Chunk.Text), squash(body)) {
			cl.Supported, cl.Support = true, 1
			return cl
		}
	}
	if len(cites) == 0 {
		cl.Reason = "a code block with no cited sentence before it"
	} else {
		cl.Reason = "the code is not in the cited passages"
	}
	return cl
}

// codeBody is a fenced block without its fences.
func codeBody(block string) string {
	lines := strings.Split(strings.TrimSpace(block), "\n")
	if len(lines) >= 2 && fence.MatchString(lines[0]) {
		lines = lines[1:]
		if fence.MatchString(lines[len(lines)-1]) {
			lines = lines[:len(lines)-1]
		}
	}
	return strings.Join(lines, "\n")
}

// squash drops all white space and the lines only documentation tooling
// reads, so indentation and those lines do not decide containment.
func squash(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if codeNoise.MatchString(line) {
			continue
		}
		for _, f := range strings.Fields(line) {
			b.WriteString(f)
		}
	}
	return b.String()
}

// segment is a sentence or a block of an answer quoted verbatim (a fenced
// code block or a table).
type segment struct {
	Text       string
	Start, End int
	Code       bool
	// Note marks a line that states nothing: the answer's own note on a
	// cut block, or a label (a section's title in bold).
	Note bool
	// Cites are the passages the sentence cites (its own markers, or its
	// paragraph's).
	Cites []int
}

// splitAnswer cuts an answer into code blocks, tables, notes on cut
// blocks and the sentences between.
func splitAnswer(answer string) []segment {
	var out []segment
	prose := func(from, to int) {
		for _, s := range splitSentences(answer[from:to]) {
			out = append(out, segment{Text: s.Text, Start: from + s.Start, End: from + s.End,
				Note: cutNoteRE.MatchString(s.Text) || labelRE.MatchString(s.Text)})
		}
	}
	pos, proseFrom := 0, 0
	open, table := -1, -1
	var fences cite.Fences
	endTable := func(at int) {
		out = append(out, segment{Text: answer[table:at], Start: table, End: at, Code: true})
		table, proseFrom = -1, at
	}
	for pos < len(answer) {
		end := strings.IndexByte(answer[pos:], '\n')
		lineEnd := len(answer)
		if end >= 0 {
			lineEnd = pos + end
		}
		line := answer[pos:lineEnd]
		isTable := open < 0 && strings.HasPrefix(strings.TrimSpace(line), "|")
		if table >= 0 && !isTable {
			endTable(pos - 1)
		}
		wasOpen := fences.Open()
		code := fences.Line(line)
		switch {
		case code && !wasOpen:
			prose(proseFrom, pos)
			open = pos
		case wasOpen && !fences.Open():
			out = append(out, segment{Text: answer[open:lineEnd], Start: open, End: lineEnd, Code: true})
			open = -1
			proseFrom = lineEnd
		case isTable && table < 0:
			prose(proseFrom, pos)
			table = pos
		}
		pos = lineEnd + 1
	}
	switch {
	case open >= 0: // an unclosed fence: the rest is code
		out = append(out, segment{Text: answer[open:], Start: open, End: len(answer), Code: true})
	case table >= 0:
		endTable(len(answer))
	case proseFrom < len(answer):
		prose(proseFrom, len(answer))
	}
	return out
}

func (c Checker) claim(sentence string, cites []int, ps *Passages, minSupport float64) Claim {
	cl := Claim{Text: stripMarkers(sentence), Citations: cites}
	if cl.Citations == nil {
		cl.Citations = []int{}
	}
	// A list item's number or bullet is not part of what it claims.
	body := listMark.ReplaceAllString(cl.Text, "")
	terms := c.An.QueryTerms(body)
	nums := numberRE.FindAllString(body, -1)
	if len(terms) < 2 && len(nums) == 0 {
		return cl
	}
	cl.Checked = true
	if len(cl.Citations) == 0 {
		cl.Reason = "no citation"
		return cl
	}
	var cited []doc.Hit
	var texts []string
	for _, n := range cl.Citations {
		h, ok := ps.Get(n)
		if !ok {
			cl.Reason = fmt.Sprintf("cites [%d], which no search of this run returned", n)
			return cl
		}
		cited = append(cited, h)
		texts = append(texts, doc.ContextText(h.Source.Title, h.Chunk))
	}
	if len(cl.Citations) > MaxCitationsPerSentence {
		cl.Reason = fmt.Sprintf("cites %d passages; at most %d may back one sentence", len(cl.Citations), MaxCitationsPerSentence)
		return cl
	}
	have := map[string]bool{}
	for _, t := range texts {
		for _, term := range c.An.Terms(t) {
			have[term] = true
		}
	}
	found := 0
	var missing []string
	for _, t := range terms {
		if have[t] {
			found++
		} else {
			missing = append(missing, t)
		}
	}
	if len(terms) > 0 {
		cl.Support = float64(found) / float64(len(terms))
	} else {
		cl.Support = 1
	}
	// Compared without white space, as code is (squash): a code span or a
	// name may break across lines in the source and be quoted on one line.
	joined := fold(strings.Join(texts, "\n"))
	squashed := squash(joined)
	for _, n := range nums {
		if !strings.Contains(joined, fold(n)) && !strings.Contains(joined, strings.ReplaceAll(n, ",", "")) {
			cl.Reason = fmt.Sprintf("the number %s is not in the cited passages", n)
			return cl
		}
	}
	for _, name := range names(body) {
		if !strings.Contains(squashed, squash(fold(name))) && !c.common(name) {
			cl.Reason = fmt.Sprintf("%q is not in the cited passages", name)
			return cl
		}
	}
	cl.quotes = map[int]string{}
	for i, h := range cited {
		cl.quotes[cl.Citations[i]] = c.closest(terms, h.Chunk.Text)
	}
	if cl.Support < minSupport {
		cl.Reason = fmt.Sprintf("only %.0f%% of its words are in the cited passages (missing: %s)", 100*cl.Support, strings.Join(first(missing, 5), ", "))
		return cl
	}
	cl.Supported = true
	return cl
}

// common reports a name that is one word the whole index is about.
func (c Checker) common(name string) bool {
	if c.Common == nil {
		return false
	}
	ts := c.An.Terms(splitIdentifiers(name))
	return len(ts) == 1 && c.Common(ts[0])
}

// closest returns the sentence of text that shares most terms with terms.
func (c Checker) closest(terms []string, text string) string {
	want := map[string]bool{}
	for _, t := range terms {
		want[t] = true
	}
	best, bestN := "", -1
	for _, s := range splitSentences(text) {
		n := 0
		seen := map[string]bool{}
		for _, t := range c.An.Terms(s.Text) {
			if want[t] && !seen[t] {
				seen[t] = true
				n++
			}
		}
		if n > bestN {
			best, bestN = s.Text, n
		}
	}
	return clip.Runes(best, 300)
}

// names returns what in s must be quoted exactly to be true: inline code,
// and words that are not plain lower-case words (identifiers such as
// defineConfig, file names such as config.mts, capitalised names that do
// not start the sentence).
func names(s string) []string {
	var out []string
	for _, m := range codeRE.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	s = codeRE.ReplaceAllString(s, " ")
	for i, w := range strings.Fields(s) {
		if hasCJK(w) {
			// Japanese runs its words together: a Latin word inside is a
			// name when it is capitalised, whatever its place
			// (「AstroでKafkaを使う」 names Astro and Kafka).
			for _, l := range latinRE.FindAllString(w, -1) {
				if name(l) || unicode.IsUpper([]rune(l)[0]) && len(l) > 1 {
					out = append(out, l)
				}
			}
			continue
		}
		w = strings.Trim(w, `.,;:!?()[]{}"'“”‘’*_`) // emphasis marks are not part of a name
		if w == "" || numberRE.MatchString(w) && strings.Trim(w, "0123456789.,") == "" {
			continue
		}
		proper := i > 0 && unicode.IsUpper([]rune(w)[0]) && len(w) > 1
		if name(w) || proper {
			out = append(out, w)
		}
	}
	return out
}

// latinRE finds the Latin words (with dots, slashes and dashes inside,
// as identifiers and file names have) in text of another script.
var latinRE = regexp.MustCompile(`[A-Za-z][A-Za-z0-9._/-]*[A-Za-z0-9]|[A-Za-z]`)

// name reports a word that is an identifier or a file name (defineConfig,
// config.mts, src/pages) rather than a plain word.
func name(w string) bool {
	if strings.ContainsAny(w, "._/") && len(w) > 2 && !strings.HasSuffix(w, ".") {
		return true
	}
	for j, r := range w {
		if j > 0 && unicode.IsUpper(r) {
			return true
		}
	}
	return false
}

// fold lower-cases for containment checks.
func fold(s string) string { return strings.ToLower(s) }

func first(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// Cite gives each sentence of answer that cites nothing the passage of ps
// that backs it best, when one does: a correct sentence a model wrote
// without a marker is kept and cited, not dropped. It returns the answer
// with the markers added and how many sentences it cited.
func (c Checker) Cite(answer string, ps *Passages) (string, int) {
	minSupport := c.MinSupport
	if minSupport <= 0 {
		minSupport = DefaultMinSupport
	}
	segs := splitAnswer(answer)
	inherit(answer, segs)
	type insert struct {
		at int
		n  int
	}
	var adds []insert
	for _, seg := range segs {
		if seg.Code || seg.Note || len(seg.Cites) > 0 {
			continue
		}
		best, bestSupport := 0, 0.0
		for n := 1; n <= ps.Len(); n++ {
			cl := c.claim(seg.Text, []int{n}, ps, minSupport)
			if !cl.Checked {
				break // too short to state anything: nothing to cite
			}
			if cl.Supported && cl.Support > bestSupport {
				best, bestSupport = n, cl.Support
			}
		}
		if best > 0 {
			adds = append(adds, insert{seg.End, best})
		}
	}
	for i := len(adds) - 1; i >= 0; i-- {
		at, m := adds[i].at, marker([]int{adds[i].n})
		// The marker goes before the sentence's stop: "… it [2]." and
		// "…します[2]。".
		switch last, size := utf8.DecodeLastRuneInString(answer[:at]); {
		case last == '。' || last == '：':
			at -= size
		case strings.ContainsRune(".!?:", last):
			at -= size
			m = " " + m
		default:
			m = " " + m
		}
		answer = answer[:at] + m + answer[at:]
	}
	return answer, len(adds)
}

// About marks the claims that speak to question (Claim.Answers): their
// own words hold at least two of its key terms, or all when it has fewer.
func (c Checker) About(question string, claims []Claim) {
	q := topicTerms(c.An, question)
	need := min(2, len(q))
	for i := range claims {
		cl := &claims[i]
		if !cl.Checked || cl.Code {
			continue
		}
		have := set(c.An.Terms(splitIdentifiers(cl.Text)))
		n := 0
		for _, t := range q {
			if have[t] {
				n++
			}
		}
		cl.Answers = need > 0 && n >= need
	}
}

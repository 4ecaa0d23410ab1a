package react

import (
	"cmp"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/cite"
	"github.com/sagasu-dev/sagasu/internal/doc"
)

// ExtractOptions tune the offline answerer.
type ExtractOptions struct {
	// Related, when set, says by meaning how close each retrieved chunk is
	// to the question (in standard deviations above the index's mean, as
	// search.Engine.Relatedness does, from the stored vectors); it adds to
	// the prior of the chunk's sentences.
	Related func(ids []int64) (map[int64]float64, error)
	// DocFreq, when set, gives how many chunks of the whole index hold
	// each term and how many there are: a question's rare words weigh
	// most. Without it, rarity is judged among the retrieved sections.
	DocFreq func(terms []string) (map[string]int, int, error)
	// Context are the words a follow-up question carries from its
	// conversation (what "it" refers to): they count as the question's
	// words, at half the weight of its own.
	Context string
}

// contextWeight is what a word carried from the conversation weighs
// against the question's own.
const contextWeight = 0.5

// questionWords carry the shape of a question, not its topic.
var questionWords = map[string]bool{
	"how": true, "what": true, "why": true, "when": true, "where": true, "which": true, "who": true,
	"can": true, "do": true, "doe": true, "does": true, "i": true, "you": true, "my": true, "me": true, "should": true,
	"is": true, "are": true, "there": true, "way": true, "want": true, "need": true,
}

// jaQuestion matches the parts of a Japanese question that say it is a
// question, not what it is about.
var jaQuestion = regexp.MustCompile(`(には|のは|を|は)?(どう(やって|すれば|したら)|どのように|どうすれ)?(よい|いい)?(のです|んです|です|ます)?か?[？?]?$|(方法|やり方|手順)?を?教えて(ください|下さい)?[。？?]?$|とは(何|なん)(ですか)?[？?]?$|(には|とは)[？?]$`)

// topicTerms are the terms of what a question is about: without question
// words, and without a Japanese question's ending.
func topicTerms(an *analyze.Analyzer, question string) []string {
	q := question
	if hasKana(q) {
		q = jaQuestion.ReplaceAllString(strings.TrimSpace(q), "")
	}
	var out []string
	for _, t := range an.QueryTerms(q) {
		if !questionWords[t] {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		out = an.QueryTerms(question)
	}
	return out
}

// fence matches a code fence line.
var fence = cite.Fence

// linkRE is a markdown link; its text is kept.
var linkRE = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)

// listMark is a list item's bullet or number.
var listMark = regexp.MustCompile(`^\s*(?:[-*+]|\d+[.)])\s+`)

// keyValue is a line of YAML, TOML or a property list: "name: value".
var keyValue = regexp.MustCompile(`^[\w.\-\[\]"']+\s*[:=]\s`)

// looksLikeCode reports a "sentence" that is really code or configuration
// (a chunk may begin inside a long code block, without its fence): a
// key-value line, or a line of punctuation, without a sentence's ending.
func looksLikeCode(s string) bool {
	if strings.HasSuffix(s, ".") || strings.HasSuffix(s, "。") {
		return false
	}
	if keyValue.MatchString(s) || codeStatement.MatchString(s) {
		return true
	}
	letters := 0
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsSpace(r) {
			letters++
		}
	}
	return letters*10 < len([]rune(s))*7 // under 70% letters and spaces
}

// codeStatement is a line of source code read as a sentence: one that
// opens with a keyword of code, or ends as an unfinished statement does.
var codeStatement = regexp.MustCompile(`^(?:import|export|const|let|var|function|return|def|func|package|class)\s|^[})\]]|[{(\[,]$|=>|\)\s*\{`)

// startsInCode reports a chunk that begins inside a code block: its first
// fence is a bare closing one and a line before it reads as code.
func startsInCode(lines []string) bool {
	for i, line := range lines {
		if !fence.MatchString(line) {
			continue
		}
		if t := strings.TrimSpace(line); t != "```" && t != "~~~" {
			return false
		}
		for _, l := range lines[:i] {
			if t := strings.TrimSpace(l); t != "" && looksLikeCode(t) {
				return true
			}
		}
		return false
	}
	return false
}

// tidy collapses the blank lines a removed sentence leaves around code
// blocks, outside the blocks only, and trims the ends.
func tidy(s string) string {
	var out []string
	var fences cite.Fences
	blank := false
	for _, line := range strings.Split(s, "\n") {
		inFence := fences.Line(line)
		if !inFence && strings.TrimSpace(line) == "" {
			if blank {
				continue
			}
			blank = true
			out = append(out, "")
			continue
		}
		blank = false
		out = append(out, line)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// asksDefault matches a question for a default value: what holds when the
// user sets nothing.
var asksDefault = regexp.MustCompile(`(?i)\bdefault|\bunless\b|\bif\b[^?]*\b(?:does not|doesn't|do not|don't)\s+(?:say|set|specify|change)\b|既定|デフォルト|初期値|指定しない|設定しない`)

// statesDefault matches a sentence that states a default value.
var statesDefault = regexp.MustCompile(`(?i)^(?:` + "`[^`]+`: )?" + `(?:Default|Defaults to|既定値|デフォルト|デフォルト値|初期値)\s*[:：]|\bdefaults?\s+to\b|\bby default\b|\bthe default\b|既定では|デフォルトでは|既定値は|デフォルト値は`)

// camelRE finds identifiers written in camelCase.
var camelRE = regexp.MustCompile(`\b[a-z]+(?:[A-Z][a-z0-9]*)+\b`)

// splitIdentifiers adds the words of camelCase identifiers to s, so that
// "lastUpdated" also matches "last updated".
func splitIdentifiers(s string) string {
	ids := camelRE.FindAllString(s, -1)
	if len(ids) == 0 {
		return s
	}
	var b strings.Builder
	b.WriteString(s)
	for _, id := range ids {
		b.WriteByte(' ')
		for i, r := range id {
			if i > 0 && r >= 'A' && r <= 'Z' {
				b.WriteByte(' ')
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Extract answers question from hits (retrieved chunks, best first) by
// quoting the section that answers it best: the one whose heading path and
// text carry most of the question's key terms (weighted by how rare each
// is among the retrieved sections), with its retrieval rank and, when
// opt.Related is set, its closeness by meaning as smaller priors. A short
// section is quoted whole; of a long one, its first paragraph and the
// paragraphs, list items, rows and code blocks that carry the key terms.
// A second section follows when it answers nearly as well and the first
// is short. Sections in the question's language come first. It returns ""
// when no section carries enough of the question to answer it.
func Extract(an *analyze.Analyzer, question string, hits []doc.Hit, ps *Passages, opt ExtractOptions) string {
	answer, _ := extract(an, question, hits, ps, opt)
	return answer
}

// extract is Extract that also says, when it finds no answer because the
// question names what the knowledge base never mentions (a product, a
// name in code), those names.
func extract(an *analyze.Analyzer, question string, hits []doc.Hit, ps *Passages, opt ExtractOptions) (string, []string) {
	q := topicTerms(an, question)
	lang := detectLang(question)
	if len(hits) == 0 || len(q) == 0 {
		return "", nil
	}
	fromContext := map[string]bool{}
	if opt.Context != "" {
		own := set(q)
		for _, t := range an.QueryTerms(opt.Context) {
			if !own[t] && !questionWords[t] && !fromContext[t] {
				fromContext[t] = true
				q = append(q, t)
			}
		}
	}
	// Sections in the question's language when the results have any.
	idx := make([]int, 0, len(hits))
	for i, h := range hits {
		if detectLang(h.Chunk.HeadingPath()+"\n"+h.Chunk.Text) == lang {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		for i := range hits {
			idx = append(idx, i)
		}
	}
	var related map[int64]float64
	if opt.Related != nil {
		ids := make([]int64, len(hits))
		for i, h := range hits {
			ids[i] = h.Chunk.ID
		}
		related, _ = opt.Related(ids) // by words alone when it fails
	}
	pairs := make([]map[string]bool, len(hits))
	heads := make([]map[string]bool, len(hits))
	bodies := make([]map[string]bool, len(hits))
	all := make([]map[string]bool, 0, len(idx))
	for _, i := range idx {
		h := hits[i]
		ht := an.Terms(splitIdentifiers(h.Source.Title + "\n" + h.Chunk.HeadingPath()))
		bt := an.Terms(splitIdentifiers(linkRE.ReplaceAllString(h.Chunk.Text, "$1")))
		heads[i], bodies[i] = set(ht), wholeKatakana(set(bt), h.Chunk.Text)
		pairs[i] = adjacent(ht)
		for p := range adjacent(bt) {
			pairs[i][p] = true
		}
		u := map[string]bool{}
		for t := range heads[i] {
			u[t] = true
		}
		for t := range bodies[i] {
			u[t] = true
		}
		all = append(all, u)
	}
	idf := idfOver(all)
	// A name the question uses (capitalised, in code, an identifier) that
	// no retrieved section has, and, when the index can say, no chunk of
	// the whole index either, is one the knowledge base does not mention.
	inAny := func(t string) bool {
		for _, u := range all {
			if u[t] {
				return true
			}
		}
		return false
	}
	var absent []string
	absentTerms := map[string]bool{}
	var nameTerms [][]string
	for _, n := range names(question) {
		nameTerms = append(nameTerms, an.Terms(splitIdentifiers(n)))
	}
	asked := slices.Clone(q)
	for _, ts := range nameTerms {
		asked = append(asked, ts...)
	}
	var df map[string]int
	if opt.DocFreq != nil {
		if d, n, err := opt.DocFreq(asked); err == nil && n > 0 {
			df = d
			idf = func(t string) float64 {
				d := float64(df[t])
				return math.Log(1 + (float64(n)-d+0.5)/(d+0.5))
			}
		}
	}
	if len(fromContext) > 0 {
		own := idf
		idf = func(t string) float64 {
			if fromContext[t] {
				return contextWeight * own(t)
			}
			return own(t)
		}
	}
	for i, n := range names(question) {
		missing := len(nameTerms[i]) > 0
		for _, t := range nameTerms[i] {
			if inAny(t) || df != nil && df[t] > 0 {
				missing = false
			}
		}
		if missing {
			absent = append(absent, n)
			for _, t := range nameTerms[i] {
				absentTerms[t] = true
			}
		}
	}
	def := asksDefault.MatchString(question)
	name := asksOption.MatchString(question)
	type ranked struct {
		i int
		sectionScore
	}
	var rs []ranked
	for rank, i := range idx {
		if !quotable(hits[i].Chunk.Text) {
			continue
		}
		s := scoreSection(q, idf, heads[i], leafTerms(an, hits[i]), bodies[i], rank, related[hits[i].Chunk.ID])
		s.score += 0.6 * phraseShare(q, idf, pairs[i])
		// Asked for a default, a section that states one; asked which
		// option or setting, an option's reference section (its heading
		// is one identifier, its text states the type).
		if def && statesDefaultIn(hits[i].Chunk.Text) {
			s.score += 0.3
		}
		if name && optionSection(hits[i]) {
			s.score += 0.3
		}
		rs = append(rs, ranked{i, s})
	}
	if len(rs) == 0 {
		return "", absent
	}
	slices.SortStableFunc(rs, func(a, b ranked) int { return cmp.Compare(b.score, a.score) })
	best := rs[0]
	// Nothing answers when the best section holds too little of what the
	// question asks about, or when the question names what the knowledge
	// base never mentions and the section does not hold most of the rest.
	if len(absent) > 0 {
		var total, missing float64
		for _, t := range q {
			total += idf(t)
			if absentTerms[t] {
				missing += idf(t)
			}
		}
		if rest := total - missing; rest <= 0 || best.any*total/rest < 0.6 {
			return "", absent
		}
	}
	if best.any < minCoverage {
		return "", nil
	}
	var b strings.Builder
	first := blocksOf(hits[best.i].Chunk.Text)
	b.WriteString(renderSection(an, q, sectionTitle(hits[best.i]), first, ps.Add(hits[best.i])[0], lang))
	size := 0
	for _, bl := range first {
		size += len([]rune(bl.text()))
	}
	if len(rs) > 1 && size < wholeRunes/2 {
		// A short section is followed by the next best when it answers
		// nearly as well, or by its own page's next section when that was
		// retrieved too (an introduction, then its usage).
		second := rs[1]
		for _, r := range rs[1:] {
			if follows(hits[best.i], hits[r.i]) && r.score >= 0.6*best.score {
				second = r
				second.score = best.score
				break
			}
		}
		if second.score >= 0.85*best.score && hits[second.i].Chunk.ID != hits[best.i].Chunk.ID {
			b.WriteString("\n\n")
			b.WriteString(renderSection(an, q, sectionTitle(hits[second.i]), blocksOf(hits[second.i].Chunk.Text), ps.Add(hits[second.i])[0], lang))
		}
	}
	return b.String(), nil
}

// minCoverage is the share of the question's key-term weight the best
// section must hold, in its heading and text, to be an answer.
const minCoverage = 0.25

// anchorAnywhere is a heading's explicit anchor wherever it stands.
var anchorAnywhere = regexp.MustCompile(`\s*\{\s*#[^}]*\}`)

// sectionTitle is a section's heading path as a reader sees it, without
// markup.
func sectionTitle(h doc.Hit) string {
	parts := make([]string, 0, len(h.Chunk.Heading))
	for _, p := range h.Chunk.Heading {
		p = anchorAnywhere.ReplaceAllString(p, "")
		if i := strings.Index(p, " <"); i > 0 { // a badge
			p = p[:i]
		}
		if p = strings.TrimSpace(stripCode(p)); p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return cmp.Or(h.Source.Title, h.Source.URI)
	}
	return strings.Join(parts, " › ")
}

// wholeKatakana drops from terms the katakana words that text has only
// inside longer katakana words: a tokenizer may cut インポート into イン
// and ポート, and ポート (port) is not what the text is about.
func wholeKatakana(terms map[string]bool, text string) map[string]bool {
	for t := range terms {
		if !allKatakana(t) {
			continue
		}
		whole := false
		for from := 0; !whole; {
			i := strings.Index(text[from:], t)
			if i < 0 {
				break
			}
			i += from
			before, _ := utf8.DecodeLastRuneInString(text[:i])
			after, _ := utf8.DecodeRuneInString(text[i+len(t):])
			whole = !isKatakana(before) && !isKatakana(after)
			from = i + len(t)
		}
		if !whole {
			delete(terms, t)
		}
	}
	return terms
}

func isKatakana(r rune) bool { return unicode.Is(unicode.Katakana, r) || r == 'ー' }

func allKatakana(s string) bool {
	for _, r := range s {
		if !isKatakana(r) {
			return false
		}
	}
	return s != ""
}

// adjacent is the set of a term list's neighbouring pairs ("a b").
func adjacent(ts []string) map[string]bool {
	m := make(map[string]bool, len(ts))
	for i := 1; i < len(ts); i++ {
		m[ts[i-1]+" "+ts[i]] = true
	}
	return m
}

// phraseShare is the weight of the question's neighbouring word pairs
// ("path parameter", "ポート 番号") that a section also has side by side,
// as a share of all of them: a phrase matched, not just its words.
func phraseShare(q []string, idf func(string) float64, pairs map[string]bool) float64 {
	var all, in float64
	for i := 1; i < len(q); i++ {
		w := min(idf(q[i-1]), idf(q[i]))
		all += w
		if pairs[q[i-1]+" "+q[i]] {
			in += w
		}
	}
	if all == 0 {
		return 0
	}
	return in / all
}

// follows reports whether b is the section right after a on a's page.
func follows(a, b doc.Hit) bool {
	return a.Source.ID == b.Source.ID && b.Chunk.StartLine > a.Chunk.EndLine && b.Chunk.StartLine <= a.Chunk.EndLine+3
}

// leafTerms are the terms of a section's own heading (the last of its
// path), without markup.
func leafTerms(an *analyze.Analyzer, h doc.Hit) map[string]bool {
	if len(h.Chunk.Heading) == 0 {
		return nil
	}
	leaf := h.Chunk.Heading[len(h.Chunk.Heading)-1]
	if i := strings.Index(leaf, " <"); i > 0 {
		leaf = leaf[:i]
	}
	return set(an.Terms(splitIdentifiers(anchorRE.ReplaceAllString(stripCode(leaf), ""))))
}

// asksOption matches a question for the name of an option, setting,
// key, flag or command to write.
var asksOption = regexp.MustCompile(`(?i)\b(?:which|what)\b[^?]*\b(?:option|setting|config\w*|key|flag|property|field)\b|設定|オプション|キー|項目`)

// typeLine is a reference page's "- Type: ..." line.
var typeLine = regexp.MustCompile(`(?m)^\s*(?:[-*+]\s+)?\**(?:Type|型)\s*[:：]\**\s*\S`)

// optionRE is a heading that names one identifier.
var optionRE = regexp.MustCompile(`^[A-Za-z_$][\w.$-]*$`)

// optionSection reports an option's reference section: its own heading is
// one identifier and its text states the option's type.
func optionSection(h doc.Hit) bool {
	if len(h.Chunk.Heading) == 0 {
		return false
	}
	leaf := h.Chunk.Heading[len(h.Chunk.Heading)-1]
	if i := strings.Index(leaf, " <"); i > 0 {
		leaf = leaf[:i]
	}
	leaf = strings.Trim(strings.TrimSpace(anchorRE.ReplaceAllString(leaf, "")), "`")
	return optionRE.MatchString(leaf) && typeLine.MatchString(h.Chunk.Text)
}

// quotable reports a section with something to quote besides headings.
func quotable(text string) bool {
	for _, b := range blocksOf(text) {
		if b.kind != blockHeading {
			return true
		}
	}
	return false
}

// statesDefaultIn reports a section with a line that states a default.
func statesDefaultIn(text string) bool {
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(listMark.ReplaceAllString(line, ""))
		line = strings.ReplaceAll(line, "**", "")
		if statesDefault.MatchString(line) {
			return true
		}
	}
	return false
}

func set(ts []string) map[string]bool {
	m := make(map[string]bool, len(ts))
	for _, t := range ts {
		m[t] = true
	}
	return m
}

package react

import (
	"cmp"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/doc"
)

// ExtractOptions tune the offline answerer.
type ExtractOptions struct {
	MaxSentences int // default 3
	MaxRunes     int // default 700
	// Related, when set, says by meaning how close each retrieved chunk is
	// to the question (in standard deviations above the index's mean, as
	// search.Engine.Relatedness does, from the stored vectors); it adds to
	// the prior of the chunk's sentences.
	Related func(ids []int64) (map[int64]float64, error)
}

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

// candidate is a sentence of a retrieved chunk the answer may quote.
type candidate struct {
	text    string
	passage int // citation number
	rank    int // rank of its chunk in the retrieval
	pos     int // position within the chunk
	terms   []string
	ctx     []string // terms of its heading path and title
	score   float64
	prefix  string // the option name put before it ("`cleanUrls`: "), if any
	frag    bool   // says nothing in words: counted, never quoted
}

// fence matches a code fence line.
var fence = regexp.MustCompile("^\\s*(```|~~~)")

// linkRE is a markdown link; its text is kept.
var linkRE = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)

// listMark is a list item's bullet or number.
var listMark = regexp.MustCompile(`^\s*(?:[-*+]|\d+[.)])\s+`)

// keyValue is a line of YAML, TOML or a property list: "name: value".
var keyValue = regexp.MustCompile(`^[\w.\-\[\]"']+\s*[:=]\s`)

// defaultLine is a reference page's statement of an option's default value,
// a list item under the option's heading ("- Default: `/`", "- 既定値: `/`").
// It reads like "key: value" but is the fact a question about the default
// asks for, so it is kept as a sentence.
var defaultLine = regexp.MustCompile(`^(?:Default|Defaults to|既定値|デフォルト|デフォルト値|初期値)\s*[:：]\s*\S`)

// typeLine is a reference page's "- Type: ..." line: it marks the section
// as an option's reference, whose heading names the option.
var typeLine = regexp.MustCompile(`(?m)^\s*[-*+]\s+(?:Type|型)\s*[:：]\s*\S`)

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

// fragment reports a unit that says nothing in words: inline code and
// markers aside, under two words (or six CJK letters), like a list item
// naming one slot or option ("`aside-ads-after`").
func fragment(s string) bool {
	if defaultLine.MatchString(s) {
		return false // "Default: `/`" is the fact itself
	}
	words, cjk := 0, 0
	for _, w := range strings.Fields(codeRE.ReplaceAllString(stripMarkers(s), " ")) {
		if strings.IndexFunc(w, unicode.IsLetter) >= 0 {
			words++
		}
		for _, r := range w {
			if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) {
				cjk++
			}
		}
	}
	return words < 2 && cjk < 6
}

// finished reports whether a unit ends as a sentence does (or leads into
// its code block), not as a label, a key or a cut line.
func finished(s string) bool {
	lead, _, hasCode := strings.Cut(s, "\n\n")
	if hasCode || defaultLine.MatchString(lead) {
		return true
	}
	lead = strings.TrimRight(stripMarkers(lead), " \"')”’」』）*")
	return strings.HasSuffix(lead, ".") || strings.HasSuffix(lead, "!") || strings.HasSuffix(lead, "?") ||
		strings.HasSuffix(lead, "。") || strings.HasSuffix(lead, "！") || strings.HasSuffix(lead, "？")
}

// maxCodeLines bounds the code block quoted after a lead-in sentence.
const maxCodeLines = 15

// sentencesOf returns the units of a chunk's text worth quoting: prose
// sentences, and a sentence that leads into a code block ("To enable it,
// add this to your config:") together with that block. Tables, headings,
// HTML and lead-ins without their code are left out.
func sentencesOf(text string) []string {
	// Blank out what is not prose, keeping offsets, and note where each
	// code block starts and what it holds.
	var prose strings.Builder
	type block struct {
		at   int // offset in prose where the fence was
		code string
	}
	var blocks []block
	var cur []string
	var opening string
	inFence := false
	// Front matter (YAML between --- lines at the top, blank lines allowed
	// before it) is never prose.
	frontmatter := strings.HasPrefix(strings.TrimLeft(text, " \t\r\n"), "---")
	opened := false
	lines := strings.Split(text, "\n")
	inFence = startsInCode(lines)
	for _, line := range lines {
		t := strings.TrimSpace(line)
		if frontmatter {
			if t == "---" {
				frontmatter = !opened
				opened = true
			}
			prose.WriteString("\n")
			continue
		}
		switch {
		case fence.MatchString(line):
			if !inFence {
				opening, cur = t, nil
			} else if opening != "" { // not the end of a block the chunk starts inside
				code := cur
				if len(code) > maxCodeLines {
					code = code[:maxCodeLines]
				}
				blocks = append(blocks, block{at: prose.Len(), code: opening + "\n" + strings.Join(code, "\n") + "\n```"})
			}
			inFence = !inFence
			prose.WriteString("\n")
			continue
		case inFence:
			cur = append(cur, line)
			prose.WriteString("\n")
			continue
		case strings.HasPrefix(t, "|") || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "<") || strings.HasPrefix(t, ":::") || t == "---":
			prose.WriteString("\n")
			continue
		}
		prose.WriteString(line)
		prose.WriteString("\n")
	}
	if inFence && len(cur) > 0 {
		// The chunk ends inside a long code block: quote its start.
		code := cur
		if len(code) > maxCodeLines {
			code = code[:maxCodeLines]
		}
		blocks = append(blocks, block{at: prose.Len(), code: opening + "\n" + strings.Join(code, "\n") + "\n```"})
	}
	p := prose.String()
	var out []string
	for _, s := range splitSentences(p) {
		t := listMark.ReplaceAllString(s.Text, "")
		t = linkRE.ReplaceAllString(t, "$1")
		t = strings.Join(strings.Fields(t), " ")
		if defaultLine.MatchString(t) {
			out = append(out, t)
			continue
		}
		if t == "" || len([]rune(t)) > 400 || looksLikeCode(t) {
			continue
		}
		// A sentence followed by nothing but blank lines and a fence leads
		// into that code block.
		var code string
		for _, b := range blocks {
			if b.at >= s.End && strings.TrimSpace(p[s.End:b.at]) == "" {
				code = b.code
				break
			}
		}
		if code != "" {
			out = append(out, t+"\n\n"+code)
			continue
		}
		if strings.HasSuffix(t, ":") || strings.HasSuffix(t, "：") {
			continue
		}
		out = append(out, t)
	}
	return out
}

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

// Extract writes a short answer to question from the sentences of hits
// (retrieved chunks, best first): sentences ranked by BM25 over the
// sentence collection plus what their headings and their chunk's rank say,
// picked with diversity, each followed by its citation marker. It returns
// the answer ("" when no sentence matches the question).
func Extract(an *analyze.Analyzer, question string, hits []doc.Hit, ps *Passages, opt ExtractOptions) string {
	if opt.MaxSentences <= 0 {
		opt.MaxSentences = 3
	}
	if opt.MaxRunes <= 0 {
		opt.MaxRunes = 700
	}
	q := topicTerms(an, question)
	lang := detectLang(question)

	var cands []candidate
	for rank, h := range hits {
		ctxTerms := an.Terms(splitIdentifiers(h.Source.Title + "\n" + h.Chunk.HeadingPath()))
		leaf := optionName(h.Chunk.Heading, h.Chunk.Text)
		for pos, s := range sentencesOf(h.Chunk.Text) {
			// A sentence under a heading that names an option ("cleanUrls")
			// often says "when set to true, ..." without the name: give it.
			prefix := ""
			if leaf != "" && pos < 3 && !strings.Contains(s, leaf) {
				prefix = "`" + leaf + "`: "
				s = prefix + s
			}
			terms := an.Terms(splitIdentifiers(s))
			if len(terms) < 3 {
				continue
			}
			frag := !strings.Contains(s, "\n\n") && fragment(strings.TrimPrefix(s, prefix))
			cands = append(cands, candidate{text: s, prefix: prefix, rank: rank, pos: pos, terms: terms, ctx: ctxTerms, passage: -1, frag: frag})
			cands[len(cands)-1].passage = rank // index into hits for now
		}
	}
	// Answer in the question's language when the passages have it.
	same := slices.DeleteFunc(slices.Clone(cands), func(c candidate) bool { return detectLang(c.text) != lang })
	if len(same) > 0 {
		cands = same
	}
	if len(cands) == 0 {
		return ""
	}
	var related map[int64]float64
	if opt.Related != nil {
		ids := make([]int64, len(hits))
		for i, h := range hits {
			ids[i] = h.Chunk.ID
		}
		related, _ = opt.Related(ids) // by words alone when it fails
	}
	scoreCandidates(cands, q, func(rank int) float64 {
		if related == nil {
			return 0
		}
		return related[hits[rank].Chunk.ID]
	})
	byScore := func(a, b candidate) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	}
	slices.SortStableFunc(cands, byScore)
	top := cands[0].score
	if top <= 0 {
		return ""
	}
	if favour(cands, question, top) {
		slices.SortStableFunc(cands, byScore)
	}
	top = cands[0].score
	var picked []candidate
	runes := 0
	for len(picked) < opt.MaxSentences && len(cands) > 0 {
		best, bestMMR := -1, math.Inf(-1)
		for i, c := range cands {
			if c.score < 0.35*top {
				break // sorted: the rest are weaker still
			}
			if c.frag {
				continue
			}
			sim := 0.0
			for _, p := range picked {
				sim = max(sim, jaccard(c.terms, p.terms))
			}
			if mmr := c.score - 0.8*top*sim; mmr > bestMMR {
				best, bestMMR = i, mmr
			}
		}
		if best < 0 {
			break
		}
		c := cands[best]
		cands = slices.Delete(cands, best, best+1)
		if n := len([]rune(c.text)); runes+n > opt.MaxRunes && len(picked) > 0 {
			continue
		} else {
			runes += n
		}
		picked = append(picked, c)
	}
	unfinished := 0
	for _, c := range picked {
		if !finished(strings.TrimPrefix(c.text, c.prefix)) {
			unfinished++
		}
	}
	if unfinished*2 > len(picked) {
		return quotePassages(hits, picked, ps, lang)
	}
	var b strings.Builder
	prevCode := false
	named := map[string]bool{} // option names already said
	for i, c := range picked {
		n := ps.Add(hits[c.passage])[0]
		text := c.text
		if c.prefix != "" {
			if named[c.prefix] {
				text = strings.TrimPrefix(text, c.prefix)
			}
			named[c.prefix] = true
		}
		lead, code, hasCode := strings.Cut(text, "\n\n")
		switch {
		case i == 0:
		case hasCode || prevCode:
			b.WriteString("\n\n") // a code block stands apart
		case lang != LangJapanese:
			b.WriteByte(' ')
		}
		b.WriteString(lead)
		if lang != LangJapanese {
			b.WriteByte(' ')
		}
		b.WriteString(marker([]int{n}))
		if hasCode {
			b.WriteString("\n\n" + code)
		}
		prevCode = hasCode
	}
	return b.String()
}

// Quoted passages: how many, and how long each quote may be.
const (
	maxQuoted     = 3
	maxQuoteRunes = 320
)

// quotePassages answers with the passages themselves when the picked
// sentences would read as a list of fragments (labels, keys, cut lines):
// for each passage its heading, then its finished prose sentences as a
// quote, each cited. Code and front matter are never quoted as prose. It
// returns "" when no passage has a finished sentence.
func quotePassages(hits []doc.Hit, picked []candidate, ps *Passages, lang Lang) string {
	sep := " "
	if lang == LangJapanese {
		sep = ""
	}
	var b strings.Builder
	seen := map[int]bool{}
	for _, c := range picked {
		if seen[c.passage] || len(seen) == maxQuoted {
			continue
		}
		seen[c.passage] = true
		h := hits[c.passage]
		var quote []string
		n := 0
		for _, s := range sentencesOf(h.Chunk.Text) {
			if strings.Contains(s, "\n\n") || !finished(s) {
				continue
			}
			if r := len([]rune(s)); n > 0 && n+r > maxQuoteRunes {
				break
			} else {
				n += r
			}
			quote = append(quote, s)
		}
		if len(quote) == 0 {
			continue
		}
		m := marker(ps.Add(h))
		heading := strings.Join(h.Chunk.Heading, " › ")
		if heading == "" {
			heading = cmp.Or(h.Source.Title, h.Source.URI)
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("**" + heading + "**" + sep + m + "\n\n>")
		for _, s := range quote {
			b.WriteString(" " + s + sep + m)
		}
	}
	return b.String()
}

// tidy collapses the blank lines a removed sentence leaves around code
// blocks, outside the blocks only, and trims the ends.
func tidy(s string) string {
	var out []string
	inFence, blank := false, false
	for _, line := range strings.Split(s, "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
		}
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

// scoreCandidates scores each candidate for the query terms: BM25 over the
// candidates as a collection, plus a share for query terms in its heading
// path and a small prior for its chunk: its retrieval rank, and how close
// the chunk is to the question by meaning when related gives that (in
// standard deviations above the index's mean; 0 without an embedder).
func scoreCandidates(cands []candidate, q []string, related func(rank int) float64) {
	const k1, bParam = 1.2, 0.75
	df := map[string]int{}
	total := 0
	for _, c := range cands {
		total += len(c.terms)
		seen := map[string]bool{}
		for _, t := range c.terms {
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	avg := float64(total) / float64(len(cands))
	n := float64(len(cands))
	idf := func(t string) float64 {
		d := float64(df[t])
		return math.Log(1 + (n-d+0.5)/(d+0.5))
	}
	for i := range cands {
		c := &cands[i]
		tf := map[string]int{}
		for _, t := range c.terms {
			tf[t]++
		}
		dl := float64(len(c.terms))
		s := 0.0
		for _, t := range q {
			if f := float64(tf[t]); f > 0 {
				s += idf(t) * f * (k1 + 1) / (f + k1*(1-bParam+bParam*dl/avg))
			}
		}
		inCtx, qIDF := 0.0, 0.0
		for _, t := range q {
			qIDF += idf(t)
			if slices.Contains(c.ctx, t) {
				inCtx += idf(t)
			}
		}
		if s > 0 || inCtx > 0 {
			s += 0.3*inCtx + 0.5/float64(c.rank+1) - 0.05*float64(c.pos)
			// A chunk close to the question by meaning, where the words
			// differ: up to the prior of the first rank again.
			s += 0.5 * min(1, max(0, (related(c.rank)-1)/4))
			// The opening sentences of a section whose heading is the
			// question's topic usually answer it, in words of their own.
			if qIDF > 0 && inCtx >= 0.5*qIDF && c.pos < 2 {
				s += 0.5 * inCtx
			}
		}
		c.score = s
	}
}

// asksDefault matches a question for a default value: what holds when the
// user sets nothing.
var asksDefault = regexp.MustCompile(`(?i)\bdefault|\bunless\b|\bif\b[^?]*\b(?:does not|doesn't|do not|don't)\s+(?:say|set|specify|change)\b|既定|デフォルト|初期値|指定しない|設定しない`)

// asksName matches a question whose answer is a name to write: an option,
// setting, key, flag, command or package ("which setting …", "what is the
// command to …", "what do I need to install"), or a task ("how do I …",
// "…するには"), answered by what to set.
var asksName = regexp.MustCompile(`(?i)\b(?:which|what)\b[^?]*\b(?:option|setting|config\w*|key|flag|command|property|field|package|plugin|install)\b|^\s*how\s+(?:do|can|should)\s+i\b|設定|オプション|コマンド|キー|項目|インストール|には[？?]?$|方法`)

// statesDefault matches a sentence that states a default value.
var statesDefault = regexp.MustCompile(`(?i)^(?:` + "`[^`]+`: )?" + `(?:Default|Defaults to|既定値|デフォルト|デフォルト値|初期値)\s*[:：]|\bdefaults?\s+to\b|\bby default\b|\bthe default\b|既定では|デフォルトでは|既定値は|デフォルト値は`)

// namesThing matches a sentence that names something to write: a code
// span of an identifier, a dotted key, a flag or a command.
var namesThing = regexp.MustCompile("`(?:--?[A-Za-z][\\w-]*|[A-Za-z_$][\\w$]*(?:[.:][\\w$]+)*(?:\\s*:\\s*\\S+)?|[a-z][\\w-]*(?: [\\w./:-]+)+)`")

// example matches a sentence that shows an example (which sets a value of
// its own, not the default).
var example = regexp.MustCompile(`(?i)^(?:for example|e\.g\.|for instance|例えば|たとえば|例[:：])`)

// favour adjusts the scores of candidates to what the question asks for
// (top is the best score): for a default value, sentences that state one,
// not examples that set another; for a name to write, sentences that name
// one. It reports whether it changed any score.
func favour(cands []candidate, question string, top float64) bool {
	def, name := asksDefault.MatchString(question), asksName.MatchString(question)
	if !def && !name {
		return false
	}
	for i := range cands {
		c := &cands[i]
		if c.score <= 0 {
			continue
		}
		lead, _, hasCode := strings.Cut(c.text, "\n\n")
		if def {
			switch {
			case statesDefault.MatchString(lead):
				c.score += 0.6 * top
			case hasCode || example.MatchString(lead):
				c.score -= 0.3 * top
			}
		}
		if name && namesThing.MatchString(lead) {
			c.score += 0.25 * top
		}
	}
	return true
}

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

// optionRE is a heading that names one option or identifier.
var optionRE = regexp.MustCompile(`^[A-Za-z_$][\w.$-]*$`)

// optionName is the last heading of a path when it names an option
// ("cleanUrls", "themeConfig.nav", or any one identifier heading a section
// that states its type, as reference pages do: "lang" over "- Type:
// `string`"), else "".
func optionName(heading []string, text string) string {
	if len(heading) == 0 {
		return ""
	}
	leaf := strings.TrimSpace(heading[len(heading)-1])
	if i := strings.Index(leaf, " <"); i > 0 { // a badge
		leaf = strings.TrimSpace(leaf[:i])
	}
	if i := strings.Index(leaf, "{#"); i > 0 { // an anchor
		leaf = strings.TrimSpace(leaf[:i])
	}
	leaf = strings.Trim(leaf, "`")
	if !optionRE.MatchString(leaf) {
		return ""
	}
	if camelRE.MatchString(leaf) || strings.Contains(leaf, ".") || typeLine.MatchString(text) {
		return leaf
	}
	return ""
}

// jaccard is the overlap of two term lists as sets.
func jaccard(a, b []string) float64 {
	as := map[string]bool{}
	for _, t := range a {
		as[t] = true
	}
	bs := map[string]bool{}
	inter := 0
	for _, t := range b {
		if !bs[t] {
			bs[t] = true
			if as[t] {
				inter++
			}
		}
	}
	union := len(as) + len(bs) - inter
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}

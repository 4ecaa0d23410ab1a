package loop

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// ErrEmptyGoal is returned when a goal has no text.
var ErrEmptyGoal = errors.New("empty goal: say what the search should find out, e.g. \"understand how to configure the sidebar\"")

// ParsedGoal is a goal split into what it asks for.
type ParsedGoal struct {
	Goal string `json:"goal"`
	// Core is the goal without its boilerplate ("understand how to",
	// "を理解する", "方法"): the first query a loop issues without one given.
	Core string `json:"core"`
	// Aspects are the parts of the goal that results must cover, split at
	// conjunctions and list separators (and, or, commas, と, や, および, 、).
	Aspects []string `json:"aspects"`
	// Context is what applies to every aspect: the head of a list ("Set up
	// navigation: ...") or a shared predicate ("...を表示する" → 表示).
	Context string `json:"context,omitempty"`
}

// maxAspects bounds how many aspects a goal yields.
const maxAspects = 6

// ParseGoal splits a goal into aspects, in English or Japanese (or both
// mixed). It needs no index; the loop may expand a one-aspect goal into the
// facets the index has for it (see Engine.Aspects).
//
//	"VitePressの設定方法を理解する" → core "VitePressの設定", aspects [VitePressの設定]
//	"Deploy to GitHub Pages, generate a sitemap, and set HTTP cache headers"
//	    → aspects [Deploy to GitHub Pages, generate a sitemap, HTTP cache headers]
//	"最終更新日時と編集リンクを表示する" → aspects [最終更新日時, 編集リンク], context 表示
func ParseGoal(goal string) (ParsedGoal, error) {
	g := strings.TrimSpace(norm.NFKC.String(goal))
	if g == "" {
		return ParsedGoal{}, ErrEmptyGoal
	}
	var p ParsedGoal
	if hasCJK(g) {
		p = parseJapanese(g)
	} else {
		p = parseEnglish(g)
	}
	p.Goal = goal
	if len(p.Aspects) == 0 {
		// Nothing but boilerplate ("how do I use it"): search for the goal as said.
		if len(surfaceWords(g)) == 0 {
			return ParsedGoal{}, errors.New("the goal has no words to search for: describe the topic, e.g. \"configure the sidebar\"")
		}
		p.Aspects = []string{g}
	}
	if p.Core == "" {
		p.Core = strings.Join(p.Aspects, " ")
	}
	if len(p.Aspects) > maxAspects {
		p.Aspects = p.Aspects[:maxAspects]
	}
	return p, nil
}

// English boilerplate: leading phrases that say the goal is a goal.
var enLead = []string{
	"i would like to ", "i'd like to ", "i want to ", "i need to ", "help me ", "show me how to ", "tell me how to ",
	"explain how to ", "understand how to ", "learn how to ", "find out how to ", "figure out how to ",
	"know how to ", "how do i ", "how can i ", "how should i ", "how to ", "learn about ", "read about ",
	"understand ", "learn ", "explain ", "find out ", "figure out ", "find ",
}

// enGeneric are words that say nothing about the topic of a goal; they are
// dropped from aspects.
var enGeneric = map[string]bool{
	"how": true, "what": true, "why": true, "when": true, "where": true, "who": true, "whether": true,
	"do": true, "does": true, "did": true, "done": true, "doing": true,
	"i": true, "me": true, "my": true, "we": true, "us": true, "our": true, "you": true, "your": true,
	"them": true, "it": true, "its": true, "they": true, "their": true, "one": true, "ones": true, "own": true,
	"can": true, "could": true, "should": true, "would": true, "may": true, "might": true, "must": true,
	"want": true, "need": true, "like": true, "about": true, "also": true, "both": true, "either": true,
	"each": true, "every": true, "some": true, "any": true, "all": true, "other": true, "so": true, "just": true,
	"way": true, "ways": true, "method": true, "methods": true, "learn": true, "understand": true,
	"know": true, "find": true, "figure": true, "out": true, "explain": true, "show": true, "tell": true,
	"help": true, "use": true, "using": true, "used": true, "set": true, "up": true, "add": true,
	"make": true, "making": true, "get": true, "getting": true, "work": true, "works": true, "working": true,
	"properly": true, "correctly": true, "please": true, "possible": true,
}

// enStop are function words trimmed from the ends of an aspect.
var enStop = map[string]bool{
	"a": true, "an": true, "the": true, "and": true, "or": true, "of": true, "to": true, "in": true,
	"on": true, "for": true, "with": true, "by": true, "at": true, "from": true, "into": true, "as": true,
	"is": true, "are": true, "be": true, "that": true, "this": true, "these": true, "those": true,
}

// enSplit are the separators between the items of a list of aspects.
var enSplit = []string{",", ";", " and ", " or ", " & ", " as well as ", " plus ", " along with ", " vs ", " versus "}

func parseEnglish(g string) ParsedGoal {
	s := strings.TrimRight(g, ".?! ")
	for changed := true; changed; {
		changed = false
		low := asciiLower(s)
		for _, lead := range enLead {
			if strings.HasPrefix(low, lead) {
				s, changed = strings.TrimSpace(s[len(lead):]), true
				break
			}
		}
	}
	var p ParsedGoal
	if head, list, ok := strings.Cut(s, ":"); ok && strings.TrimSpace(list) != "" {
		p.Context = cleanEnglish(head)
		s = list
	}
	parts := []string{s}
	for _, sep := range enSplit {
		var next []string
		for _, part := range parts {
			next = append(next, splitFold(part, sep)...)
		}
		parts = next
	}
	var core []string
	if p.Context != "" {
		core = append(core, p.Context)
	}
	for _, part := range parts {
		if a := cleanEnglish(part); len(surfaceWords(a)) > 0 && !containsFold(p.Aspects, a) {
			p.Aspects = append(p.Aspects, a)
			core = append(core, a)
		}
	}
	p.Core = strings.Join(core, " ")
	return p
}

// cleanEnglish drops generic words and trims function words from the ends.
func cleanEnglish(s string) string {
	var words []string
	for _, w := range strings.Fields(s) {
		w = strings.Trim(w, `"'()[]{},.;:!?`)
		if w == "" || enGeneric[asciiLower(w)] {
			continue
		}
		words = append(words, w)
	}
	for len(words) > 0 && enStop[asciiLower(words[0])] {
		words = words[1:]
	}
	for len(words) > 0 && enStop[asciiLower(words[len(words)-1])] {
		words = words[:len(words)-1]
	}
	return strings.Join(words, " ")
}

// splitFold splits s at each case-insensitive (ASCII) occurrence of sep.
func splitFold(s, sep string) []string {
	var out []string
	low := asciiLower(s)
	for {
		i := strings.Index(low, sep)
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i])
		s, low = s[i+len(sep):], low[i+len(sep):]
	}
}

// asciiLower lower-cases ASCII letters only, so byte offsets stay valid.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// Japanese boilerplate at the end of a goal, removed repeatedly, longest
// first: "を理解する", "方法", "について知りたい", ...
var jaTail = []string{
	"について知りたい", "について調べたい", "について調べる", "について学びたい", "について学ぶ", "について理解する", "について",
	"を理解したい", "を理解する", "を理解", "理解したい", "理解する", "を知りたい", "を知る", "を学びたい", "を学ぶ",
	"を調べたい", "を調べる", "を確認したい", "を確認する", "を教えてください", "を教えて", "教えてください", "教えて",
	"が知りたい", "がしたい", "したい", "する", "ください", "ための", "ため", "には", "とは",
	"の方法", "方法", "の仕方", "仕方", "のやり方", "やり方", "の手順", "手順", "の使い方", "使い方",
	"を", "の", "に", "で", "が", "は", "と", "や",
}

// jaLead are coordinating words that split a list of aspects.
var jaSplitWords = []string{"および", "及び", "ならびに", "並びに", "それから", "そして", "または", "もしくは"}

func parseJapanese(g string) ParsedGoal {
	s := strings.TrimRight(g, "。．.!?！？ ")
	s = trimJaTail(s)
	var p ParsedGoal
	var context []string
	// A short predicate after the last object marker applies to every
	// aspect: "...とフッターを表示" → 表示.
	if i := lastParticle(s, "を"); i > 0 {
		pred := s[i+len("を"):]
		if n := utf8.RuneCountInString(pred); n > 0 && n <= 8 && !strings.ContainsAny(pred, "とや、,") {
			context = append(context, trimJaTail(pred))
			s = trimJaTail(s[:i])
		}
	}
	p.Core = s
	items := splitJapanese(s)
	if len(items) > 1 {
		// The last item of a list ends at its case particle: "...読み込みでページ" → 読み込み.
		last := items[len(items)-1]
		if head, rest, ok := cutAtParticle(last); ok {
			items[len(items)-1] = head
			context = append(context, rest)
		}
	}
	for _, it := range items {
		it = trimJaTail(strings.TrimSpace(it))
		it = strings.TrimLeftFunc(it, func(r rune) bool { return unicode.Is(unicode.Hiragana, r) || unicode.IsSpace(r) })
		if it != "" && len(surfaceWords(it)) > 0 && !containsFold(p.Aspects, it) {
			p.Aspects = append(p.Aspects, it)
		}
	}
	p.Context = strings.Join(nonEmpty(context), " ")
	return p
}

func nonEmpty(list []string) []string {
	var out []string
	for _, s := range list {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// trimJaTail removes boilerplate endings until none is left.
func trimJaTail(s string) string {
	for changed := true; changed; {
		changed = false
		s = strings.TrimSpace(s)
		for _, t := range jaTail {
			if strings.HasSuffix(s, t) && len(s) > len(t) {
				s, changed = s[:len(s)-len(t)], true
				break
			}
		}
	}
	return s
}

// lastParticle returns the byte offset of the last particle p that follows a
// character other than hiragana (so that it is a particle, not part of a
// word), or -1.
func lastParticle(s, p string) int {
	for i := strings.LastIndex(s, p); i > 0; i = strings.LastIndex(s[:i], p) {
		r, _ := utf8.DecodeLastRuneInString(s[:i])
		if !unicode.Is(unicode.Hiragana, r) {
			return i
		}
	}
	return -1
}

// splitJapanese splits at list separators: 、，, ・ and と/や between two
// characters that are not hiragana (so that words like ごと or ところ stay).
func splitJapanese(s string) []string {
	for _, w := range jaSplitWords {
		s = strings.ReplaceAll(s, w, "、")
	}
	var out []string
	var cur strings.Builder
	runes := []rune(s)
	for i, r := range runes {
		sep := false
		switch r {
		case '、', '，', ',', ';', '；':
			sep = true
		case 'と', 'や':
			sep = i > 0 && i+1 < len(runes) && !unicode.Is(unicode.Hiragana, runes[i-1]) && !unicode.Is(unicode.Hiragana, runes[i+1]) &&
				!unicode.IsSpace(runes[i+1])
		}
		if sep {
			out = append(out, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteRune(r)
	}
	return append(out, cur.String())
}

// cutAtParticle cuts s before the first case particle (で, に, を, が, は,
// へ) that ends a run of hiragana and is followed by another word.
func cutAtParticle(s string) (string, string, bool) {
	runes := []rune(s)
	for i := 1; i+1 < len(runes); i++ {
		switch runes[i] {
		case 'で', 'に', 'を', 'が', 'は', 'へ':
		default:
			continue
		}
		if unicode.Is(unicode.Hiragana, runes[i+1]) {
			continue
		}
		j := i // start of the hiragana run ending at i
		for j > 0 && unicode.Is(unicode.Hiragana, runes[j-1]) {
			j--
		}
		if j == 0 || i-j > 2 {
			continue
		}
		return string(runes[:i]), string(runes[i+1:]), true
	}
	return s, "", false
}

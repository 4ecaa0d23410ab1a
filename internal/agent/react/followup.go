package react

import (
	"cmp"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/analyze"
)

// A follow-up in a conversation ("And how do I limit its maximum
// length?", 「その値を制限したい」) names its topic only by referring
// back. Searched as it stands, it finds whatever its few words match; its
// search needs the topic words of the question it follows.

// refersBack matches the words with which an English question refers to
// what came before: pronouns and determiners that point back, "instead",
// and a question that opens as a continuation ("and …", "what about …").
var refersBack = regexp.MustCompile(`(?i)\b(?:it|its|it's|itself|that|this|these|those|them|they|their|theirs|same|instead|also|too|either|else)\b|^\s*(?:and|but|or|so|then|what about|how about)\b`)

// refersBackJa is the same for Japanese: こそあ words, "the same", "instead",
// "earlier", and a question that opens as a continuation.
var refersBackJa = regexp.MustCompile(`それ|その|そこ|そちら|そっち|これ|この|ここ|こちら|あれ|あの|同じ|代わり|さっき|先ほど|前述|上記|^\s*(?:では|じゃあ|それでは|ちなみに|あと|また)`)

// maxCarried bounds the words a follow-up takes from the conversation,
// and minCarried is the fewest its own words allow it (see carried).
const (
	maxCarried = 8
	minCarried = 2
)

// followsUp reports a question that refers back to the conversation.
func followsUp(question string) bool {
	return refersBack.MatchString(question) || refersBackJa.MatchString(question)
}

// wordRE is a word as a user writes it, code names included.
var wordRE = regexp.MustCompile(`[\p{L}\p{N}_][\p{L}\p{N}_.:/\-]*`)

// carried returns the topic words of a conversation that a follow-up
// question refers back to: the words of the previous question, itself
// taken with what it referred back to, that the question does not
// already use. A question that does not refer back, or has no
// conversation before it, carries nothing.
//
// The carried words never outnumber the question's own terms (at least
// minCarried, at most maxCarried), so that the conversation's topic
// narrows the follow-up's search without drowning what it asks: "How can
// I check that in a test?" after two turns about exiting with an error
// code is about testing. When there are more candidates than that, the
// ones kept are those the conversation's questions repeat (its lasting
// topic, not each turn's own aspect), then those the index holds in the
// fewest chunks (df, the number of chunks with a term; nil keeps the
// questions' order), then the earlier.
func carried(an *analyze.Analyzer, question string, history []Turn, df func(term string) int) string {
	if len(history) == 0 || !followsUp(question) {
		return ""
	}
	// The previous question as it was searched: with the topic it
	// carried, when it was a follow-up too.
	prev := history[len(history)-1].Question
	if more := carried(an, prev, history[:len(history)-1], df); more != "" {
		prev += " " + more
	}
	have := map[string]bool{}
	own := 0
	for _, t := range an.QueryTerms(question) {
		if !have[t] && !questionWords[t] && !refersBack.MatchString(t) && !refersBackJa.MatchString(t) {
			own++ // a word of its own, not one that points back
		}
		have[t] = true
	}
	type cand struct {
		word          string
		terms         []string
		pos, repeated int
		df            int
	}
	var cands []cand
	add := func(w string) {
		if ts := keeps(an, w, have); len(ts) > 0 {
			cands = append(cands, cand{word: w, terms: ts, pos: len(cands)})
		}
	}
	if hasKana(prev) || hasCJK(prev) {
		// Japanese runs its words together: take the terms of what the
		// question is about, without its question ending and its words
		// that point back.
		text := jaQuestion.ReplaceAllString(strings.TrimSpace(prev), "")
		text = refersBackJa.ReplaceAllString(text, " ")
		for _, w := range strings.Fields(text) {
			for _, t := range an.QueryTerms(w) {
				add(t)
			}
		}
	} else {
		for _, w := range wordRE.FindAllString(prev, -1) {
			if !refersBack.MatchString(w) {
				add(w)
			}
		}
	}
	budget := min(max(own, minCarried), maxCarried)
	if len(cands) > budget {
		asked := make([]map[string]bool, len(history))
		for i, t := range history {
			asked[i] = map[string]bool{}
			for _, term := range an.QueryTerms(t.Question) {
				asked[i][term] = true
			}
		}
		for i := range cands {
			c := &cands[i]
			for _, q := range asked {
				if slices.ContainsFunc(c.terms, func(t string) bool { return q[t] }) {
					c.repeated++
				}
			}
			if df != nil {
				c.df = math.MaxInt
				for _, t := range c.terms {
					c.df = min(c.df, df(t))
				}
			}
		}
		slices.SortStableFunc(cands, func(a, b cand) int {
			if a.repeated != b.repeated {
				return b.repeated - a.repeated
			}
			return cmp.Compare(a.df, b.df)
		})
		cands = cands[:budget]
		slices.SortFunc(cands, func(a, b cand) int { return a.pos - b.pos })
	}
	out := make([]string, len(cands))
	for i, c := range cands {
		out[i] = c.word
	}
	return strings.Join(out, " ")
}

// keeps returns the topic terms word w adds that are not yet in have, and
// adds them.
func keeps(an *analyze.Analyzer, w string, have map[string]bool) []string {
	var added []string
	for _, t := range an.QueryTerms(w) {
		if questionWords[t] || have[t] {
			continue
		}
		have[t] = true
		added = append(added, t)
	}
	return added
}

// searchedAs is the question as its search is written: a follow-up with
// the topic words it carries from the conversation.
func searchedAs(question, carried string) string {
	if carried == "" {
		return question
	}
	return question + " " + carried
}

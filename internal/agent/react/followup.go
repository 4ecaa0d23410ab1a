package react

import (
	"regexp"
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

// maxCarried bounds the words a follow-up takes from the conversation.
const maxCarried = 8

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
func carried(an *analyze.Analyzer, question string, history []Turn) string {
	if len(history) == 0 || !followsUp(question) {
		return ""
	}
	// The previous question as it was searched: with the topic it
	// carried, when it was a follow-up too.
	prev := history[len(history)-1].Question
	if more := carried(an, prev, history[:len(history)-1]); more != "" {
		prev += " " + more
	}
	have := map[string]bool{}
	for _, t := range an.QueryTerms(question) {
		have[t] = true
	}
	var out []string
	if hasKana(prev) || hasCJK(prev) {
		// Japanese runs its words together: keep what the question is
		// about, without its question ending and its words that point back.
		text := jaQuestion.ReplaceAllString(strings.TrimSpace(prev), "")
		text = refersBackJa.ReplaceAllString(text, " ")
		for _, w := range strings.Fields(text) {
			if keeps(an, w, have) {
				out = append(out, w)
			}
		}
	} else {
		for _, w := range wordRE.FindAllString(prev, -1) {
			if !refersBack.MatchString(w) && keeps(an, w, have) {
				out = append(out, w)
			}
		}
	}
	if len(out) > maxCarried {
		out = out[:maxCarried]
	}
	return strings.Join(out, " ")
}

// keeps reports whether word w adds a topic term that is not yet in have,
// and adds its terms.
func keeps(an *analyze.Analyzer, w string, have map[string]bool) bool {
	added := false
	for _, t := range an.QueryTerms(w) {
		if questionWords[t] || have[t] {
			continue
		}
		have[t] = true
		added = true
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

package analyze

// The English stopwords: the classic 33-word list that Lucene and most BM25
// baselines (BEIR's included) use, plus a few equally empty function words
// (from, were, been, has, have, had, its, which). Words are matched after
// case folding and before stemming. Negations ("no", "not") are on the list
// as in the classic one; "n't" contractions resolve to the verb they negate.
var stopwordList = [...]string{
	"a", "an", "and", "are", "as", "at", "be", "been", "but", "by",
	"for", "from", "had", "has", "have", "if", "in", "into", "is", "it",
	"its", "no", "not", "of", "on", "or", "such", "that", "the", "their",
	"then", "there", "these", "they", "this", "to", "was", "were", "which", "will",
	"with",
}

// Stopwords returns the English stopwords that the default analyzer drops,
// in alphabetical order.
func Stopwords() []string {
	return append([]string(nil), stopwordList[:]...)
}

// isStopword reports whether the folded word w is a stopword. A switch on
// the string does not allocate and compiles to a length-then-compare search.
func isStopword(w []byte) bool {
	if len(w) > 5 {
		return false
	}
	switch string(w) {
	case "a", "an", "and", "are", "as", "at", "be", "been", "but", "by",
		"for", "from", "had", "has", "have", "if", "in", "into", "is", "it",
		"its", "no", "not", "of", "on", "or", "such", "that", "the", "their",
		"then", "there", "these", "they", "this", "to", "was", "were", "which", "will",
		"with":
		return true
	}
	return false
}

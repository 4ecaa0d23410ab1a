package react

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/clip"
)

// politeEndings are how です・ます sentences end.
var politeEndings = []string{"です", "ます", "でした", "ました", "ません", "でしょう", "ください", "さい"}

// isPolite reports whether a Japanese sentence ends in the polite style.
func isPolite(s string) bool {
	s = stripMarkers(s)
	s = strings.TrimRight(s, "。！？!?.)）」』 ")
	for _, e := range politeEndings {
		if strings.HasSuffix(s, e) {
			return true
		}
	}
	return false
}

// reflect checks a draft for accuracy (each sentence backed by the passages
// it cites; a sentence that cites nothing is first given the passage that
// backs it, when one does), relevance (it speaks to the question's words) and style (the
// question's language; です・ます in Japanese), drops the sentences that fail
// accuracy, and returns the revised answer with the verdicts.
func (a *Agent) reflect(question, draft string, ps *Passages, lang Lang) (string, Reflection) {
	var refl Reflection
	draft, cited := a.Checker().Cite(draft, ps)
	claims := a.Checker().Check(draft, ps)
	checked, supported := 0, 0
	var drop [][2]int
	for _, c := range claims {
		if c.Checked {
			checked++
		}
		switch {
		case c.Supported:
			supported++
		case c.Checked:
			refl.Unsupported = append(refl.Unsupported, clip.Runes(c.Text, 200)+" ("+c.Reason+")")
			drop = append(drop, [2]int{c.Start, c.End})
		}
	}
	refl.Accuracy = Verdict{OK: checked > 0 && supported == checked, Score: ratio(supported, checked),
		Note: fmt.Sprintf("%d of %d sentences backed by their cited passages", supported, checked)}
	if cited > 0 {
		refl.Revised = true
		refl.Accuracy.Note += fmt.Sprintf("; %d cited from the passages that back them", cited)
	}
	if len(refl.Unsupported) > 0 {
		refl.Revised = true
		refl.Accuracy.Note += fmt.Sprintf("; %d dropped", len(refl.Unsupported))
	}
	answer := cut(draft, drop)
	if strings.TrimSpace(stripMarkers(answer)) == "" {
		answer = notFound(lang)
	}
	refl.Relevance = a.relevance(question, answer, ps)
	refl.Style = styleVerdict(answer, lang)
	return answer, refl
}

// seam is the double space a removed sentence leaves.
var seam = regexp.MustCompile(`([.!?\]])  +`)

// cut removes spans (in order) from s and tidies the seams.
func cut(s string, spans [][2]int) string {
	var b strings.Builder
	from := 0
	for _, sp := range spans {
		b.WriteString(s[from:sp[0]])
		from = sp[1]
	}
	b.WriteString(s[from:])
	return tidy(seam.ReplaceAllString(b.String(), "$1 "))
}

// relevance is the share of the question's topic words that the answer
// or the passages it cites speak to.
func (a *Agent) relevance(question, answer string, ps *Passages) Verdict {
	q := topicTerms(a.an, question)
	if len(q) == 0 {
		return Verdict{OK: true, Score: 1, Note: "the question has no topic words to check"}
	}
	have := map[string]bool{}
	for _, t := range a.an.Terms(stripMarkers(answer)) {
		have[t] = true
	}
	for _, n := range citedIn(answer) {
		if h, ok := ps.Get(n); ok {
			for _, t := range a.an.Terms(h.Chunk.HeadingPath() + "\n" + h.Chunk.Text) {
				have[t] = true
			}
		}
	}
	found := 0
	var missing []string
	for _, t := range q {
		if have[t] {
			found++
		} else {
			missing = append(missing, t)
		}
	}
	v := Verdict{Score: ratio(found, len(q)), Note: fmt.Sprintf("%d of %d topic words of the question addressed", found, len(q))}
	v.OK = v.Score >= 0.5
	if len(missing) > 0 {
		v.Note += " (not: " + strings.Join(first(missing, 5), ", ") + ")"
	}
	return v
}

// styleVerdict checks the answer's language and, in Japanese, politeness.
func styleVerdict(answer string, lang Lang) Verdict {
	var sents []segment
	for _, seg := range splitAnswer(answer) {
		if !seg.Code && !seg.Note {
			sents = append(sents, seg)
		}
	}
	if len(sents) == 0 {
		return Verdict{Note: "empty answer"}
	}
	inLang, polite := 0, 0
	for _, s := range sents {
		if detectLang(stripMarkers(s.Text)) == lang {
			inLang++
		}
		if isPolite(s.Text) {
			polite++
		}
	}
	v := Verdict{Score: ratio(inLang, len(sents))}
	v.Note = fmt.Sprintf("%d of %d sentences in %s", inLang, len(sents), langName(lang))
	v.OK = inLang == len(sents)
	if lang == LangJapanese {
		v.Note += fmt.Sprintf("; %d of %d in です・ます style", polite, len(sents))
		v.OK = v.OK && polite == len(sents)
		v.Score = (v.Score + ratio(polite, len(sents))) / 2
	}
	return v
}

func langName(l Lang) string {
	switch l {
	case LangJapanese:
		return "Japanese"
	case LangEnglish:
		return "English"
	}
	return "the question's language"
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// summary renders the reflection for the trace.
func (r Reflection) summary() string {
	ok := func(v Verdict) string {
		if v.OK {
			return "ok"
		}
		return "needs work"
	}
	s := fmt.Sprintf("accuracy %s (%s); relevance %s (%s); style %s (%s)",
		ok(r.Accuracy), r.Accuracy.Note, ok(r.Relevance), r.Relevance.Note, ok(r.Style), r.Style.Note)
	for _, u := range r.Unsupported {
		s += "\nunsupported: " + u
	}
	return s
}

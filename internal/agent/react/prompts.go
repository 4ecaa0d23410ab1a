package react

import (
	"fmt"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/clip"
)

// system is the ReAct system prompt.
func (a *Agent) system(lang Lang) string {
	var b strings.Builder
	b.WriteString("You answer questions from a knowledge base of documents, using only what its passages say.\n")
	b.WriteString("Work in steps: think about what you need, call a tool to search or read, look at what it returns, and repeat until you can answer.\n")
	b.WriteString("Passages are numbered [1], [2], ... Cite every sentence of your answer with the number of the passage that says it, e.g. \"Run the build [2].\" At most three numbers per sentence. Never cite a number you were not shown.\n")
	b.WriteString("If the passages do not answer the question, say so. Do not add facts that are not in the passages.\n")
	switch lang {
	case LangJapanese:
		b.WriteString("Answer in Japanese, politely, in です・ます style.\n")
	case LangEnglish:
		b.WriteString("Answer in English.\n")
	}
	b.WriteString("When you have the answer, reply with the answer only, without calling a tool.")
	return b.String()
}

// reflectionPrompt asks the model to review its draft for accuracy,
// relevance and style, naming the sentences the claim checker found not
// backed by their citations.
func reflectionPrompt(question string, lang Lang, unsupported []Claim) string {
	var b strings.Builder
	b.WriteString("Review your draft answer before it is shown.\n")
	b.WriteString("1. Accuracy: every sentence must be supported by the passage it cites [n]; remove or fix anything the passages do not say.\n")
	b.WriteString("2. Relevance: it must answer the question that was asked: " + question + "\n")
	switch lang {
	case LangJapanese:
		b.WriteString("3. Style: Japanese, polite です・ます style, short; lists where they help.\n")
	default:
		b.WriteString("3. Style: the question's language, clear and short; lists where they help.\n")
	}
	if len(unsupported) > 0 {
		b.WriteString("A checker found these sentences not backed by their citations:\n")
		for _, c := range unsupported {
			fmt.Fprintf(&b, "- %q: %s\n", clip.Runes(c.Text, 160), c.Reason)
		}
	}
	b.WriteString("Reply with the final answer only, keeping the [n] citations.")
	return b.String()
}

package embed

import (
	"fmt"
	"strings"
	"unicode"
)

// Vocabulary is what an embedder whose tokenizer is at hand (the local
// driver's) says of a text: how many tokens the model reads it as, and how
// many of them are the unknown token.
type Vocabulary interface {
	CountTokens(text string) (tokens, unknown int)
}

// VocabularyOf returns the vocabulary of e's model, when e (or the client
// or embedder it wraps) has one; remote models do not show theirs.
func VocabularyOf(e Embedder) (Vocabulary, bool) {
	for e != nil {
		if v, ok := e.(Vocabulary); ok {
			return v, true
		}
		switch x := e.(type) {
		case *embedder:
			v, ok := x.c.(Vocabulary)
			return v, ok
		case *prefixed:
			e = x.e
		case *Counter:
			e = x.e
		default:
			return nil, false
		}
	}
	return nil, false
}

// FitMetaKey is the index meta key under which the indexer keeps how well
// the pinned embedder's vocabulary covers each language of the index.
const FitMetaKey = "embedder.fit"

// Fit is how well one model's vocabulary covers the languages of the texts
// it embedded, language by language.
type Fit struct {
	Model string                 `json:"model"` // driver/model, as Info names it
	Langs map[string]LanguageFit `json:"langs"`
}

// LanguageFit counts what a model made of the text of one language.
type LanguageFit struct {
	Texts   int `json:"texts"`   // texts (chunks) with text of the language
	Chars   int `json:"chars"`   // characters of the language in them
	Tokens  int `json:"tokens"`  // tokens the model read them as
	Unknown int `json:"unknown"` // of which the unknown token
}

// Languages sagasu tells apart by script, and their names for people.
var languageNames = map[string]string{"en": "English and other Latin-script text", "ja": "Japanese", "zh": "Chinese", "ko": "Korean"}

// LanguageName names a language code for people.
func LanguageName(code string) string {
	if n, ok := languageNames[code]; ok {
		return n
	}
	return code
}

// Thresholds of a poor fit: more than 5% of the tokens unknown, or the
// text read almost a character a token (a model that does not know the
// script's words: all-MiniLM-L6-v2 reads Japanese at 1.04 characters a
// token with 18% unknown, where English reads at about 4). Below minFitChars
// characters nothing is said.
const (
	maxUnknownRate   = 0.05
	minCharsPerToken = 1.2
	minFitChars      = 200
	minFitCharsLatin = 2.0 // Latin text: a model that knows the words reads several letters a token
)

// UnknownRate is the share of tokens that are the unknown token.
func (f LanguageFit) UnknownRate() float64 {
	if f.Tokens == 0 {
		return 0
	}
	return float64(f.Unknown) / float64(f.Tokens)
}

// CharsPerToken is how many characters of text a token stands for.
func (f LanguageFit) CharsPerToken() float64 {
	if f.Tokens == 0 {
		return 0
	}
	return float64(f.Chars) / float64(f.Tokens)
}

// Poor reports whether the model reads the language too poorly for its
// vectors to help search (with enough text measured to say).
func (f LanguageFit) Poor(lang string) bool {
	if f.Chars < minFitChars || f.Tokens == 0 {
		return false
	}
	least := minCharsPerToken
	if lang == "en" {
		least = minFitCharsLatin
	}
	return f.UnknownRate() > maxUnknownRate || f.CharsPerToken() < least
}

// Describe says how the model reads the language, e.g. "18% of its tokens
// are unknown, 1.0 characters a token, over 120 texts".
func (f LanguageFit) Describe() string {
	return fmt.Sprintf("%.0f%% of its tokens are unknown, %.1f characters a token, over %d text(s)", 100*f.UnknownRate(), f.CharsPerToken(), f.Texts)
}

// Add counts what v makes of text into fit, language by language: the runs
// of each script, as the keyword analyzer tells them apart (text with kana
// is Japanese, Han without kana Chinese, Hangul Korean; Latin letters
// count as "en").
func (fit *Fit) Add(v Vocabulary, text string) {
	if fit.Langs == nil {
		fit.Langs = map[string]LanguageFit{}
	}
	runs := map[string]*strings.Builder{}
	chars := map[string]int{}
	ja := hasKana(text)
	cur := ""
	for _, r := range text {
		lang := ""
		switch {
		case unicode.In(r, unicode.Hiragana, unicode.Katakana) || r == 'ー':
			lang = "ja"
		case unicode.Is(unicode.Han, r):
			lang = "zh"
			if ja {
				lang = "ja"
			}
		case unicode.Is(unicode.Hangul, r):
			lang = "ko"
		case unicode.Is(unicode.Latin, r):
			lang = "en"
		}
		if lang == "" {
			cur = ""
			continue
		}
		b := runs[lang]
		if b == nil {
			b = new(strings.Builder)
			runs[lang] = b
		}
		if cur != lang && b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
		chars[lang]++
		cur = lang
	}
	for lang, b := range runs {
		tokens, unknown := v.CountTokens(b.String())
		lf := fit.Langs[lang]
		lf.Texts++
		lf.Chars += chars[lang]
		lf.Tokens += tokens
		lf.Unknown += unknown
		fit.Langs[lang] = lf
	}
}

// Poor returns the languages the model reads poorly, in a stable order.
func (fit Fit) Poor() []string {
	var out []string
	for _, lang := range []string{"ja", "zh", "ko", "en"} {
		if lf, ok := fit.Langs[lang]; ok && lf.Poor(lang) {
			out = append(out, lang)
		}
	}
	return out
}

// Language returns the language a query is read as for the fit: "ja" with
// kana, "zh" with Han, "ko" with Hangul, else "en".
func Language(query string) string {
	if hasKana(query) {
		return "ja"
	}
	for _, r := range query {
		switch {
		case unicode.Is(unicode.Han, r):
			return "zh"
		case unicode.Is(unicode.Hangul, r):
			return "ko"
		}
	}
	return "en"
}

func hasKana(s string) bool {
	for _, r := range s {
		if unicode.In(r, unicode.Hiragana, unicode.Katakana) {
			return true
		}
	}
	return false
}

// Advice says which model to use for a language instead.
func Advice(lang string) string {
	if lang == "en" {
		return "use a model made for English text, e.g. `sagasu model pull all-MiniLM-L6-v2`"
	}
	return "use a multilingual model: `sagasu model pull multilingual-e5-small`, then `sagasu reindex --embedder local --embedder-model multilingual-e5-small`"
}

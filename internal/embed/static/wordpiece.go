package static

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// wordPiece is BERT's tokenizer: basic pre-tokenization (clean the text,
// lowercase and strip accents, put CJK ideographs and punctuation on their
// own) then greedy longest-match-first WordPiece, with "##" marking a piece
// that continues a word.
type wordPiece struct {
	vocab        map[string]int32
	unk          int32 // -1 when the vocabulary has no unknown token
	prefix       string
	maxChars     int
	lowercase    bool
	stripAccents bool
}

// tokenizerJSON is the part of a Hugging Face tokenizer.json we read.
type tokenizerJSON struct {
	Normalizer *struct {
		Type         string `json:"type"`
		Lowercase    *bool  `json:"lowercase"`
		StripAccents *bool  `json:"strip_accents"`
	} `json:"normalizer"`
	Model struct {
		Type                    string           `json:"type"`
		UnkToken                string           `json:"unk_token"`
		ContinuingSubwordPrefix *string          `json:"continuing_subword_prefix"`
		MaxInputCharsPerWord    int              `json:"max_input_chars_per_word"`
		Vocab                   map[string]int32 `json:"vocab"`
	} `json:"model"`
}

func parseWordPiece(data []byte) (*wordPiece, error) {
	var tj tokenizerJSON
	if err := json.Unmarshal(data, &tj); err != nil {
		return nil, fmt.Errorf("malformed tokenizer.json: %w", err)
	}
	if tj.Model.Type != "WordPiece" && !(tj.Model.Type == "" && tj.Model.Vocab != nil) {
		return nil, fmt.Errorf("tokenizer model %q is not supported: only WordPiece tokenizers are", tj.Model.Type)
	}
	if len(tj.Model.Vocab) == 0 {
		return nil, fmt.Errorf("tokenizer.json has an empty vocabulary")
	}
	t := &wordPiece{vocab: tj.Model.Vocab, unk: -1, prefix: "##", maxChars: 100, lowercase: true}
	if tj.Model.ContinuingSubwordPrefix != nil {
		t.prefix = *tj.Model.ContinuingSubwordPrefix
	}
	if tj.Model.MaxInputCharsPerWord > 0 {
		t.maxChars = tj.Model.MaxInputCharsPerWord
	}
	unk := tj.Model.UnkToken
	if unk == "" {
		unk = "[UNK]"
	}
	if id, ok := t.vocab[unk]; ok {
		t.unk = id
	}
	if n := tj.Normalizer; n != nil && n.Lowercase != nil {
		t.lowercase = *n.Lowercase
	}
	// As in BERT, accents go with lowercasing unless said otherwise.
	t.stripAccents = t.lowercase
	if n := tj.Normalizer; n != nil && n.StripAccents != nil {
		t.stripAccents = *n.StripAccents
	}
	return t, nil
}

// tokenize calls fn with the id of each token of text, in order; a word that
// cannot be cut into known pieces is one unknown token.
func (t *wordPiece) tokenize(text string, fn func(id int32)) {
	if t.lowercase {
		text = strings.ToLower(text)
	}
	if t.stripAccents {
		text = stripAccents(text)
	}
	var word []byte
	var key []byte // scratch for "##" + piece
	var ids []int32
	flush := func() {
		if len(word) == 0 {
			return
		}
		ids, key = t.pieces(string(word), ids[:0], key)
		for _, id := range ids {
			fn(id)
		}
		word = word[:0]
	}
	for _, r := range text {
		switch {
		case r == 0 || r == utf8.RuneError || isControl(r):
			// dropped, as BERT's text cleaning does
		case isWhitespace(r):
			flush()
		case isCJK(r) || isPunct(r):
			flush()
			word = utf8.AppendRune(word, r)
			flush()
		default:
			word = utf8.AppendRune(word, r)
		}
	}
	flush()
}

// pieces cuts one word greedily into the longest pieces in the vocabulary.
func (t *wordPiece) pieces(word string, ids []int32, key []byte) ([]int32, []byte) {
	if utf8.RuneCountInString(word) > t.maxChars {
		return t.unknown(ids), key
	}
	for start := 0; start < len(word); {
		end := len(word)
		found := int32(-1)
		for end > start {
			key = key[:0]
			if start > 0 {
				key = append(key, t.prefix...)
			}
			key = append(key, word[start:end]...)
			if id, ok := t.vocab[string(key)]; ok {
				found = id
				break
			}
			_, size := utf8.DecodeLastRuneInString(word[start:end])
			end -= size
		}
		if found < 0 {
			return t.unknown(ids[:0]), key
		}
		ids = append(ids, found)
		start = end
	}
	return ids, key
}

func (t *wordPiece) unknown(ids []int32) []int32 {
	if t.unk >= 0 {
		return append(ids[:0], t.unk)
	}
	return ids[:0]
}

func stripAccents(s string) string {
	isASCII := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			isASCII = false
			break
		}
	}
	if isASCII {
		return s
	}
	d := norm.NFD.String(s)
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, d)
}

func isWhitespace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || unicode.Is(unicode.Zs, r)
}

func isControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Cf)
}

// isPunct counts all non-letter, non-digit ASCII symbols as punctuation, as
// BERT does, besides Unicode's P categories.
func isPunct(r rune) bool {
	if (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126) {
		return true
	}
	return unicode.IsPunct(r)
}

// isCJK reports a CJK ideograph, which BERT treats as a word of its own.
func isCJK(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) || (r >= 0x3400 && r <= 0x4DBF) ||
		(r >= 0x20000 && r <= 0x2A6DF) || (r >= 0x2A700 && r <= 0x2B73F) ||
		(r >= 0x2B740 && r <= 0x2B81F) || (r >= 0x2B820 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) || (r >= 0x2F800 && r <= 0x2FA1F)
}

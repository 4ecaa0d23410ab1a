// Package tokenizer reads a Hugging Face tokenizer.json and turns text into
// token ids exactly as the Hugging Face tokenizers library does, for the
// models sagasu runs in process: BERT's WordPiece (MiniLM, BGE, E5) and
// SentencePiece's unigram model (XLM-R, multilingual E5), with their
// normalisers (BERT's, SentencePiece's precompiled charsmap, NFKC, ...),
// pre-tokenizers, added tokens and the special tokens put around a text.
package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sagasu-dev/sagasu/internal/userfile"
)

// Tokenizer is a loaded tokenizer.json. It is safe for concurrent use.
type Tokenizer struct {
	norm   normalizer
	pre    preTokenizer
	model  model
	added  []addedToken // longest first among those that start alike
	prefix []int32      // special tokens put before a text
	suffix []int32      // and after it
}

type addedToken struct {
	content    string
	id         int32
	lstrip     bool
	rstrip     bool
	singleWord bool
	normalized bool
}

// maxFile is the largest tokenizer.json Load reads (the largest in use are
// tens of megabytes).
const maxFile = 512 << 20

// Load reads a tokenizer.json file: a regular file of at most maxFile bytes.
func Load(path string) (*Tokenizer, error) {
	data, err := userfile.ReadRegular(path, maxFile)
	if err != nil {
		return nil, err
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Parse reads the contents of a tokenizer.json.
func Parse(data []byte) (*Tokenizer, error) {
	var f struct {
		AddedTokens []struct {
			ID         int32  `json:"id"`
			Content    string `json:"content"`
			SingleWord bool   `json:"single_word"`
			LStrip     bool   `json:"lstrip"`
			RStrip     bool   `json:"rstrip"`
			Normalized bool   `json:"normalized"`
		} `json:"added_tokens"`
		Normalizer    json.RawMessage `json:"normalizer"`
		PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
		Model         json.RawMessage `json:"model"`
		PostProcessor json.RawMessage `json:"post_processor"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("malformed tokenizer.json: %w", err)
	}
	if isNull(f.Model) {
		return nil, fmt.Errorf("tokenizer.json has no model")
	}
	t := &Tokenizer{}
	var err error
	if t.model, err = parseModel(f.Model); err != nil {
		return nil, err
	}
	if t.norm, err = parseNormalizer(f.Normalizer); err != nil {
		return nil, fmt.Errorf("tokenizer.json normalizer: %w", err)
	}
	if t.pre, err = parsePreTokenizer(f.PreTokenizer); err != nil {
		return nil, fmt.Errorf("tokenizer.json pre_tokenizer: %w", err)
	}
	for _, a := range f.AddedTokens {
		if a.Content == "" {
			continue
		}
		if a.ID < 0 {
			return nil, fmt.Errorf("added token %q has id %d", a.Content, a.ID)
		}
		tok := addedToken{content: a.Content, id: a.ID, lstrip: a.LStrip, rstrip: a.RStrip, singleWord: a.SingleWord, normalized: a.Normalized}
		if tok.normalized && t.norm != nil {
			tok.content = t.norm.normalize(tok.content)
		}
		t.added = append(t.added, tok)
	}
	if t.prefix, t.suffix, err = t.parsePostProcessor(f.PostProcessor); err != nil {
		return nil, fmt.Errorf("tokenizer.json post_processor: %w", err)
	}
	return t, nil
}

// parsePostProcessor returns the special tokens put around a single text.
func (t *Tokenizer) parsePostProcessor(raw json.RawMessage) (prefix, suffix []int32, err error) {
	if isNull(raw) {
		return nil, nil, nil
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, nil, err
	}
	switch c.Type {
	case "BertProcessing", "RobertaProcessing":
		var p struct {
			Sep [2]json.RawMessage `json:"sep"`
			Cls [2]json.RawMessage `json:"cls"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, nil, err
		}
		var cls, sep int32
		if err := json.Unmarshal(p.Cls[1], &cls); err != nil {
			return nil, nil, fmt.Errorf("%s cls: %w", c.Type, err)
		}
		if err := json.Unmarshal(p.Sep[1], &sep); err != nil {
			return nil, nil, fmt.Errorf("%s sep: %w", c.Type, err)
		}
		return []int32{cls}, []int32{sep}, nil
	case "TemplateProcessing":
		var p struct {
			Single []struct {
				SpecialToken *struct {
					ID string `json:"id"`
				} `json:"SpecialToken"`
				Sequence *struct {
					ID string `json:"id"`
				} `json:"Sequence"`
			} `json:"single"`
			SpecialTokens map[string]struct {
				IDs []int32 `json:"ids"`
			} `json:"special_tokens"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, nil, err
		}
		seen := false
		for _, piece := range p.Single {
			switch {
			case piece.Sequence != nil:
				if seen {
					return nil, nil, fmt.Errorf("the single template holds more than one sequence")
				}
				seen = true
			case piece.SpecialToken != nil:
				st, ok := p.SpecialTokens[piece.SpecialToken.ID]
				if !ok {
					return nil, nil, fmt.Errorf("special token %q is not defined", piece.SpecialToken.ID)
				}
				if seen {
					suffix = append(suffix, st.IDs...)
				} else {
					prefix = append(prefix, st.IDs...)
				}
			}
		}
		if !seen {
			return nil, nil, fmt.Errorf("the single template holds no sequence")
		}
		return prefix, suffix, nil
	case "ByteLevel":
		return nil, nil, nil // only moves offsets
	case "Sequence":
		var s struct {
			Processors []json.RawMessage `json:"processors"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, nil, err
		}
		for _, r := range s.Processors {
			p, q, err := t.parsePostProcessor(r)
			if err != nil {
				return nil, nil, err
			}
			prefix = append(p, prefix...)
			suffix = append(suffix, q...)
		}
		return prefix, suffix, nil
	}
	return nil, nil, fmt.Errorf("post-processor %q is not supported", c.Type)
}

// Specials is how many special tokens Encode puts around a text.
func (t *Tokenizer) Specials() int { return len(t.prefix) + len(t.suffix) }

// VocabSize is the number of ids the model knows.
func (t *Tokenizer) VocabSize() int { return t.model.size() }

// Unknown is the id of the unknown token.
func (t *Tokenizer) Unknown() int32 { return t.model.unknown() }

// MaxID is the largest id Encode can return.
func (t *Tokenizer) MaxID() int32 {
	m := t.model.maxID()
	for _, a := range t.added {
		m = max(m, a.id)
	}
	for _, id := range t.prefix {
		m = max(m, id)
	}
	for _, id := range t.suffix {
		m = max(m, id)
	}
	return m
}

// Encode returns the ids of text with the special tokens around it, cut
// (from the end of the text) so that there are at most maxLen ids in all;
// maxLen 0 means no limit.
func (t *Tokenizer) Encode(text string, maxLen int) []int32 {
	ids := append([]int32(nil), t.prefix...)
	ids = t.appendTokens(ids, text)
	if maxLen > 0 {
		if room := maxLen - len(t.suffix); len(ids) > room {
			ids = ids[:max(room, len(t.prefix))]
		}
	}
	return append(ids, t.suffix...)
}

// Tokens returns the ids of text alone: no special tokens, no limit.
func (t *Tokenizer) Tokens(text string) []int32 { return t.appendTokens(nil, text) }

// appendTokens runs the pipeline: added tokens are split off the raw text,
// the rest is normalised, split, and cut into pieces by the model.
func (t *Tokenizer) appendTokens(ids []int32, text string) []int32 {
	text = strings.ToValidUTF8(text, "\uFFFD")
	for _, seg := range t.splitAdded(text, false, true) {
		if seg.id >= 0 {
			ids = append(ids, seg.id)
			continue
		}
		s := seg.text
		if t.norm != nil {
			s = t.norm.normalize(s)
		}
		for _, nseg := range t.splitAdded(s, true, seg.first) {
			if nseg.id >= 0 {
				ids = append(ids, nseg.id)
				continue
			}
			pieces := []split{{text: nseg.text, first: nseg.first}}
			if t.pre != nil {
				pieces = t.pre.preTokenize(pieces)
			}
			for _, p := range pieces {
				if p.text != "" {
					ids = t.model.tokenize(p.text, ids)
				}
			}
		}
	}
	return ids
}

// segment is a stretch of text, or an added token when id >= 0.
type segment struct {
	text  string
	id    int32
	first bool // begins the original text
}

// splitAdded cuts s around the added tokens whose normalized flag equals
// normalized: at each point the leftmost match wins, the longest among
// those starting there. lstrip and rstrip tokens take the whitespace
// beside them; single-word tokens match only between non-word characters.
func (t *Tokenizer) splitAdded(s string, normalized, first bool) []segment {
	var out []segment
	emit := func(text string) {
		if text != "" {
			out = append(out, segment{text: text, id: -1, first: first})
		}
		first = false
	}
	done := 0 // s[:done] is emitted
	for pos := 0; pos < len(s); {
		at, best := -1, -1
		for i, a := range t.added {
			if a.normalized != normalized {
				continue
			}
			j := strings.Index(s[pos:], a.content)
			if j < 0 {
				continue
			}
			j += pos
			if at < 0 || j < at || (j == at && len(a.content) > len(t.added[best].content)) {
				at, best = j, i
			}
		}
		if at < 0 {
			break
		}
		a := t.added[best]
		start, stop := at, at+len(a.content)
		if a.singleWord && (endsWithWord(s[:start]) || startsWithWord(s[stop:])) {
			pos = at + 1
			for pos < len(s) && !utf8.RuneStart(s[pos]) {
				pos++
			}
			continue
		}
		if a.lstrip {
			start = max(len(strings.TrimRightFunc(s[:start], unicode.IsSpace)), done)
		}
		if a.rstrip {
			stop = len(s) - len(strings.TrimLeftFunc(s[stop:], unicode.IsSpace))
		}
		emit(s[done:start])
		out = append(out, segment{id: a.id})
		first = false
		done, pos = stop, stop
	}
	emit(s[done:])
	return out
}

func isWordChar(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }

func endsWithWord(s string) bool {
	r, n := utf8.DecodeLastRuneInString(s)
	return n > 0 && isWordChar(r)
}

func startsWithWord(s string) bool {
	r, n := utf8.DecodeRuneInString(s)
	return n > 0 && isWordChar(r)
}

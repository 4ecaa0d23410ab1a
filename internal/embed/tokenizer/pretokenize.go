package tokenizer

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// split is a piece of normalised text on its way to the model. first marks
// the piece that begins the original text (for Metaspace's "first"
// scheme).
type split struct {
	text  string
	first bool
}

// preTokenizer cuts normalised text into the pieces the model sees alone.
type preTokenizer interface {
	preTokenize(in []split) []split
}

func parsePreTokenizer(raw json.RawMessage) (preTokenizer, error) {
	if isNull(raw) {
		return nil, nil
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	switch c.Type {
	case "Sequence":
		seq, err := parseSequence(raw, "pretokenizers", parsePreTokenizer)
		return sequencePre(seq), err
	case "BertPreTokenizer":
		return bertPre{}, nil
	case "WhitespaceSplit":
		return whitespaceSplit{}, nil
	case "Whitespace":
		return wordsPre{}, nil
	case "Punctuation":
		var p struct {
			Behavior string `json:"behavior"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, err
		}
		if p.Behavior != "" && p.Behavior != "Isolated" {
			return nil, fmt.Errorf("a Punctuation pre-tokenizer with behavior %q is not supported", p.Behavior)
		}
		return punctuationPre{}, nil
	case "Metaspace":
		var m struct {
			Replacement    string  `json:"replacement"`
			PrependScheme  *string `json:"prepend_scheme"`
			AddPrefixSpace *bool   `json:"add_prefix_space"`
			Split          *bool   `json:"split"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, err
		}
		p := metaspace{replacement: "▁", scheme: "always", split: true}
		if m.Replacement != "" {
			p.replacement = m.Replacement
		}
		switch {
		case m.PrependScheme != nil:
			p.scheme = *m.PrependScheme
		case m.AddPrefixSpace != nil && !*m.AddPrefixSpace:
			p.scheme = "never"
		}
		if p.scheme != "always" && p.scheme != "first" && p.scheme != "never" {
			return nil, fmt.Errorf("a Metaspace prepend_scheme %q is not supported", p.scheme)
		}
		if m.Split != nil {
			p.split = *m.Split
		}
		return p, nil
	}
	return nil, fmt.Errorf("pre-tokenizer %q is not supported", c.Type)
}

type sequencePre []preTokenizer

func (s sequencePre) preTokenize(in []split) []split {
	for _, p := range s {
		in = p.preTokenize(in)
	}
	return in
}

// cut splits each piece at the characters isDelim reports: a delimiter is
// dropped (keep false) or kept as a piece of its own (keep true).
func cut(in []split, isDelim func(rune) bool, keep bool) []split {
	var out []split
	for _, sp := range in {
		s, first, start := sp.text, sp.first, 0
		emit := func(t string) {
			if t != "" {
				out = append(out, split{text: t, first: first})
				first = false
			}
		}
		for i, r := range s {
			if !isDelim(r) {
				continue
			}
			emit(s[start:i])
			end := i + utf8.RuneLen(r)
			if keep {
				emit(s[i:end])
			}
			start = end
		}
		emit(s[start:])
	}
	return out
}

// bertPre splits on whitespace and puts each punctuation character alone.
type bertPre struct{}

func (bertPre) preTokenize(in []split) []split {
	return cut(cut(in, unicode.IsSpace, false), isBertPunct, true)
}

// isBertPunct counts every ASCII symbol as punctuation, as BERT does, as
// well as Unicode's P categories.
func isBertPunct(r rune) bool {
	if (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126) {
		return true
	}
	return unicode.IsPunct(r)
}

type whitespaceSplit struct{}

func (whitespaceSplit) preTokenize(in []split) []split { return cut(in, unicode.IsSpace, false) }

type punctuationPre struct{}

func (punctuationPre) preTokenize(in []split) []split { return cut(in, isBertPunct, true) }

// wordsPre is the "Whitespace" pre-tokenizer: runs of word characters
// (Unicode letters, marks, decimal digits, connectors) and runs of other
// non-space characters.
type wordsPre struct{}

var wordsRe = regexp.MustCompile(`[\p{L}\p{M}\p{Nd}\p{Pc}]+|[^\p{L}\p{M}\p{Nd}\p{Pc}\s\p{Z}\x{85}]+`)

func (wordsPre) preTokenize(in []split) []split {
	var out []split
	for _, sp := range in {
		first := sp.first
		for _, w := range wordsRe.FindAllString(sp.text, -1) {
			out = append(out, split{text: w, first: first})
			first = false
		}
	}
	return out
}

// metaspace is SentencePiece's view of spaces: each space becomes the
// replacement character (▁), a ▁ goes in front of a piece that lacks one,
// and the text is cut before each ▁.
type metaspace struct {
	replacement string
	scheme      string // "always", "first" or "never"
	split       bool
}

func (m metaspace) preTokenize(in []split) []split {
	var out []split
	for _, sp := range in {
		s := strings.ReplaceAll(sp.text, " ", m.replacement)
		if (m.scheme == "always" || (m.scheme == "first" && sp.first)) && !strings.HasPrefix(s, m.replacement) {
			s = m.replacement + s
		}
		if !m.split {
			out = append(out, split{text: s, first: sp.first})
			continue
		}
		first := sp.first
		for s != "" {
			// Each piece runs from one ▁ up to the next.
			next := strings.Index(s[1:], m.replacement)
			end := len(s)
			if next >= 0 {
				end = next + 1
			}
			out = append(out, split{text: s[:end], first: first})
			first = false
			s = s[end:]
		}
	}
	return out
}

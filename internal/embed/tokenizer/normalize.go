package tokenizer

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// normalizer rewrites a text before it is split, as one entry of a
// tokenizer.json "normalizer" does.
type normalizer interface {
	normalize(s string) string
}

// component is the part every tokenizer.json pipeline entry has.
type component struct {
	Type string `json:"type"`
}

func parseNormalizer(raw json.RawMessage) (normalizer, error) {
	if isNull(raw) {
		return nil, nil
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	switch c.Type {
	case "Sequence":
		seq, err := parseSequence(raw, "normalizers", parseNormalizer)
		return sequenceNorm(seq), err
	case "BertNormalizer":
		var b struct {
			CleanText          *bool `json:"clean_text"`
			HandleChineseChars *bool `json:"handle_chinese_chars"`
			StripAccents       *bool `json:"strip_accents"`
			Lowercase          *bool `json:"lowercase"`
		}
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, err
		}
		n := bertNorm{cleanText: true, chineseChars: true, lowercase: true}
		if b.CleanText != nil {
			n.cleanText = *b.CleanText
		}
		if b.HandleChineseChars != nil {
			n.chineseChars = *b.HandleChineseChars
		}
		if b.Lowercase != nil {
			n.lowercase = *b.Lowercase
		}
		// Accents go with lowercasing unless said otherwise.
		n.stripAccents = n.lowercase
		if b.StripAccents != nil {
			n.stripAccents = *b.StripAccents
		}
		return n, nil
	case "Precompiled":
		var p struct {
			Charsmap *string `json:"precompiled_charsmap"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, err
		}
		if p.Charsmap == nil || *p.Charsmap == "" {
			return nil, nil // an empty map changes nothing
		}
		m, err := parseCharsMap(*p.Charsmap)
		if err != nil {
			return nil, err
		}
		return m, nil
	case "Replace":
		var r struct {
			Pattern struct {
				String *string `json:"String"`
				Regex  *string `json:"Regex"`
			} `json:"pattern"`
			Content string `json:"content"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, err
		}
		switch {
		case r.Pattern.String != nil:
			return replaceNorm{old: *r.Pattern.String, new: r.Content}, nil
		case r.Pattern.Regex != nil:
			re, err := regexp.Compile(*r.Pattern.Regex)
			if err != nil {
				return nil, fmt.Errorf("the Replace pattern %q: %w", *r.Pattern.Regex, err)
			}
			return replaceNorm{re: re, new: r.Content}, nil
		}
		return nil, fmt.Errorf("a Replace normalizer without a pattern")
	case "Strip":
		var s struct {
			Left  bool `json:"strip_left"`
			Right bool `json:"strip_right"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return stripNorm{left: s.Left, right: s.Right}, nil
	case "Prepend":
		var p struct {
			Prepend string `json:"prepend"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, err
		}
		return prependNorm(p.Prepend), nil
	case "Lowercase":
		return lowercaseNorm{}, nil
	case "StripAccents":
		return stripAccentsNorm{}, nil
	case "NFC":
		return formNorm{norm.NFC}, nil
	case "NFD":
		return formNorm{norm.NFD}, nil
	case "NFKC":
		return formNorm{norm.NFKC}, nil
	case "NFKD":
		return formNorm{norm.NFKD}, nil
	}
	return nil, fmt.Errorf("normalizer %q is not supported", c.Type)
}

// parseSequence parses the list under key of a Sequence entry, each item
// with parse, leaving out the items that do nothing (nil).
func parseSequence[T comparable](raw json.RawMessage, key string, parse func(json.RawMessage) (T, error)) ([]T, error) {
	var s map[string]json.RawMessage
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	var items []json.RawMessage
	if err := json.Unmarshal(s[key], &items); err != nil {
		return nil, fmt.Errorf("a Sequence of %s: %w", key, err)
	}
	var out []T
	var none T
	for _, r := range items {
		v, err := parse(r)
		if err != nil {
			return nil, err
		}
		if v != none {
			out = append(out, v)
		}
	}
	return out, nil
}

func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}

type sequenceNorm []normalizer

func (s sequenceNorm) normalize(text string) string {
	for _, n := range s {
		text = n.normalize(text)
	}
	return text
}

// bertNorm is BERT's text cleaning: drop NUL, U+FFFD and control
// characters, turn whitespace into spaces, put spaces around CJK
// ideographs, strip accents (NFD, then drop non-spacing marks) and
// lowercase, in that order.
type bertNorm struct {
	cleanText, chineseChars, stripAccents, lowercase bool
}

func (n bertNorm) normalize(s string) string {
	if n.cleanText || n.chineseChars {
		var b strings.Builder
		b.Grow(len(s))
		for _, r := range s {
			if n.cleanText {
				if r == 0 || r == 0xfffd || isControl(r) {
					continue
				}
				if unicode.IsSpace(r) {
					r = ' '
				}
			}
			if n.chineseChars && isChinese(r) {
				b.WriteByte(' ')
				b.WriteRune(r)
				b.WriteByte(' ')
				continue
			}
			b.WriteRune(r)
		}
		s = b.String()
	}
	if n.stripAccents {
		s = stripAccents(s)
	}
	if n.lowercase {
		s = lowercase(s)
	}
	return s
}

// isControl is Unicode's "other" characters as BERT counts them (Cc, Cf,
// Co) except tab, newline and carriage return, which are whitespace.
func isControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co)
}

// isChinese reports a CJK ideograph, the ranges BERT splits off alone.
func isChinese(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) || (r >= 0x3400 && r <= 0x4DBF) ||
		(r >= 0x20000 && r <= 0x2A6DF) || (r >= 0x2A700 && r <= 0x2B73F) ||
		(r >= 0x2B740 && r <= 0x2B81F) || (r >= 0x2B820 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) || (r >= 0x2F800 && r <= 0x2FA1F)
}

func stripAccents(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, norm.NFD.String(s))
}

// lowercase applies Unicode's full lowercase mapping character by
// character (no context, so no final sigma): the simple mapping, except
// that U+0130 becomes "i̇".
func lowercase(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == 0x130 {
			b.WriteString("i\u0307")
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

type lowercaseNorm struct{}

func (lowercaseNorm) normalize(s string) string { return lowercase(s) }

type stripAccentsNorm struct{}

// normalize drops combining marks; like the reference it does not
// decompose first (tokenizer.json puts an NFD before it when it should).
func (stripAccentsNorm) normalize(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.M, r) {
			return -1
		}
		return r
	}, s)
}

type formNorm struct{ f norm.Form }

func (n formNorm) normalize(s string) string { return n.f.String(s) }

type replaceNorm struct {
	old string
	re  *regexp.Regexp
	new string
}

func (n replaceNorm) normalize(s string) string {
	if n.re != nil {
		return n.re.ReplaceAllLiteralString(s, n.new)
	}
	if n.old == "" {
		return s
	}
	return strings.ReplaceAll(s, n.old, n.new)
}

type stripNorm struct{ left, right bool }

func (n stripNorm) normalize(s string) string {
	if n.left {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
	}
	if n.right {
		s = strings.TrimRightFunc(s, unicode.IsSpace)
	}
	return s
}

type prependNorm string

func (p prependNorm) normalize(s string) string {
	if s == "" {
		return s
	}
	return string(p) + s
}

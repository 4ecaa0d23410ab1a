package tokenizer

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// build makes a tokenizer from a tokenizer.json built of the given parts.
func build(t testing.TB, parts map[string]any) *Tokenizer {
	t.Helper()
	data, err := json.Marshal(parts)
	require.NoError(t, err)
	tok, err := Parse(data)
	require.NoError(t, err)
	return tok
}

var bertVocab = []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able", "want", "##ed", "runn", "##ing",
	",", "!", "hello", "world", "cafe", "中", "文", "a", "##b", "##c", "abc", "d", "i", "##̇", "istanbul", "[", "]"}

func bertTokenizer(t testing.TB, normalizer map[string]any) (*Tokenizer, func(string) []string) {
	ids := map[string]int{}
	for i, w := range bertVocab {
		ids[w] = i
	}
	tok := build(t, map[string]any{
		"added_tokens": []map[string]any{
			{"id": 2, "content": "[CLS]", "special": true}, {"id": 3, "content": "[SEP]", "special": true},
			{"id": 4, "content": "[MASK]", "special": true},
		},
		"normalizer":     normalizer,
		"pre_tokenizer":  map[string]any{"type": "BertPreTokenizer"},
		"model":          map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": ids},
		"post_processor": map[string]any{"type": "BertProcessing", "sep": []any{"[SEP]", 3}, "cls": []any{"[CLS]", 2}},
	})
	return tok, func(s string) []string {
		var out []string
		for _, id := range tok.Encode(s, 0) {
			out = append(out, bertVocab[id])
		}
		return out
	}
}

func TestWordPiece(t *testing.T) {
	_, tokens := bertTokenizer(t, map[string]any{"type": "BertNormalizer", "lowercase": true})
	cases := []struct {
		in   string
		want string
	}{
		{"unaffable", "un ##aff ##able"},
		{"UNwanted, running!", "[UNK] , runn ##ing !"}, // "unwanted" cannot be cut: one [UNK]
		{"wanted", "want ##ed"},
		{"Héllo\tWORLD", "hello world"},
		{"Café", "cafe"},
		{"abc", "abc"}, // the longest match wins
		{"abcd", "[UNK]"},
		{"a\u0000b\u200bc", "abc"}, // NUL and format characters are dropped
		{"中文", "中 文"},
		{"hello中world", "hello 中 world"},
		{strings.Repeat("a", 101), "[UNK]"},
		{"hello [MASK] world[SEP]", "hello [MASK] world [SEP]"}, // added tokens in the text stay whole
		{"İstanbul", "istanbul"},                                // accents are stripped before lowercasing
		{"", ""},
	}
	for _, c := range cases {
		got := strings.Join(tokens(c.in), " ")
		want := strings.TrimSpace("[CLS] " + c.want + " [SEP]")
		if c.want == "" {
			want = "[CLS] [SEP]"
		}
		assert.Equal(t, want, got, c.in)
	}

	// Lowercasing without stripping accents: U+0130 lowercases to "i" and a
	// combining dot, as Unicode's full mapping says.
	_, tokens = bertTokenizer(t, map[string]any{"type": "BertNormalizer", "lowercase": true, "strip_accents": false})
	assert.Equal(t, "[CLS] i ##̇ [SEP]", strings.Join(tokens("İ"), " "))
}

func TestTruncation(t *testing.T) {
	tok, _ := bertTokenizer(t, map[string]any{"type": "BertNormalizer"})
	full := tok.Encode("hello world hello world", 0)
	assert.Equal(t, []int32{2, 14, 15, 14, 15, 3}, full)
	assert.Equal(t, []int32{2, 14, 15, 3}, tok.Encode("hello world hello world", 4), "the end of the text is cut, the specials stay")
	assert.Equal(t, []int32{2, 3}, tok.Encode("hello world", 1), "a limit below the specials keeps only them")
	assert.Equal(t, []int32{14, 15}, tok.Tokens("hello world"))
	assert.Equal(t, 2, tok.Specials())
	assert.Equal(t, len(bertVocab), tok.VocabSize())
	assert.Equal(t, int32(len(bertVocab)-1), tok.MaxID())
}

// unigramParts is a small XLM-R style tokenizer.json.
func unigramParts(pre any) map[string]any {
	vocab := [][2]any{{"<s>", 0}, {"<pad>", 0}, {"</s>", 0}, {"<unk>", 0}, {"▁", -2}, {"▁hello", -3}, {"▁world", -4},
		{"▁he", -5}, {"llo", -5}, {"h", -6}, {"e", -6}, {"l", -6}, {"o", -6}, {"▁w", -6}, {"orld", -6}, {"<mask>", 0}}
	return map[string]any{
		"added_tokens": []map[string]any{
			{"id": 0, "content": "<s>", "special": true}, {"id": 2, "content": "</s>", "special": true},
			{"id": 3, "content": "<unk>", "special": true}, {"id": 15, "content": "<mask>", "special": true, "lstrip": true},
		},
		"pre_tokenizer": pre,
		"model":         map[string]any{"type": "Unigram", "unk_id": 3, "vocab": vocab},
		"post_processor": map[string]any{"type": "TemplateProcessing",
			"single":         []any{map[string]any{"SpecialToken": map[string]any{"id": "<s>"}}, map[string]any{"Sequence": map[string]any{"id": "A"}}, map[string]any{"SpecialToken": map[string]any{"id": "</s>"}}},
			"special_tokens": map[string]any{"<s>": map[string]any{"ids": []int{0}}, "</s>": map[string]any{"ids": []int{2}}}},
	}
}

func TestUnigram(t *testing.T) {
	classic := map[string]any{"type": "Sequence", "pretokenizers": []any{
		map[string]any{"type": "WhitespaceSplit"},
		map[string]any{"type": "Metaspace", "replacement": "▁", "add_prefix_space": true},
	}}
	tok := build(t, unigramParts(classic))
	cases := []struct {
		in   string
		want []int32
	}{
		{"hello world", []int32{0, 5, 6, 2}},
		{"  hello   world ", []int32{0, 5, 6, 2}},
		{"hellohello", []int32{0, 5, 9, 10, 8, 2}},      // ▁hello, then h e llo: "hello" alone is no piece
		{"hello xyz", []int32{0, 5, 4, 3, 2}},           // ▁ then one fused <unk> for "xyz"
		{"hello <mask> world", []int32{0, 5, 15, 6, 2}}, // <mask> takes the space before it
		{"", []int32{0, 2}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, tok.Encode(c.in, 0), "%q", c.in)
	}

	// The newer form of the same: prepend_scheme "always" equals
	// add_prefix_space true; "never" adds no ▁.
	newer := build(t, unigramParts(map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true}))
	assert.Equal(t, []int32{0, 5, 6, 2}, newer.Encode("hello world", 0))
	never := build(t, unigramParts(map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never"}))
	assert.Equal(t, []int32{0, 9, 10, 8, 6, 2}, never.Encode("hello world", 0))
	// "first": only the piece that begins the text gets a ▁.
	first := build(t, unigramParts(map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": true}))
	assert.Equal(t, []int32{0, 5, 15, 9, 10, 8, 2}, first.Encode("hello<mask>hello", 0))
	// split false keeps "▁hello▁world" one piece for the model.
	whole := build(t, unigramParts(map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": false}))
	assert.Equal(t, []int32{0, 5, 6, 2}, whole.Encode("hello world", 0))
}

func TestNormalizers(t *testing.T) {
	cases := []struct {
		norm any
		in   string
		want string
	}{
		{map[string]any{"type": "Lowercase"}, "HeLLo İ", "hello i\u0307"},
		{map[string]any{"type": "NFKC"}, "ﬁ①", "fi1"},
		{map[string]any{"type": "NFD"}, "é", "e\u0301"},
		{map[string]any{"type": "Sequence", "normalizers": []any{map[string]any{"type": "NFD"}, map[string]any{"type": "StripAccents"}}}, "Café", "Cafe"},
		{map[string]any{"type": "Replace", "pattern": map[string]any{"Regex": " {2,}"}, "content": " "}, "a   b  c d", "a b c d"},
		{map[string]any{"type": "Replace", "pattern": map[string]any{"String": "a"}, "content": "b"}, "banana", "bbnbnb"},
		{map[string]any{"type": "Strip", "strip_left": false, "strip_right": true}, "  x  ", "  x"},
		{map[string]any{"type": "Prepend", "prepend": "▁"}, "x", "▁x"},
		{map[string]any{"type": "Prepend", "prepend": "▁"}, "", ""},
		{map[string]any{"type": "BertNormalizer", "lowercase": false, "handle_chinese_chars": false}, "A\t中\u0085b", "A 中b"},
		{map[string]any{"type": "Precompiled", "precompiled_charsmap": nil}, "Ａ", "Ａ"},
	}
	for _, c := range cases {
		n, err := parseNormalizer(mustJSON(t, c.norm))
		require.NoError(t, err)
		got := c.in
		if n != nil {
			got = n.normalize(c.in)
		}
		assert.Equal(t, c.want, got, "%v on %q", c.norm, c.in)
	}
}

func TestAddedTokens(t *testing.T) {
	vocab := map[string]int{"[UNK]": 0, "a": 1, "b": 2}
	tok := build(t, map[string]any{
		"added_tokens": []map[string]any{
			{"id": 10, "content": "<x>", "rstrip": true},
			{"id": 11, "content": "<x>>"},
			{"id": 12, "content": "tok", "single_word": true},
			{"id": 13, "content": "B", "normalized": true}, // matched after lowercasing, as "b"
		},
		"normalizer":    map[string]any{"type": "Lowercase"},
		"pre_tokenizer": map[string]any{"type": "WhitespaceSplit"},
		"model":         map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "vocab": vocab},
	})
	cases := []struct {
		in   string
		want []int32
	}{
		{"a<x>   a", []int32{1, 10, 1}}, // rstrip takes the spaces after
		{"a<x>>a", []int32{1, 11, 1}},   // the longer of two tokens at one place
		{"a tok a", []int32{1, 12, 1}},  // a word of its own
		{"atok a", []int32{0, 1}},       // inside a word: no match, "atok" is unknown
		{"a B b", []int32{1, 13, 13}},   // normalized tokens match the normalised text
		{"<x><x>", []int32{10, 10}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, tok.Encode(c.in, 0), "%q", c.in)
	}
}

func TestParseErrors(t *testing.T) {
	wp := map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "vocab": map[string]int{"[UNK]": 0}}
	cases := []struct {
		parts map[string]any
		want  string
	}{
		{map[string]any{"model": map[string]any{"type": "BPE", "vocab": map[string]int{"a": 0}}}, `tokenizer model "BPE" is not supported`},
		{map[string]any{}, "has no model"},
		{map[string]any{"model": map[string]any{"type": "WordPiece", "vocab": map[string]int{}}}, "vocabulary is empty"},
		{map[string]any{"model": map[string]any{"type": "WordPiece", "unk_token": "<unk>", "vocab": map[string]int{"a": 0}}}, `unknown token "<unk>"`},
		{map[string]any{"model": map[string]any{"type": "Unigram", "vocab": [][2]any{{"a", -1}}}}, "no valid unk_id"},
		{map[string]any{"model": map[string]any{"type": "Unigram", "unk_id": 0, "vocab": [][2]any{{"a", -1}}, "byte_fallback": true}}, "byte fallback"},
		{map[string]any{"model": wp, "normalizer": map[string]any{"type": "Nmt"}}, `normalizer "Nmt" is not supported`},
		{map[string]any{"model": wp, "normalizer": map[string]any{"type": "Precompiled", "precompiled_charsmap": "!!"}}, "not base64"},
		{map[string]any{"model": wp, "pre_tokenizer": map[string]any{"type": "ByteLevel"}}, `pre-tokenizer "ByteLevel" is not supported`},
		{map[string]any{"model": wp, "post_processor": map[string]any{"type": "TemplateProcessing", "single": []any{map[string]any{"SpecialToken": map[string]any{"id": "[X]"}}}}}, `special token "[X]" is not defined`},
		{map[string]any{"model": wp, "post_processor": map[string]any{"type": "Weird"}}, `post-processor "Weird" is not supported`},
	}
	for _, c := range cases {
		_, err := Parse(mustJSON(t, c.parts))
		assert.ErrorContains(t, err, c.want, "%v", c.parts)
	}
	_, err := Parse([]byte("{"))
	assert.ErrorContains(t, err, "malformed tokenizer.json")
	_, err = Load("testdata/none.json")
	assert.Error(t, err)
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return data
}

// FuzzEncode: any text gives ids the vocabulary has, within the limit.
func FuzzEncode(f *testing.F) {
	for _, s := range []string{"unaffable", "Héllo, wörld! <mask>", "中文\u0000\uFFFD", "abc ## [SEP]", "\xff\xfe"} {
		f.Add(s, 5)
	}
	f.Fuzz(func(t *testing.T, s string, limit int) {
		limit = max(0, limit%64)
		classic := map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "WhitespaceSplit"}, map[string]any{"type": "Metaspace", "add_prefix_space": true}}}
		for _, tok := range []*Tokenizer{first(bertTokenizer(t, map[string]any{"type": "BertNormalizer"})), build(t, unigramParts(classic))} {
			ids := tok.Encode(s, limit)
			if limit >= tok.Specials() && limit > 0 && len(ids) > limit {
				t.Fatalf("%d ids over the limit %d", len(ids), limit)
			}
			for _, id := range ids {
				if id < 0 || id > tok.MaxID() {
					t.Fatalf("id %d out of range", id)
				}
			}
		}
	})
}

func first[A, B any](a A, _ B) A { return a }

package tokenizer

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/embed/embedtest"
)

// compareIDs checks that tok gives, for every reference text, exactly the
// ids the Hugging Face tokenizers library gave (testdata/embedref).
func compareIDs(t *testing.T, tok *Tokenizer, idsFile string, maxLen int) {
	texts := embedtest.RefTexts(t)
	want := embedtest.RefIDs(t, idsFile)
	require.Len(t, want, len(texts))
	bad := 0
	for i, text := range texts {
		got := tok.Encode(text.Text, maxLen)
		if !slices.Equal(got, want[i]) {
			bad++
			if bad <= 5 {
				t.Errorf("%s (%q):\n got %v\nwant %v", text.ID, clip(text.Text), clip32(got), clip32(want[i]))
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d texts differ from the reference", bad, len(texts))
	}
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

func clip32(ids []int32) []int32 {
	if len(ids) > 40 {
		return ids[:40]
	}
	return ids
}

// TestWordPieceMatchesReference: all-MiniLM-L6-v2's tokenizer.json (BERT
// uncased WordPiece) against the tokenizers library on 477 texts: SciFact,
// VitePress English and Japanese, and hard cases (accents, full-width
// forms, emoji, control characters, literal special tokens, very long
// words), untruncated and truncated at the model's 256.
func TestWordPieceMatchesReference(t *testing.T) {
	tok, err := Load(filepath.Join(embedtest.LocalModel(t), "tokenizer.json"))
	require.NoError(t, err)
	t.Run("full", func(t *testing.T) { compareIDs(t, tok, "minilm-ids-full.tsv.gz", 0) })
	t.Run("truncated", func(t *testing.T) { compareIDs(t, tok, "minilm-ids.tsv.gz", 256) })
}

// TestUnigramMatchesReference: an XLM-R style tokenizer.json (SentencePiece
// unigram, nmt_nfkc precompiled charsmap, WhitespaceSplit + Metaspace,
// <s> ... </s>) against the tokenizers library on the same texts.
func TestUnigramMatchesReference(t *testing.T) {
	tok := loadGz(t, embedtest.RefPath(t, "unigram-tokenizer.json.gz"))
	compareIDs(t, tok, "unigram-ids.tsv.gz", 0)
}

func loadGz(t *testing.T, path string) *Tokenizer {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	z, err := gzip.NewReader(f)
	require.NoError(t, err)
	data, err := io.ReadAll(z)
	require.NoError(t, err)
	tok, err := Parse(data)
	require.NoError(t, err)
	return tok
}

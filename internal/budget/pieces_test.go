package budget

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dlclark/regexp2/v2"
	"github.com/tiktoken-go/tokenizer"
)

// cl100kPattern is the tokenizer library's pre-tokenizer for cl100k_base,
// which nextCl100kPiece must cut exactly as.
const cl100kPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// texts are what the tests cut and count: the project's documentation
// (English and Japanese prose, code, tables) and random strings drawn from
// the characters each alternative of the pattern turns on.
func texts(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, pat := range []string{"../../docs/*.md", "../../docs/ja/*.md", "../../README.md", "*.go"} {
		files, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(b))
		}
	}
	if len(out) < 10 {
		t.Fatalf("found %d documents to test with", len(out))
	}
	alphabet := []string{"'", "s", "S", "t", "re", "RE", "v", "e", "m", "l", "L", "d", "a", "Z", "é", "e\u0301",
		"日", "本", "カ", "ー", "。", "、", "1", "23", "٣", "Ⅻ", "４", "½", " ", "  ", "\t", "\n", "\r", "\r\n",
		"\v", "\f", "\u0085", "\u00a0", "\u3000", "\u2028", ".", ",", "(", ")", "!", "_", "-", "/", "\\", "\"",
		"{", "}", "`", "#", "*", "🙂", "\u200d", "\u0301"}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 20000 {
		var b strings.Builder
		for range 1 + rng.IntN(12) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		out = append(out, b.String())
	}
	return out
}

func TestCl100kPiecesMatchTheLibrarysPattern(t *testing.T) {
	re := regexp2.MustCompile(cl100kPattern, regexp2.None)
	for _, text := range texts(t) {
		var want []string
		m, err := re.FindStringMatch(text)
		for ; err == nil && m != nil; m, err = re.FindNextMatch(m) {
			want = append(want, m.String())
		}
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for i := 0; i < len(text); {
			j := nextCl100kPiece(text, i)
			if j <= i {
				t.Fatalf("%q: no progress at byte %d", text, i)
			}
			got = append(got, text[i:j])
			i = j
		}
		if !slices.Equal(got, want) {
			for k := range min(len(got), len(want)) {
				if got[k] != want[k] {
					t.Fatalf("%q: piece %d is %q, the pattern cuts %q", short(text), k, got[k], want[k])
				}
			}
			t.Fatalf("%q: %d pieces, the pattern cuts %d", short(text), len(got), len(want))
		}
	}
}

// TestCountMatchesTheLibrary counts every text with a Counter twice (the
// pieces first counted, then remembered) and with the library alone, and
// checks that counters share what they remember.
func TestCountMatchesTheLibrary(t *testing.T) {
	lib, err := tokenizer.Get(tokenizer.Cl100kBase)
	if err != nil {
		t.Fatal(err)
	}
	c := counter(t, 0)
	c.pieces.mu.Lock()
	c.pieces.n = nil // forget what other tests counted
	c.pieces.mu.Unlock()
	all := texts(t)
	for round := range 2 {
		for _, text := range all {
			want, err := lib.Count(text)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Raw(text); got != want {
				t.Fatalf("round %d: %q counts %d tokens, the library %d", round, short(text), got, want)
			}
		}
	}
	if len(c.pieces.n) == 0 {
		t.Error("no piece was remembered")
	}
	if other := counter(t, 0.2); other.pieces != c.pieces || Default().pieces != c.pieces {
		t.Error("cl100k_base counters do not share their pieces")
	}
	// Invalid UTF-8 is counted by the library as it stands.
	bad := "caf\xe9 \xff\xfe ok"
	if want, _ := lib.Count(bad); c.Raw(bad) != want {
		t.Errorf("invalid UTF-8 counts %d, the library %d", c.Raw(bad), want)
	}
}

func short(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// BenchmarkCount counts the project's documentation with the Counter (its
// pieces remembered after the first pass) and with the library alone.
func BenchmarkCount(b *testing.B) {
	docs, _ := filepath.Glob("../../docs/*.md")
	var text strings.Builder
	for _, f := range docs {
		d, _ := os.ReadFile(f)
		text.Write(d)
	}
	s := text.String()
	lib, err := tokenizer.Get(tokenizer.Cl100kBase)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("library", func(b *testing.B) {
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			if _, err := lib.Count(s); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("counter", func(b *testing.B) {
		c, err := New(Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			c.Raw(s)
		}
	})
}

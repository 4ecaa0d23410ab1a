package ipadic

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/ikawaha/kagome-dict/ipa"
	kagome "github.com/ikawaha/kagome/v2/tokenizer"

	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// japaneseRuns returns the runs of kanji and kana in text, as analyze
// gives them to the segmenter.
func japaneseRuns(text string) []string {
	var runs []string
	var b strings.Builder
	for _, r := range text {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) || r == 'ー' {
			b.WriteRune(r)
			continue
		}
		if b.Len() > 0 {
			runs = append(runs, b.String())
			b.Reset()
		}
	}
	if b.Len() > 0 {
		runs = append(runs, b.String())
	}
	return runs
}

// TestSameWordsAsKagome segments every run of Japanese in the Japanese
// VitePress docs (and a few texts of other scripts) with the flat
// dictionary and with kagome and its own IPA dictionary in search mode,
// and wants the same words, classes and IDs.
func TestSameWordsAsKagome(t *testing.T) {
	texts := []string{
		"すもももももももものうち", "東京特許許可局長今日急遽休暇許可拒否", "インポート", "ポート",
		"ホットモジュールリプレースメント", "ビルドツール", "ｱｲｳ", "Ｇｏ言語", "ABCあいう123", "①②③",
		"쿠키와 서명", "🍣寿司", "\uFFFD不正", "ー", "ヴァ",
	}
	files, _ := filepath.Glob(filepath.Join(testenv.Shared(t, "vitepress-docs"), "ja", "*", "*.md"))
	more, _ := filepath.Glob(filepath.Join(testenv.Shared(t, "vitepress-docs"), "ja", "*.md"))
	files = append(files, more...)
	testenv.Need(t, len(files) > 0, "the Japanese VitePress docs are not under vitepress-docs/ja")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, japaneseRuns(string(data))...)
	}
	ref, err := kagome.New(ipa.DictShrink(), kagome.OmitBosEos())
	if err != nil {
		t.Fatal(err)
	}
	d := Load()
	words := 0
	for _, text := range texts {
		want := ref.Analyze(text, kagome.Search)
		got := d.Tokens(text)
		if len(got) != len(want) {
			t.Fatalf("%q: %d words, kagome %d: %v vs %v", text, len(got), len(want), surfaces(got), want)
		}
		for i, w := range want {
			g := got[i]
			if g.Surface != w.Surface || g.Position != w.Position || int(g.Class) != int(w.Class) || g.ID != w.ID {
				t.Fatalf("%q word %d: %+v, kagome %q at %d class %v id %d", text, i, g, w.Surface, w.Position, w.Class, w.ID)
			}
			if g.Class == Known {
				pos := w.POS()
				if got, want := d.Kind(g.ID), kindOf(pos); got != want {
					t.Fatalf("%q: kind of %q is %d, want %d (%v)", text, g.Surface, got, want, pos)
				}
			}
		}
		words += len(got)
	}
	t.Logf("%d runs, %d words, all as kagome segments them", len(texts), words)
}

func kindOf(pos []string) Kind {
	p, sub := "", ""
	if len(pos) > 0 {
		p = pos[0]
	}
	if len(pos) > 1 {
		sub = pos[1]
	}
	switch p {
	case "名詞":
		switch sub {
		case "非自立", "代名詞", "接尾", "特殊":
			return Other
		}
		return Noun
	case "動詞", "形容詞":
		if sub == "自立" {
			return Inflected
		}
	case "感動詞":
		return Interjection
	}
	return Other
}

func surfaces(ts []Token) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Surface
	}
	return out
}

func TestInPlace(t *testing.T) {
	d := Load()
	testenv.Platform(t, littleEndian, "big-endian: the dictionary is decoded, by design")
	if !d.InPlace() {
		t.Errorf("the dictionary was copied into the heap, not read in place: a section of ipadic.bin is misaligned")
	}
}

func TestLookup(t *testing.T) {
	d := Load()
	for _, c := range []struct {
		s    string
		ok   bool
		kind Kind
	}{
		{"ポート", true, Noun}, {"インポート", false, Other}, {"ツール", true, Noun}, {"走る", true, Inflected}, {"は", true, Other}, {"", false, Other},
	} {
		k, ok := d.Lookup(c.s)
		if ok != c.ok || k != c.kind {
			t.Errorf("Lookup(%q) = %d, %v; want %d, %v", c.s, k, ok, c.kind, c.ok)
		}
	}
}

func TestParseRejectsBadImages(t *testing.T) {
	for name, img := range map[string]string{
		"empty":     "",
		"magic":     "NOTADICT" + image[8:],
		"truncated": image[:100],
	} {
		if _, err := parse(img); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

func BenchmarkLoadAndSegment(b *testing.B) {
	for b.Loop() {
		d, err := parse(image)
		if err != nil {
			b.Fatal(err)
		}
		d.Tokens("設定ファイルを作成する方法")
	}
}

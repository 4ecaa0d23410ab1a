package analyze

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ikawaha/kagome-dict/ipa"
	kagome "github.com/ikawaha/kagome/v2/tokenizer"

	"github.com/sagasu-dev/sagasu/internal/analyze/ipadic"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// kagomeSegmenter segments with kagome and its own IPA dictionary, decoded
// as the analyzer did before the dictionary was read in place.
func kagomeSegmenter(t testing.TB) segmenter {
	tok, err := kagome.New(ipa.DictShrink(), kagome.OmitBosEos())
	if err != nil {
		t.Fatal(err)
	}
	return func(dst []ipadic.Token, run string) []ipadic.Token {
		for _, w := range tok.Analyze(run, kagome.Search) {
			c := ipadic.Known
			if w.Class == kagome.UNKNOWN {
				c = ipadic.Unknown
			}
			dst = append(dst, ipadic.Token{Surface: w.Surface, Position: w.Position, Class: c, ID: w.ID})
		}
		return dst
	}
}

// TestSameTermsAsKagome analyses every page of the Japanese VitePress docs
// with the dictionary read in place and with kagome's decoded one, for each
// analyzer version that reads Japanese as words, and wants the same terms.
func TestSameTermsAsKagome(t *testing.T) {
	dir := filepath.Join(testenv.Shared(t, "vitepress-docs"), "ja")
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".md" {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Need(t, len(files) > 0, "the Japanese VitePress docs have no pages under vitepress-docs/ja")
	seg := kagomeSegmenter(t)
	for _, v := range []int{2, 3} {
		ours := New(Options{Version: v})
		ref := New(Options{Version: v})
		ref.seg = seg
		n := 0
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got, want := ours.Terms(string(data)), ref.Terms(string(data))
			if !slices.Equal(got, want) {
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Fatalf("version %d, %s: term %d is %q, kagome's %q", v, f, i, got[i], want[i])
					}
				}
				t.Fatalf("version %d, %s: %d terms, kagome's %d", v, f, len(got), len(want))
			}
			n += len(got)
		}
		t.Logf("version %d: %d pages, %d terms, the same", v, len(files), n)
	}
}

// From version 3 a katakana word is a word: a known one matches itself,
// not a longer loanword that happens to contain it; an unknown compound
// is found by its parts, and an unknown word by its bigrams.
func TestKatakanaWords(t *testing.T) {
	a := New(Options{})
	docs := map[string]string{
		"import":  "モジュールをインポートします。",
		"port":    "ポートを変更します。",
		"tool":    "ビルドツールを設定します。",
		"cache":   "キャッシュディレクトリを削除します。",
		"deploy":  "サイトをデプロイします。",
		"sitemap": "サイトマップを生成します。",
	}
	terms := map[string]map[string]bool{}
	for name, text := range docs {
		terms[name] = setOf(a.Terms(text))
	}
	finds := func(query string) []string {
		var out []string
		for name, ts := range terms {
			all := true
			for _, q := range a.QueryTerms(query) {
				all = all && ts[q]
			}
			if all {
				out = append(out, name)
			}
		}
		slices.Sort(out)
		return out
	}
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"ポート", []string{"port"}},
		{"インポート", []string{"import"}},
		// Not a word of the dictionary, but made of two: found by either.
		{"キャッシュディレクトリ", []string{"cache"}},
		{"ディレクトリ", []string{"cache"}},
		{"キャッシュ", []string{"cache"}},
		// ビルド is not in the dictionary either: bigrams, on both sides.
		{"ビルドツール", []string{"tool"}},
		{"ビルド", []string{"tool"}},
		{"デプロイ", []string{"deploy"}},
		{"サイトマップ", []string{"sitemap"}},
	} {
		if got := finds(c.query); !slices.Equal(got, c.want) {
			t.Errorf("%s finds %v, want %v (terms %q)", c.query, got, c.want, a.QueryTerms(c.query))
		}
	}
	// Version 2 cut インポート into イン and ポート: ポート found it.
	v2 := New(Options{Version: 2})
	if !setOf(v2.Terms(docs["import"]))["ポート"] {
		t.Errorf("version 2 no longer reads インポート as イン, ポート: indexes pinned to it would change")
	}
}

// BenchmarkSegmenters analyses the Japanese VitePress docs with the
// dictionary read in place and with kagome's decoded one.
func BenchmarkSegmenters(b *testing.B) {
	texts, n := japaneseDocs(b)
	for name, seg := range map[string]segmenter{"inplace": nil, "kagome": kagomeSegmenter(b)} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(n)
			for b.Loop() {
				a := New(Options{}) // no memo carried over
				a.seg = seg
				for _, s := range texts {
					a.Terms(s)
				}
			}
		})
	}
}

// A greeting is a word to search for from version 3 (version 2 dropped
// interjections with the particles, so こんにちは found nothing).
func TestInterjections(t *testing.T) {
	a := New(Options{})
	if got := a.QueryTerms("こんにちは"); !slices.Equal(got, []string{"こんにちは"}) {
		t.Errorf("こんにちは: %q", got)
	}
	if got := a.Terms("ありがとうございます。"); !slices.Contains(got, "ありがとう") {
		t.Errorf("ありがとうございます: %q", got)
	}
	if got := New(Options{Version: 2}).QueryTerms("こんにちは"); len(got) != 0 {
		t.Errorf("version 2 changed: こんにちは gives %q", got)
	}
}

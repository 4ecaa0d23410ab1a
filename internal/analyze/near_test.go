package analyze

import (
	"slices"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/analyze/ipadic"
)

func TestTermsNear(t *testing.T) {
	a := New(Options{})
	// The morphological analyser must not run: it would panic.
	a.seg = func([]ipadic.Token, string) []ipadic.Token { panic("TermsNear analysed Japanese with the dictionary") }
	for _, c := range []struct {
		text, query string
		want        []string
	}{
		// Text without Japanese reads as Terms reads it.
		{"Configure the dynamic routes", "dynamic routes", []string{"configur", "dynam", "rout"}},
		// Japanese: the query's terms where they are written, a filler for
		// every two other characters.
		{"設定ファイルを作成します", "設定 ファイル 作成", []string{"設定", "ファイル", "作成", ""}},
		{"ファイルの場所を指定して設定", "設定 ファイル", []string{"ファイル", "", "", "", "", "設定"}},
		// A katakana term is not found inside a longer katakana word.
		{"モジュールをインポートする", "ポート", []string{"", "", "", "", "", ""}},
		{"ポートを変更", "ポート", []string{"ポート", ""}},
		// Mixed: English words are analysed, Japanese located.
		{"VitePress の設定", "設定", []string{"vitepress", "設定"}},
	} {
		q := []string{}
		for _, w := range strings.Fields(c.query) {
			q = append(q, New(Options{}).QueryTerms(w)...)
		}
		got := a.TermsNear(c.text, q)
		if !slices.Equal(got, c.want) {
			t.Errorf("TermsNear(%q, %q) = %q, want %q", c.text, q, got, c.want)
		}
	}
	// Without Japanese it is Terms.
	for _, text := range []string{"The quick brown foxes' dens", "中文文本 한국어", ""} {
		if got, want := a.TermsNear(text, []string{"fox"}), a.Terms(text); !slices.Equal(got, want) {
			t.Errorf("TermsNear(%q) = %q, Terms %q", text, got, want)
		}
	}
}

package embed_test

import (
	"slices"
	"testing"
	"unicode"

	"github.com/sagasu-dev/sagasu/internal/embed"
)

// runeVocab reads text a character a token and knows only the scripts
// given; the rest is the unknown token. wordVocab reads four characters a
// token and knows everything.
type runeVocab struct{ knows []*unicode.RangeTable }

func (v runeVocab) CountTokens(text string) (tokens, unknown int) {
	for _, r := range text {
		if r == ' ' {
			continue
		}
		tokens++
		if !unicode.In(r, v.knows...) {
			unknown++
		}
	}
	return tokens, unknown
}

type wordVocab struct{}

func (wordVocab) CountTokens(text string) (int, int) { return (len([]rune(text)) + 3) / 4, 0 }

func TestFit(t *testing.T) {
	ja := "設定ファイルを作成して、サイトのタイトルと説明を書きます。テーマの色はあとから変えられます。"
	en := "Create the config file and write the title and the description of the site."
	texts := []string{}
	for range 8 {
		texts = append(texts, ja+" VitePress", en)
	}
	for _, c := range []struct {
		name string
		v    embed.Vocabulary
		poor []string
	}{
		{"english model", runeVocab{knows: []*unicode.RangeTable{unicode.Latin, unicode.Han}}, []string{"ja", "en"}},
		{"multilingual model", wordVocab{}, nil},
	} {
		var fit embed.Fit
		for _, text := range texts {
			fit.Add(c.v, text)
		}
		if got := fit.Poor(); !slices.Equal(got, c.poor) {
			t.Errorf("%s: poor for %v, want %v (%+v)", c.name, got, c.poor, fit.Langs)
		}
		if lf := fit.Langs["ja"]; lf.Texts != 8 || lf.Chars != 8*len([]rune(ja))-8*3 {
			// the 3 punctuation marks are not counted
			t.Errorf("%s: Japanese counted as %+v", c.name, lf)
		}
	}
	for q, want := range map[string]string{"設定ファイル": "ja", "ポート": "ja", "配置文件": "zh", "설정 파일": "ko", "config file": "en", "設定 config": "zh"} {
		if got := embed.Language(q); got != want {
			t.Errorf("Language(%q) = %q, want %q", q, got, want)
		}
	}
}

package analyze

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/testenv"
)

func TestTerms(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"empty", "", nil},
		{"only separators", " \t\n.,;:!?()[]{}<>-_/\\|@#$%^&*+=~`\"", nil},
		{"stems and stopwords", "The cats are running to the connected networks",
			[]string{"cat", "run", "connect", "network"}},
		{"repeats kept in order", "search searching searched", []string{"search", "search", "search"}},
		{"case", "HELLO World hElLo", []string{"hello", "world", "hello"}},
		{"hyphen and numbers", "covid-19 in 2020 cost $3.14", []string{"covid", "19", "2020", "cost", "3", "14"}},
		{"letters and digits stay together", "mp3 h2o IL-6 p53", []string{"mp3", "h2o", "il", "6", "p53"}},
		{"possessive", "the user's settings and users' files", []string{"user", "set", "user", "file"}},
		{"n't", "don't doesn't isn't couldn't", []string{"do", "doe", "could"}},
		{"can't won't shan't", "can't won't shan't", []string{"can", "shall"}},
		{"clitics", "we're you've I'll she'd I'm they're", []string{"we", "you", "i", "she", "i"}},
		{"curly apostrophe", "user’s don’t", []string{"user", "do"}},
		{"other apostrophes join", "O'Brien at five o'clock", []string{"obrien", "five", "oclock"}},
		{"apostrophes at edges split", "'quoted' 'tis the 90's rock'n'roll 5'10",
			[]string{"quot", "ti", "90", "rocknrol", "5", "10"}},
		{"diacritics", "café naïve Ångström Straße Æsir Øre Łódź", []string{"cafe", "naiv", "angstrom", "strass", "aesir", "or", "lodz"}},
		{"decomposed diacritic", "cafe\u0301 q\u0303", []string{"cafe", "q"}},
		{"full-width ASCII", "ＡＢＣ１２３ Ｗｏｒｌｄ", []string{"abc123", "world"}},
		{"ligature and superscript", "ﬁle x² ①", []string{"file", "x2", "1"}},
		{"greek and cyrillic folded, not stemmed", "ΟΔΟΣ Москва", []string{"οδοσ", "москва"}},
		{"devanagari keeps its vowel signs", "हिन्दी", []string{"हिन्दी"}},
		{"long token dropped", "ok " + strings.Repeat("x", 65) + " fine", []string{"ok", "fine"}},
		{"64 bytes kept", strings.Repeat("f", 64), []string{strings.Repeat("f", 64)}},
		{"invalid utf-8 separates", "abc\xffdef\xc3", []string{"abc", "def"}},
		{"japanese: content words", "VitePressの設定方法を理解する", []string{"vitepress", "設定", "方法", "理解"}},
		{"japanese sentence", "設定ファイルを作成します", []string{"設定", "ファイル", "作成"}},
		{"japanese endings make no terms", "サイトマップを生成する方法を教えてください", []string{"サイト", "マップ", "生成", "方法", "教"}},
		{"verbs and adjectives as stems", "使う 使って 使わない 読み込む 読み込まれる 新しい 新しく", []string{"使", "使", "使", "読み込", "読み込", "新", "新"}},
		{"nouns with okurigana as stems", "切り替えと見出し", []string{"切り替", "見出"}},
		{"unknown words as bigrams", "フロントマターを書く", []string{"フロ", "ロン", "ント", "トマ", "マタ", "ター", "書"}},
		{"half-width katakana", "ｶﾀｶﾅ ﾃﾞｰﾀ", []string{"カタカナ", "データ"}},
		{"single han kept, single hiragana dropped", "本を読む ア", []string{"本", "読", "ア"}},
		{"prolonged sound mark", "サーバー ー", []string{"サーバー"}},
		{"digits split cjk", "第3章", []string{"第", "3", "章"}},
		{"kanji without kana is read as chinese", "中文分词", []string{"中文", "文分", "分词"}},
		{"japanese kanji in japanese text", "中文分词を使う", []string{"文", "词", "使"}},
		{"korean", "한국어 검색", []string{"한국", "국어", "검색"}},
		{"korean in japanese text stays bigrams", "韓国語は한국어です", []string{"韓国", "한국", "국어"}},
		{"variation selector inside han run", "葛\U000E0100城", []string{"葛城"}},
	}
	a := New(Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, a.Terms(tt.text))
		})
	}
}

// Version 1 reads every CJK run as bigrams; it stays, for indexes pinned to it.
func TestTermsVersion1(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"japanese", "VitePressの設定方法を理解する", []string{"vitepress", "設定", "定方", "方法", "理解", "する"}},
		{"japanese sentence", "設定ファイルを作成します", []string{"設定", "ファ", "ァイ", "イル", "作成", "しま", "ます"}},
		{"half-width katakana", "ｶﾀｶﾅ ﾃﾞｰﾀ", []string{"カタ", "タカ", "カナ", "デー", "ータ"}},
		{"single han and katakana kept, single hiragana dropped", "本を読む ア", []string{"本", "読", "ア"}},
		{"prolonged sound mark", "サーバー ー", []string{"サー", "ーバ", "バー"}},
		{"chinese", "中文分词", []string{"中文", "文分", "分词"}},
		{"korean", "한국어 검색", []string{"한국", "국어", "검색"}},
		{"english as in version 2", "The cats are running", []string{"cat", "run"}},
	}
	a := New(Options{Version: 1})
	assert.Equal(t, "analyze/1", a.Signature())
	assert.False(t, a.Japanese())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, a.Terms(tt.text))
		})
	}
}

func TestParse(t *testing.T) {
	for _, sig := range []string{"analyze/1", "analyze/2", "analyze/3", "analyze/1+nostem", "analyze/2+nostop", "analyze/3+nostem+nostop"} {
		a, err := Parse(sig)
		require.NoError(t, err, sig)
		assert.Equal(t, sig, a.Signature())
	}
	a, err := Parse("analyze/1")
	require.NoError(t, err)
	assert.Equal(t, New(Options{Version: 1}).Terms("設定ファイルを作成します"), a.Terms("設定ファイルを作成します"))
	for _, bad := range []string{"", "analyze/", "analyze/0", "analyze/4", "analyze/x", "analyze/2+nostop+nostem", "analyze/2+nostem+nostem", "analyze/2+fast", "bm25/2"} {
		_, err := Parse(bad)
		assert.ErrorIs(t, err, ErrUnknownSignature, bad)
	}
}

func TestPinned(t *testing.T) {
	a := New(Options{})
	same, up, err := a.Pinned(a.Signature())
	require.NoError(t, err)
	assert.Same(t, a, same)
	assert.False(t, up)

	old, up, err := a.Pinned("analyze/1")
	require.NoError(t, err)
	assert.True(t, up, "an index of version 1 is upgraded")
	assert.Equal(t, "analyze/1", old.Signature())

	_, _, err = a.Pinned("analyze/1+nostem")
	assert.ErrorContains(t, err, `built by analyzer "analyze/1+nostem"`, "another variant is not upgraded into this one")
	_, _, err = New(Options{Version: 1}).Pinned("analyze/2")
	assert.ErrorContains(t, err, "built by analyzer", "a newer index is not downgraded")
	_, _, err = a.Pinned("analyze/9")
	assert.ErrorIs(t, err, ErrUnknownSignature)
	assert.ErrorContains(t, err, "upgrade sagasu")
}

// A Japanese question shares its content words with the text that answers
// it, and no particle or ending with text that does not.
func TestJapaneseContentWords(t *testing.T) {
	a := New(Options{})
	answer := setOf(a.Terms("サイトマップの生成：VitePress はサイトの sitemap.xml を生成できます。有効にするには、設定に sitemap を追加します。"))
	other := setOf(a.Terms("カスタムテーマを使うには、テーマのディレクトリを作成してください。"))
	q := a.QueryTerms("サイトマップを生成する方法を教えてください")
	for _, term := range []string{"サイト", "マップ", "生成"} {
		assert.Contains(t, q, term)
		assert.True(t, answer[term], term)
	}
	for _, term := range q {
		assert.False(t, other[term], "the question shares %q with an unrelated text", term)
	}
	// Inflected forms of a verb make one term.
	assert.Equal(t, a.QueryTerms("変える"), a.QueryTerms("変えたい"))
	assert.Equal(t, a.QueryTerms("読み込む"), a.QueryTerms("読み込まれます"))
	// So are a verb and the noun made of it.
	assert.Equal(t, a.QueryTerms("データの読み込み"), a.QueryTerms("データを読み込む"))

	// Words are the content words as written; each analyses to its term.
	text := "ビルド時のデータ読み込みを設定する"
	words := a.Words(text)
	assert.Equal(t, []string{"ビルド", "データ読み込み", "設定"}, words)
	all := a.QueryTerms(text)
	for _, w := range words {
		for _, term := range a.QueryTerms(w) {
			assert.Contains(t, all, term, w)
		}
	}
	assert.Nil(t, New(Options{Version: 1}).Words("データの読み込み"))
}

// A run of Japanese longer than the analyser takes at once is cut into
// pieces, at word ends, and nothing is lost or made up.
func TestLongJapaneseRun(t *testing.T) {
	a := New(Options{})
	unit := "設定ファイルを作成して表示を確認します"
	long := strings.Repeat(unit, 2*maxJapaneseRun/len(unit)+3)
	terms := a.Terms(long)
	per := a.Terms(unit)
	require.NotEmpty(t, per)
	counts := map[string]int{}
	for _, term := range terms {
		counts[term]++
	}
	for _, term := range per {
		assert.GreaterOrEqual(t, counts[term], 2*maxJapaneseRun/len(unit), term)
	}
	for term := range counts {
		assert.Contains(t, long, term)
	}
	for _, n := range []int{1, 7, 100} {
		cut := japaneseCut(long, n)
		assert.True(t, cut > 0 && cut <= max(n, 3) && utf8.ValidString(long[:cut]), "cut %d of max %d", cut, n)
	}
}

func TestHasKana(t *testing.T) {
	for s, want := range map[string]bool{
		"": false, "abc": false, "中文分词": false, "、。「」": false, "한국어": false,
		"の": true, "ア": true, "ー漢字": true, "ｶﾀｶﾅ": false, // half-width: NFKC makes it kana before the check
		"text ひらがな": true, "ゟ": true,
	} {
		assert.Equal(t, want, hasKana(s), "%q", s)
	}
}

func TestOptions(t *testing.T) {
	text := "The connected networks of the cities"
	tests := []struct {
		opt  Options
		want []string
	}{
		{Options{}, []string{"connect", "network", "citi"}},
		{Options{NoStem: true}, []string{"connected", "networks", "cities"}},
		{Options{NoStopwords: true}, []string{"the", "connect", "network", "of", "the", "citi"}},
		{Options{NoStem: true, NoStopwords: true}, []string{"the", "connected", "networks", "of", "the", "cities"}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, New(tt.opt).Terms(text), "%+v", tt.opt)
	}
	// The zero Analyzer is the default one.
	var zero Analyzer
	assert.Equal(t, tests[0].want, zero.Terms(text))
}

func TestSignature(t *testing.T) {
	assert.Equal(t, "analyze/"+Version, New(Options{}).Signature())
	assert.Equal(t, "analyze/1", New(Options{Version: 1}).Signature())
	assert.Equal(t, New(Options{}).Signature(), New(Options{Version: 99}).Signature())
	assert.Equal(t, "analyze/"+Version+"+nostem+nostop", New(Options{NoStem: true, NoStopwords: true}).Signature())
	assert.NotEqual(t, New(Options{NoStem: true}).Signature(), New(Options{NoStopwords: true}).Signature())
}

func TestStopwords(t *testing.T) {
	words := Stopwords()
	assert.True(t, slices.IsSorted(words))
	assert.GreaterOrEqual(t, len(words), 30)
	for _, w := range words {
		assert.True(t, isStopword([]byte(w)), w)
		assert.Empty(t, New(Options{}).Terms(w), w)
		assert.Equal(t, []string{w}, New(Options{NoStopwords: true, NoStem: true}).Terms(w), w)
	}
	for _, w := range []string{"", "th", "thes", "wills", "search", "whichever", "cat"} {
		assert.False(t, isStopword([]byte(w)), w)
	}
}

func TestAppendTerms(t *testing.T) {
	a := New(Options{})
	dst := []string{"keep"}
	dst = a.AppendTerms(dst, "running dogs")
	assert.Equal(t, []string{"keep", "run", "dog"}, dst)
}

func TestQueryTerms(t *testing.T) {
	a := New(Options{})
	assert.Equal(t, []string{"search", "engin", "index"}, a.QueryTerms("search engines: searching the search index"))
	assert.Empty(t, a.QueryTerms("the of and"))
	assert.Equal(t, []string{"word"}, a.QueryTerms("word"))
}

// A Japanese query must find the Japanese text it describes.
func TestJapaneseQueryMatchesText(t *testing.T) {
	a := New(Options{})
	doc := setOf(a.Terms("このガイドでは、設定ファイルを作成します。"))
	for _, q := range []string{"設定ファイル", "ファイル作成", "ｾｯﾃｲ 設定"} {
		var shared []string
		for _, term := range a.QueryTerms(q) {
			if doc[term] {
				shared = append(shared, term)
			}
		}
		assert.NotEmpty(t, shared, "query %q shares no term with the text", q)
	}
	// Every term of the exact phrase is in the text.
	for _, term := range a.QueryTerms("設定ファイル") {
		assert.True(t, doc[term], term)
	}
}

func TestConcurrentUseIsDeterministic(t *testing.T) {
	texts := []string{
		"The quick brown fox jumps over the lazy dog's back.",
		"VitePressの設定方法を理解する",
		"café naïve ＡＢＣ１２３ covid-19 don't",
		strings.Repeat("generalization oscillators ", 50),
	}
	a := New(Options{})
	want := make([][]string, len(texts))
	for i, s := range texts {
		want[i] = a.Terms(s)
	}
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 200; n++ {
				i := (g + n) % len(texts)
				if got := a.Terms(texts[i]); !slices.Equal(got, want[i]) {
					t.Errorf("Terms(%q) = %q, want %q", texts[i], got, want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestAllocations(t *testing.T) {
	testenv.Platform(t, !raceEnabled, "the race detector makes sync.Pool drop buffers at random")
	a := New(Options{})
	text := strings.Repeat("Alterations of the architecture of cerebral white matter in the developing human brain. ", 20)
	dst := make([]string, 0, 1024)
	a.AppendTerms(dst, text) // warm the pool
	allocs := testing.AllocsPerRun(100, func() { a.AppendTerms(dst[:0], text) })
	// One string for the text of all the terms; none per term.
	assert.LessOrEqual(t, allocs, 2.0)
}

func setOf(terms []string) map[string]bool {
	m := make(map[string]bool, len(terms))
	for _, t := range terms {
		m[t] = true
	}
	return m
}

// FuzzTerms checks the analyzer's promises on any text, with both the
// default and the raw analyzer (see checkTerms).
func FuzzTerms(f *testing.F) {
	for _, s := range []string{
		"", "hello world", "don't user's o'clock ''a'' a'", "covid-19 3.14",
		"VitePressの設定方法を理解する", "ｶﾀｶﾅ ＡＢＣ", "café e\u0301\u0301", "\xff\xfe\xc3",
		"ΟΔΟΣ ς", "葛\U000E0100城 ー を", strings.Repeat("yy", 40), "won't shan't can't",
	} {
		f.Add(s)
	}
	fuzzTerms(f)
}

// FuzzTermsJapanese is FuzzTerms started from Japanese text (the VitePress
// docs in Japanese when they are there), so that mutations explore kana,
// kanji, full- and half-width forms and their mixes with Latin words.
func FuzzTermsJapanese(f *testing.F) {
	for _, s := range []string{
		"設定ファイルを作成します。", "ｶﾀｶﾅとひらがなと漢字、ＡＢＣ１２３。", "VitePressの設定方法を理解する",
		"「引用」（括弧）【見出し】〜ー—", "サーバーサイドレンダリング(SSR)を使う", "㈱①㍻ｰﾞﾟ", "한국어 텍스트도",
		"日本語\u3000全角スペース\u00a0と\tタブ", "ﾃﾞｰﾀﾍﾞｰｽ", "葛\U000E0100城\uFE0F市",
	} {
		f.Add(s)
	}
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "shared", "data", "vitepress-docs", "ja", "guide", "*.md"))
	for _, p := range files[:min(len(files), 8)] {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b[:min(len(b), 4000)]))
		}
	}
	fuzzTerms(f)
}

func fuzzTerms(f *testing.F) {
	a := New(Options{})
	raw := New(Options{NoStem: true, NoStopwords: true})
	f.Fuzz(func(t *testing.T, s string) {
		checkTerms(t, a, s)
		checkTerms(t, raw, s)
		cjkSubstrings(t, raw, s)
	})
}

// checkTerms checks what every caller of an Analyzer relies on: terms are
// non-empty, valid UTF-8 without white space and at most MaxTermBytes long;
// QueryTerms are the distinct Terms in first-seen order; AppendTerms appends
// exactly Terms; and the result is the same every time, also after the
// analyzer's pooled buffers served other text.
func checkTerms(t *testing.T, an *Analyzer, s string) {
	t.Helper()
	terms := an.Terms(s)
	for _, term := range terms {
		if term == "" || !utf8.ValidString(term) || len(term) > MaxTermBytes || strings.ContainsFunc(term, unicode.IsSpace) {
			t.Fatalf("%s: bad term %q from %q: %q", an.Signature(), term, s, terms)
		}
	}
	var want []string
	seen := map[string]bool{}
	for _, term := range terms {
		if !seen[term] {
			seen[term] = true
			want = append(want, term)
		}
	}
	if q := an.QueryTerms(s); !slices.Equal(q, want) {
		t.Fatalf("%s: QueryTerms(%q) = %q, want the distinct terms %q", an.Signature(), s, q, want)
	}
	if got := an.AppendTerms([]string{"kept"}, s); len(got) == 0 || got[0] != "kept" || !slices.Equal(got[1:], terms) {
		t.Fatalf("%s: AppendTerms(kept, %q) = %q, want kept then %q", an.Signature(), s, got, terms)
	}
	an.Terms(strings.Repeat("other text 他の文章 ", 20))
	require.Equal(t, terms, an.Terms(s), "%s: not deterministic", an.Signature())
}

// cjkSubstrings checks that every term made only of CJK characters (a
// bigram or a lone character) is written in the text: in its NFKC form,
// with combining marks such as variation selectors, which a CJK run skips,
// taken out.
func cjkSubstrings(t *testing.T, an *Analyzer, s string) {
	t.Helper()
	text := strings.Map(func(r rune) rune {
		if unicode.In(r, unicode.Mn, unicode.Mc, unicode.Me) {
			return -1
		}
		return r
	}, norm.NFKC.String(strings.ToValidUTF8(s, " ")))
	for _, term := range an.Terms(s) {
		cjk := true
		for _, r := range term {
			if cl := classify(r); cl < clHan {
				cjk = false
				break
			}
		}
		if cjk && !strings.Contains(text, term) {
			t.Fatalf("CJK term %q of %q is not in its text %q", term, s, text)
		}
	}
}

// benchText is the title and text of SciFact documents (English scientific
// prose) when the corpus is there (../shared/data, as in the design), else a
// repeated abstract. It sets the benchmark's bytes per op to their length.
func benchText(b *testing.B) []string {
	texts := loadBenchText(b)
	var n int64
	for _, s := range texts {
		n += int64(len(s))
	}
	b.SetBytes(n)
	return texts
}

func loadBenchText(b *testing.B) []string {
	f, err := os.Open("../../../shared/data/scifact/corpus.jsonl")
	if err != nil {
		b.Logf("SciFact corpus not found (%v): using a built-in text", err)
		return []string{strings.Repeat("Alterations of the architecture of cerebral white matter in the developing human brain can affect cortical development and result in functional disabilities. ", 40)}
	}
	defer f.Close()
	var texts []string
	dec := json.NewDecoder(f)
	for len(texts) < 2000 {
		var doc struct{ Title, Text string }
		if err := dec.Decode(&doc); err != nil {
			break
		}
		texts = append(texts, doc.Title+"\n"+doc.Text)
	}
	return texts
}

func BenchmarkTerms(b *testing.B) {
	texts := benchText(b)
	a := New(Options{})
	dst := make([]string, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range texts {
			dst = a.AppendTerms(dst[:0], s)
		}
	}
}

func BenchmarkTermsParallel(b *testing.B) {
	texts := benchText(b)
	a := New(Options{})
	b.RunParallel(func(pb *testing.PB) {
		dst := make([]string, 0, 4096)
		for pb.Next() {
			for _, s := range texts {
				dst = a.AppendTerms(dst[:0], s)
			}
		}
	})
}

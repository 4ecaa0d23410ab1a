package analyze

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		{"japanese", "VitePressの設定方法を理解する", []string{"vitepress", "設定", "定方", "方法", "理解", "する"}},
		{"japanese sentence", "設定ファイルを作成します", []string{"設定", "ファ", "ァイ", "イル", "作成", "しま", "ます"}},
		{"half-width katakana", "ｶﾀｶﾅ ﾃﾞｰﾀ", []string{"カタ", "タカ", "カナ", "デー", "ータ"}},
		{"single han and katakana kept, single hiragana dropped", "本を読む ア", []string{"本", "読", "ア"}},
		{"prolonged sound mark", "サーバー ー", []string{"サー", "ーバ", "バー"}},
		{"digits split cjk", "第3章", []string{"第", "3", "章"}},
		{"chinese", "中文分词", []string{"中文", "文分", "分词"}},
		{"korean", "한국어 검색", []string{"한국", "국어", "검색"}},
		{"variation selector inside han run", "葛\U000E0100城", []string{"葛城"}},
	}
	a := New(Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, a.Terms(tt.text))
		})
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
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop buffers at random")
	}
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

func FuzzTerms(f *testing.F) {
	for _, s := range []string{
		"", "hello world", "don't user's o'clock ''a'' a'", "covid-19 3.14",
		"VitePressの設定方法を理解する", "ｶﾀｶﾅ ＡＢＣ", "café e\u0301\u0301", "\xff\xfe\xc3",
		"ΟΔΟΣ ς", "葛\U000E0100城 ー を", strings.Repeat("yy", 40), "won't shan't can't",
	} {
		f.Add(s)
	}
	a := New(Options{})
	raw := New(Options{NoStem: true, NoStopwords: true})
	f.Fuzz(func(t *testing.T, s string) {
		for _, an := range []*Analyzer{a, raw} {
			terms := an.Terms(s)
			set := setOf(terms)
			for _, term := range terms {
				if term == "" {
					t.Fatalf("empty term from %q: %q", s, terms)
				}
			}
			q := an.QueryTerms(s)
			seen := map[string]bool{}
			for _, term := range q {
				if !set[term] {
					t.Fatalf("query term %q of %q not in Terms %q", term, s, terms)
				}
				if seen[term] {
					t.Fatalf("query term %q repeated: %q", term, q)
				}
				seen[term] = true
			}
			if len(seen) != len(set) {
				t.Fatalf("QueryTerms %q misses some of %q", q, terms)
			}
			require.Equal(t, terms, an.Terms(s), "not deterministic")
		}
	})
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

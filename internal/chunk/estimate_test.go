package chunk

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tiktoken-go/tokenizer"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		in       string
		min, max int
	}{
		{"", 0, 0},
		{"   \t ", 0, 2},
		{"\u3000", 0, 1},
		{"a", 1, 2},
		{".", 1, 2},
		{"7", 1, 2},
		{"\xff", 1, 1},
		{"漢", 1, 2},
		{"😀", 2, 3},
		{"hello world", 2, 4},
		{"日本語のテキストです。", 10, 16},
		{"func (s *Store) Put(key string) error {", 11, 20},
		{strings.Repeat("a", 1000), 125, 500},
		{strings.Repeat(" ", 1000) + "x", 1, 100},
	}
	for _, tt := range tests {
		got := EstimateTokens(tt.in)
		assert.GreaterOrEqual(t, got, tt.min, "%.30q", tt.in)
		assert.LessOrEqual(t, got, tt.max, "%.30q", tt.in)
	}
}

// calibrationTexts returns chunk-sized texts of each kind the estimator was
// fitted on, from one source ("scifact", "vitepress" or "go"); a source
// whose data is missing skips the test (fails it under CI=true).
func calibrationTexts(t *testing.T, from string) map[string][]string {
	texts := map[string][]string{}
	chunksOf := func(name string, files []realFile) {
		for _, d := range readFiles(t, files) {
			for _, max := range []int{128, 512} {
				chunks, err := Split(d, Options{MaxTokens: max})
				require.NoError(t, err)
				for _, c := range chunks {
					texts[fmt.Sprintf("%s/%d", name, max)] = append(texts[fmt.Sprintf("%s/%d", name, max)], c.Text)
				}
			}
		}
	}
	switch from {
	case "scifact":
		f, err := os.Open(filepath.Join(testenv.SciFact(t), "corpus.jsonl"))
		require.NoError(t, err)
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for n := 0; n < 1000 && sc.Scan(); n++ {
			var rec struct{ Title, Text string }
			require.NoError(t, json.Unmarshal(sc.Bytes(), &rec))
			texts["scifact"] = append(texts["scifact"], rec.Title+"\n\n"+rec.Text)
		}
	case "vitepress":
		var en, ja []realFile
		for _, f := range vitepressFiles(t) {
			if strings.Contains(filepath.ToSlash(f.path), "/ja/") {
				ja = append(ja, f)
			} else {
				en = append(en, f)
			}
		}
		chunksOf("vitepress-en", en)
		chunksOf("vitepress-ja", ja)
	case "go":
		chunksOf("go", gorootFiles(t, 100))
	}
	return texts
}

// TestEstimateTokensAgainstCl100k measures EstimateTokens against the real
// cl100k tokenizer on chunk-sized texts: it must be at least the real count
// for nearly all of them, and not far above it on average.
func TestEstimateTokensAgainstCl100k(t *testing.T) {
	testenv.Short(t, "tokenizes real text with cl100k")
	enc, err := tokenizer.Get(tokenizer.Cl100kBase)
	require.NoError(t, err)
	for _, from := range []string{"scifact", "vitepress", "go"} {
		t.Run(from, func(t *testing.T) {
			texts := calibrationTexts(t, from)
			names := slices.Sorted(maps.Keys(texts))
			for _, name := range names {
				var ratios []float64
				sum, atLeast := 0.0, 0
				for _, text := range texts[name] {
					real, err := enc.Count(text)
					require.NoError(t, err)
					if real == 0 {
						continue
					}
					est := EstimateTokens(text)
					r := float64(est) / float64(real)
					ratios = append(ratios, r)
					sum += r
					if est >= real {
						atLeast++
					}
				}
				slices.Sort(ratios)
				n := len(ratios)
				share, mean := float64(atLeast)/float64(n), sum/float64(n)
				t.Logf("%-17s n=%5d  estimate >= cl100k: %5.1f%%  mean ratio %.3f  min %.3f  p1 %.3f  median %.3f  p99 %.3f",
					name, n, 100*share, mean, ratios[0], ratios[n/100], ratios[n/2], ratios[n*99/100])
				assert.GreaterOrEqual(t, share, 0.98, "%s: share of texts where the estimate is at least the real count", name)
				assert.LessOrEqual(t, mean, 1.30, "%s: mean ratio of estimate to real count", name)
			}
		})
	}
}

// benchText is about a megabyte of the given kind of text from the test data.
func benchText(b *testing.B, kind string) string {
	var files []realFile
	switch kind {
	case "go":
		files = gorootFiles(b, 100)
	case "en", "ja":
		for _, f := range vitepressFiles(b) {
			if strings.Contains(filepath.ToSlash(f.path), "/"+kind+"/") {
				files = append(files, f)
			}
		}
	}
	var sb strings.Builder
	for sb.Len() < 1<<20 {
		for _, d := range readFiles(b, files) {
			sb.WriteString(d.Content)
		}
	}
	return sb.String()
}

func BenchmarkEstimateTokens(b *testing.B) {
	for _, kind := range []string{"en", "ja", "go"} {
		b.Run(kind, func(b *testing.B) {
			text := benchText(b, kind)
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				EstimateTokens(text)
			}
		})
	}
}

func BenchmarkSplit(b *testing.B) {
	for _, tc := range []struct {
		kind   string
		format doc.Format
	}{{"en", doc.FormatMarkdown}, {"ja", doc.FormatMarkdown}, {"go", doc.FormatGo}} {
		b.Run(tc.kind, func(b *testing.B) {
			d := doc.Document{URI: tc.kind, Format: tc.format, Content: benchText(b, tc.kind)}
			if tc.format == doc.FormatGo {
				d.Format = doc.FormatCode // concatenated files do not parse
			}
			b.SetBytes(int64(len(d.Content)))
			for b.Loop() {
				if _, err := Split(d, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

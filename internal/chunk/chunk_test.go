package chunk

import (
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tiktoken-go/tokenizer"

	"github.com/sagasu-dev/sagasu/internal/doc"
)

func fixture(t *testing.T, name string, format doc.Format) doc.Document {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	require.NoError(t, err)
	return doc.Document{URI: "testdata/" + name, Format: format, Content: string(b)}
}

// headings returns each chunk's heading path and first line.
func headings(chunks []doc.Chunk) [][2]string {
	var out [][2]string
	for _, c := range chunks {
		first, _, _ := strings.Cut(c.Text, "\n")
		out = append(out, [2]string{c.HeadingPath(), first})
	}
	return out
}

func TestMarkdownHeadingPaths(t *testing.T) {
	d := fixture(t, "guide.md", doc.FormatMarkdown)
	tests := []struct {
		name string
		opt  Options
		want [][2]string
	}{
		{
			name: "no merging of small sections",
			opt:  Options{MinTokens: -1},
			want: [][2]string{
				{"", "---"}, // front matter on its own
				{"Harbor Guide", "# Harbor Guide"},
				// "## Routing" has no body: it joins its first subsection.
				{"Harbor Guide > Routing > Static Routes", "## Routing"},
				{"Harbor Guide > Routing > Dynamic Routes", "### Dynamic Routes"},
				{"Harbor Guide > Configuration", "Configuration"}, // setext heading
				{"Harbor Guide > Configuration > Options", "#### Options"},
				{"Appendix", "# Appendix {#appendix}"},
			},
		},
		{
			name: "default merging",
			opt:  Options{},
			want: [][2]string{
				// The small front matter joins the first section.
				{"Harbor Guide", "---"},
				{"Harbor Guide > Routing > Static Routes", "## Routing"},
				{"Harbor Guide > Routing > Dynamic Routes", "### Dynamic Routes"},
				// A small section and its small subsection: the common path.
				{"Harbor Guide > Configuration", "Configuration"},
				// Joining Appendix to Configuration would drop two levels.
				{"Appendix", "# Appendix {#appendix}"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chunks := checkSplit(t, d, tt.opt)
			assert.Equal(t, tt.want, headings(chunks))
			for _, c := range chunks {
				assert.NotContains(t, c.HeadingPath(), "comment", "a # line inside a fence became a heading")
				assert.NotContains(t, c.HeadingPath(), "neither")
			}
		})
	}
}

func TestMarkdownChunkFields(t *testing.T) {
	d := fixture(t, "guide.md", doc.FormatMarkdown)
	chunks := checkSplit(t, d, Options{MinTokens: -1})
	require.Len(t, chunks, 7)
	c := chunks[3]
	assert.Equal(t, 3, c.Index)
	assert.Equal(t, []string{"Harbor Guide", "Routing", "Dynamic Routes"}, c.Heading)
	assert.Equal(t, 28, c.StartLine)
	assert.Equal(t, 40, c.EndLine)
	assert.True(t, strings.HasPrefix(c.Text, "### Dynamic Routes\n"))
	assert.True(t, strings.HasSuffix(c.Text, "    quay: north\n~~~~"))
	assert.Equal(t, EstimateTokens(c.Text), c.Tokens)
	assert.Zero(t, c.ID)
	assert.Empty(t, c.SourceID)
}

func TestMarkdownFencedCodeKeptWhole(t *testing.T) {
	code := "```go\n" + strings.Repeat("\tfmt.Println(\"step\", i) // print the step\n", 10) + "```"
	prose := strings.Repeat("Each step prints its number so that the log shows progress. ", 12)
	content := "# Steps\n\n" + prose + "\n\n" + code + "\n\n" + prose + "\n"
	d := doc.Document{URI: "steps.md", Format: doc.FormatMarkdown, Content: content}
	require.Greater(t, EstimateTokens(content), 300)
	require.Less(t, EstimateTokens(code), 200)

	chunks := checkSplit(t, d, Options{MaxTokens: 300})
	require.Greater(t, len(chunks), 1)
	whole := 0
	for _, c := range chunks {
		assert.Equal(t, []string{"Steps"}, c.Heading)
		if strings.Contains(c.Text, code) {
			whole++
		}
	}
	assert.Equal(t, 1, whole, "the code block should lie whole in exactly one chunk")
}

func TestMarkdownOversizedSection(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Big\n\n## Part\n\n")
	for i := range 40 {
		b.WriteString("Sentence number ")
		b.WriteString(strings.Repeat("x", i%7+1))
		b.WriteString(" explains one more detail of the part. ")
		if i%5 == 4 {
			b.WriteString("\n\n")
		}
	}
	d := doc.Document{URI: "big.md", Format: doc.FormatMarkdown, Content: b.String()}
	chunks := checkSplit(t, d, Options{MaxTokens: 100, Overlap: 20})
	require.Greater(t, len(chunks), 3)
	for i, c := range chunks {
		assert.Equal(t, []string{"Big", "Part"}, c.Heading, "chunk %d", i)
		if i > 0 {
			prev := chunks[i-1]
			// Pieces of one section overlap by at most Overlap tokens,
			// starting at a sentence.
			if c.StartByte < prev.EndByte {
				overlap := d.Content[c.StartByte:prev.EndByte]
				assert.LessOrEqual(t, EstimateTokens(overlap), 20)
				assert.True(t, strings.HasPrefix(c.Text, "Sentence number"), "chunk %d starts %.30q", i, c.Text)
			}
		}
	}
}

func TestGoDeclarations(t *testing.T) {
	d := fixture(t, "store.go", doc.FormatGo)
	chunks := checkSplit(t, d, Options{})
	want := [][2]string{
		{"package store", "// Package store keeps values in memory under string keys."},
		{"const (DefaultSize, MaxSize)", "// Sizes of a store."},
		{"var ErrNotFound", "// ErrNotFound is returned by Get for a key that was never Put."},
		{"type Store", "// Store is a map guarded by a mutex."},
		{"func New", "// New returns an empty store."},
		{"func (s *Store) Put", "// Put stores value under key, replacing what was there."},
		{"func (s *Store) Get", "// Get returns the value stored under key."},
		{"type pair", "type pair[K comparable, V any] struct {"},
		{"func (p *pair[K, V]) Key", "func (p *pair[K, V]) Key() K { return p.key }"},
	}
	assert.Equal(t, want, headings(chunks))
	assert.True(t, strings.HasSuffix(chunks[0].Text, ")"), "imports belong to the package chunk")
	assert.True(t, strings.HasSuffix(chunks[6].Text, "return v, nil\n}"))
}

func TestGoOversizedDeclaration(t *testing.T) {
	var b strings.Builder
	b.WriteString("package big\n\n// Long does many things.\nfunc Long() {\n")
	for i := range 200 {
		b.WriteString("\tif x := compute(")
		b.WriteString(strings.Repeat("a", i%9+1))
		b.WriteString("); x > 0 {\n\t\tuse(x)\n\t}\n\n")
	}
	b.WriteString("}\n\nfunc Short() {}\n")
	d := doc.Document{URI: "big.go", Format: doc.FormatGo, Content: b.String()}
	chunks := checkSplit(t, d, Options{MaxTokens: 256})
	require.Greater(t, len(chunks), 4)
	for _, c := range chunks[1 : len(chunks)-1] {
		assert.Equal(t, []string{"func Long"}, c.Heading)
		// Cut between statements, not inside one.
		assert.True(t, strings.HasPrefix(strings.TrimLeft(c.Text, "\t"), "if x :=") || strings.HasPrefix(c.Text, "// Long"), "%.40q", c.Text)
	}
	assert.Equal(t, []string{"func Short"}, chunks[len(chunks)-1].Heading)
}

func TestGoParseErrorFallsBackToCode(t *testing.T) {
	d := doc.Document{URI: "broken.go", Format: doc.FormatGo, Content: "package x\n\nfunc broken( {\n\treturn\n}\n"}
	chunks := checkSplit(t, d, Options{})
	require.Len(t, chunks, 1)
	assert.Empty(t, chunks[0].Heading)
}

func TestCodeTopLevelBlocks(t *testing.T) {
	d := fixture(t, "tasks.py", doc.FormatCode)
	chunks := checkSplit(t, d, Options{MaxTokens: 120, Overlap: -1})
	require.Greater(t, len(chunks), 2)
	starts := []string{`"""Tasks`, "import ", "from ", "class ", "def ", "@staticmethod", "if __name__", "    def "}
	for _, c := range chunks {
		ok := false
		for _, s := range starts {
			ok = ok || strings.HasPrefix(c.Text, s)
		}
		assert.True(t, ok, "chunk does not start at a block: %.40q", c.Text)
		assert.Empty(t, c.Heading)
	}
}

func TestTextJapaneseSentences(t *testing.T) {
	d := fixture(t, "essay.txt", doc.FormatText)
	chunks := checkSplit(t, d, Options{MaxTokens: 60, Overlap: -1})
	require.Greater(t, len(chunks), 3)
	for _, c := range chunks {
		last, _ := utf8.DecodeLastRuneInString(c.Text)
		assert.Contains(t, "。！？", string(last), "chunk should end a sentence: %q", c.Text)
		assert.Empty(t, c.Heading)
	}

	// With overlap, each chunk after the first starts with a whole sentence
	// from the end of the chunk before it.
	chunks = checkSplit(t, d, Options{MaxTokens: 150, Overlap: 60})
	overlaps := 0
	for i := 1; i < len(chunks); i++ {
		if chunks[i].StartByte < chunks[i-1].EndByte {
			overlaps++
			before, _ := utf8.DecodeLastRuneInString(d.Content[:chunks[i].StartByte])
			assert.Contains(t, "。！？\n", string(before), "overlap should start at a sentence: %q", chunks[i].Text)
		}
	}
	assert.Positive(t, overlaps)
}

func TestEmptyContent(t *testing.T) {
	for _, content := range []string{"", " ", "\n\n\t \r\n", "\u3000\u00a0"} {
		for _, f := range []doc.Format{doc.FormatMarkdown, doc.FormatGo, doc.FormatCode, doc.FormatText, ""} {
			chunks, err := Split(doc.Document{Format: f, Content: content}, Options{})
			assert.NoError(t, err)
			assert.Empty(t, chunks, "%q as %s", content, f)
		}
	}
}

func TestOptionErrors(t *testing.T) {
	d := doc.Document{URI: "a.txt", Format: doc.FormatText, Content: "hello"}
	tests := []struct {
		name string
		d    doc.Document
		opt  Options
		want string
	}{
		{"overlap half of max", d, Options{MaxTokens: 100, Overlap: 50}, "Overlap 50 must be less than half of MaxTokens 100"},
		{"default overlap too big", d, Options{MaxTokens: 100, Overlap: 64}, "Overlap 64"},
		{"negative max", d, Options{MaxTokens: -1}, "MaxTokens is -1"},
		{"unknown format", doc.Document{URI: "a.rst", Format: "rst", Content: "x"}, Options{}, `unknown format "rst"`},
		{"byte larger than max", d, Options{MaxTokens: 2, Count: func(s string) int { return 3 * len(s) }}, "MaxTokens is too small"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Split(tt.d, tt.opt)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), tt.d.URI)
		})
	}
}

func TestDefaultsForSmallMax(t *testing.T) {
	// MaxTokens 32 without an Overlap gets a default overlap that is valid.
	d := fixture(t, "essay.txt", doc.FormatText)
	checkSplit(t, d, Options{MaxTokens: 32})
	o, err := Options{MaxTokens: 32}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, 4, o.Overlap)
	o, err = Options{}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, Options{MaxTokens: 512, Overlap: 64, MinTokens: 64}, Options{MaxTokens: o.MaxTokens, Overlap: o.Overlap, MinTokens: o.MinTokens})
}

func TestCustomCount(t *testing.T) {
	enc, err := tokenizer.Get(tokenizer.Cl100kBase)
	require.NoError(t, err)
	cl100k := func(s string) int {
		n, _ := enc.Count(s)
		return n
	}
	runes := utf8.RuneCountInString
	for _, name := range []string{"guide.md", "essay.txt"} {
		format := doc.FormatMarkdown
		if strings.HasSuffix(name, ".txt") {
			format = doc.FormatText
		}
		d := fixture(t, name, format)
		for _, count := range []func(string) int{cl100k, runes} {
			chunks := checkSplit(t, d, Options{MaxTokens: 40, Count: count})
			for _, c := range chunks {
				assert.LessOrEqual(t, count(c.Text), 40)
			}
		}
	}
}

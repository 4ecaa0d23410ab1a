package static

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/embed"
	"github.com/sagasu-dev/sagasu/internal/embed/safetensors"
)

const fixture = "testdata/glove-subset.bin"

func openFixture(t testing.TB, opt Options) embed.Embedder {
	t.Helper()
	c, err := Open(fixture, opt)
	require.NoError(t, err)
	return embed.New(c, embed.Options{})
}

func embedAll(t testing.TB, e embed.Embedder, texts ...string) [][]float32 {
	t.Helper()
	vecs, err := e.EmbedDocuments(context.Background(), texts)
	require.NoError(t, err)
	return vecs
}

func TestGloVeWordSimilarity(t *testing.T) {
	e := openFixture(t, Options{})
	assert.Equal(t, embed.Info{Driver: "static", Model: "glove-subset", Dim: 100, Endpoint: fixture}, e.Info())
	v := embedAll(t, e, "cat", "dog", "revenue", "king", "queen", "banana", "paris", "france", "tokyo")
	cat, dog, revenue, king, queen, banana, paris, france, tokyo := v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]
	assert.Greater(t, embed.Dot(cat, dog), embed.Dot(cat, revenue), "cat is nearer dog than revenue")
	assert.Greater(t, embed.Dot(cat, dog), float32(0.7))
	assert.Greater(t, embed.Dot(king, queen), embed.Dot(king, banana))
	assert.Greater(t, embed.Dot(paris, france), embed.Dot(paris, tokyo))
	for _, x := range v {
		assert.InDelta(t, 1, embed.Dot(x, x), 1e-5, "normalised")
	}
}

func TestGloVeSentenceSimilarity(t *testing.T) {
	for _, opt := range []Options{{}, {KeepPC: true}, {SIF: -1}} {
		t.Run(modelName("glove", opt), func(t *testing.T) {
			e := openFixture(t, opt)
			v := embedAll(t, e, "The cat sat on the mat.", "A dog lay on the rug.", "Quarterly revenue rose.",
				"Profits and sales grew in the fiscal year.")
			assert.Greater(t, embed.Dot(v[0], v[1]), embed.Dot(v[0], v[2]), "cat/mat is nearer dog/rug than revenue")
			assert.Greater(t, embed.Dot(v[2], v[3]), embed.Dot(v[2], v[1]), "revenue is nearer profits than dog/rug")
		})
	}
}

func TestSIFWeighsDownFrequentWords(t *testing.T) {
	sif := embedAll(t, openFixture(t, Options{KeepPC: true}), "cat", "the cat of the")
	mean := embedAll(t, openFixture(t, Options{SIF: -1, KeepPC: true}), "cat", "the cat of the")
	assert.Greater(t, embed.Dot(sif[0], sif[1]), float32(0.95), "'the' and 'of' hardly count with SIF")
	assert.Less(t, embed.Dot(mean[0], mean[1]), embed.Dot(sif[0], sif[1]))
}

func TestCommonComponentIsRemoved(t *testing.T) {
	c, err := Open(fixture, Options{})
	require.NoError(t, err)
	require.NotNil(t, c.common)
	v := embedAll(t, embed.New(c, embed.Options{}), "the results of the study were published in the journal")
	assert.InDelta(t, 0, embed.Dot(v[0], c.common), 1e-5)

	kept, err := Open(fixture, Options{KeepPC: true})
	require.NoError(t, err)
	assert.Nil(t, kept.common)
	assert.Equal(t, "glove-subset+keeppc", kept.Info().Model)
}

func TestModelNameSaysHowVectorsArePooled(t *testing.T) {
	cases := []struct {
		opt  Options
		want string
	}{
		{Options{}, "g"},
		{Options{SIF: DefaultSIF}, "g"},
		{Options{SIF: -1}, "g+mean"},
		{Options{SIF: 1e-4}, "g+sif=0.0001"},
		{Options{SIF: -1, KeepPC: true}, "g+mean+keeppc"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, modelName("g", c.opt))
	}
	c, err := Open(fixture, Options{Name: "custom", KeepPC: true})
	require.NoError(t, err)
	assert.Equal(t, "custom+keeppc", c.Info().Model)
}

func TestUnknownWordsGiveZeroVector(t *testing.T) {
	v := embedAll(t, openFixture(t, Options{}), "qwxzzy blorptangle")
	for _, x := range v[0] {
		assert.Equal(t, float32(0), x)
	}
}

func TestWords(t *testing.T) {
	cases := map[string][]string{
		"The cat sat on the mat.":  {"the", "cat", "sat", "on", "the", "mat"},
		"don't e-mail U.S.A. 3.14": {"don", "t", "e", "mail", "u", "s", "a", "3", "14"},
		"Ünïcödé ÉCOLE naïve":      {"ünïcödé", "école", "naïve"},
		"検索エンジン、テスト":               {"検索エンジン", "テスト"},
		"  \t\n":                   nil,
		"snake_case CamelCase x2y": {"snake", "case", "camelcase", "x2y"},
	}
	for in, want := range cases {
		assert.Equal(t, want, Words(in), in)
	}
}

func TestEmbedHonoursCancel(t *testing.T) {
	c, err := Open(fixture, Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Embed(ctx, []string{"cat"}, embed.TaskDocument)
	assert.ErrorIs(t, err, context.Canceled)
}

// smallVectors is a made-up table for format tests.
func smallVectors(r *rand.Rand, n, dim int) *Vectors {
	v := &Vectors{Source: "test table", Dim: dim, Prob: ZipfProb(n)}
	for i := range n {
		v.Words = append(v.Words, fmt.Sprintf("w%dé", i))
		for range dim {
			v.Data = append(v.Data, float32(r.NormFloat64()))
		}
	}
	return v
}

func TestBinaryRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	v := smallVectors(r, 50, 7)
	var buf bytes.Buffer
	require.NoError(t, v.WriteBinary(&buf, false))
	got, err := ReadBinary(buf.Bytes())
	require.NoError(t, err)
	assert.Equal(t, v, got, "float32 is exact")

	buf.Reset()
	require.NoError(t, v.WriteBinary(&buf, true))
	half := buf.Len()
	got, err = ReadBinary(buf.Bytes())
	require.NoError(t, err)
	assert.Equal(t, v.Words, got.Words)
	assert.Equal(t, v.Prob, got.Prob)
	for i, x := range v.Data {
		assert.InDelta(t, x, got.Data[i], math.Abs(float64(x))/1024+1e-7)
	}
	// Header, source, words and probabilities, then 2 bytes a float, then the checksum.
	words := 0
	for _, w := range v.Words {
		words += 1 + len(w)
	}
	assert.Equal(t, 8+16+1+len(v.Source)+words+4*50+2*50*7+4, half)
}

func TestBinaryRejectsDamage(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, smallVectors(rand.New(rand.NewPCG(3, 4)), 10, 4).WriteBinary(&buf, true))
	good := buf.Bytes()

	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0x40
	_, err := ReadBinary(flipped)
	assert.ErrorContains(t, err, "checksum")

	_, err = ReadBinary(good[:len(good)-10])
	assert.Error(t, err)

	_, err = ReadBinary([]byte("glove text 1 2 3 4 5 6 7 8 9 10 11 12"))
	assert.ErrorContains(t, err, "bad magic")

	newer := bytes.Clone(good)
	binary.LittleEndian.PutUint32(newer[8:], 2)
	sum := crc32c(newer[:len(newer)-4])
	binary.LittleEndian.PutUint32(newer[len(newer)-4:], sum)
	_, err = ReadBinary(newer)
	assert.ErrorContains(t, err, "format version 2")
}

func FuzzReadBinary(f *testing.F) {
	var buf bytes.Buffer
	_ = smallVectors(rand.New(rand.NewPCG(5, 6)), 3, 2).WriteBinary(&buf, true)
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		// Fix the checksum so that the fuzzer reaches the parser.
		if len(data) >= 4 {
			binary.LittleEndian.PutUint32(data[len(data)-4:], crc32c(data[:len(data)-4]))
		}
		v, err := ReadBinary(data)
		if err == nil {
			require.NoError(t, v.check())
		}
	})
}

func TestTextFormats(t *testing.T) {
	dir := t.TempDir()
	glove := "the 0.1 0.2 0.3\ncat 1 0 0\ndog 0.9 0.1 0\n. . . 0 0 1\ncat 5 5 5\n"
	w2v := "4 3\nthe 0.1 0.2 0.3\ncat 1 0 0\ndog 0.9 0.1 0\nrevenue 0 0 1\n"
	for name, text := range map[string]string{"glove.txt": glove, "w2v.txt": w2v} {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		v, err := ReadFile(path)
		require.NoError(t, err, name)
		assert.Equal(t, 3, v.Dim)
		assert.Len(t, v.Words, 4, "%s: a repeated word keeps its first vector", name)
		assert.Equal(t, []float32{1, 0, 0}, v.Vector(1))
		assert.Equal(t, ZipfProb(4), v.Prob)
		assert.Equal(t, name, v.Source)
	}
	v, err := ReadFile(filepath.Join(dir, "glove.txt"))
	require.NoError(t, err)
	assert.Equal(t, ". . .", v.Words[3], "a word with spaces in it")

	bad := map[string]string{
		"short.txt":  "the 0.1 0.2 0.3\ncat 1 0\n",
		"nan.txt":    "the 0.1 0.2 0.3\ncat 1 x 0\n",
		"count.txt":  "5 3\nthe 0.1 0.2 0.3\n",
		"empty.txt":  "\n\n",
		"noword.txt": "0.5\n",
	}
	want := map[string]string{
		"short.txt":  "line 2: want a word and 3 numbers",
		"nan.txt":    `line 2 (word "cat"): "x" is not a number`,
		"count.txt":  "the header says 5 words but the file has 1",
		"empty.txt":  "no word vectors",
		"noword.txt": "line 1",
	}
	for name, text := range bad {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		_, err := ReadFile(path)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), path)
		assert.Contains(t, err.Error(), want[name])
	}
}

func TestImport(t *testing.T) {
	// Write the fixture out as GloVe text, import it, and get the same
	// embeddings from the text, the import and the fixture.
	v, err := ReadFile(fixture)
	require.NoError(t, err)
	dir := t.TempDir()
	txt := filepath.Join(dir, "glove-small.txt")
	var b strings.Builder
	for i, w := range v.Words {
		b.WriteString(w)
		for _, x := range v.Vector(i) {
			fmt.Fprintf(&b, " %g", x)
		}
		b.WriteByte('\n')
	}
	require.NoError(t, os.WriteFile(txt, []byte(b.String()), 0o644))
	bin := filepath.Join(dir, "glove-small.bin")
	require.NoError(t, Import(txt, bin))
	st, err := os.Stat(bin)
	require.NoError(t, err)
	assert.Less(t, st.Size()*3, int64(b.Len()), "the binary is much smaller than the text")

	texts := []string{"the cat sat on the mat", "quarterly revenue rose"}
	fromText := embedAll(t, embed.New(mustOpen(t, txt), embed.Options{}), texts...)
	fromBin := embedAll(t, embed.New(mustOpen(t, bin), embed.Options{}), texts...)
	for i := range texts {
		assert.InDeltaSlice(t, fromText[i], fromBin[i], 1e-6)
	}
	assert.Equal(t, "glove-small", mustOpen(t, bin).Info().Model)

	require.Error(t, Import(filepath.Join(dir, "missing.txt"), bin))
	_, err = os.Stat(bin)
	require.NoError(t, err, "a failed import leaves the old file")
}

func mustOpen(t *testing.T, path string) *Client {
	t.Helper()
	c, err := Open(path, Options{})
	require.NoError(t, err)
	return c
}

func TestOpenErrors(t *testing.T) {
	_, err := Open("testdata/nope.bin", Options{})
	assert.ErrorContains(t, err, "static embedder")
	assert.ErrorContains(t, err, "nope.bin")

	dir := t.TempDir()
	_, err = Open(dir, Options{})
	assert.ErrorContains(t, err, "Model2Vec model "+dir)
	assert.ErrorContains(t, err, "tokenizer.json")
}

// Model2Vec

// writeModel2Vec writes a Model2Vec folder: tokenizer.json with the given
// vocabulary and model.safetensors with one row per token.
func writeModel2Vec(t *testing.T, vocab []string, rows [][]float32, dtype string) string {
	t.Helper()
	dir := t.TempDir()
	ids := make(map[string]int, len(vocab))
	for i, w := range vocab {
		ids[w] = i
	}
	tok := map[string]any{
		"version":       "1.0",
		"normalizer":    map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": nil, "lowercase": true},
		"pre_tokenizer": map[string]any{"type": "BertPreTokenizer"},
		"model":         map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": ids},
	}
	data, err := json.Marshal(tok)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tokenizer.json"), data, 0o644))

	var flat []float32
	for _, r := range rows {
		flat = append(flat, r...)
	}
	var file bytes.Buffer
	require.NoError(t, safetensors.Write(&file, []safetensors.Tensor{
		{Name: "embeddings", Shape: []int{len(rows), len(rows[0])}, F32: flat, Dtype: dtype},
	}, map[string]string{"format": "pt"}))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "model.safetensors"), file.Bytes(), 0o644))
	return dir
}

func TestModel2Vec(t *testing.T) {
	// A Model2Vec folder built from the GloVe fixture: each word is a
	// token, plus word pieces to show that a word is pooled from its
	// pieces, and [UNK], which is left out of the mean.
	v, err := ReadFile(fixture)
	require.NoError(t, err)
	vocab := []string{"[PAD]", "[UNK]"}
	rows := [][]float32{make([]float32, v.Dim), ones(v.Dim)}
	for i, w := range v.Words[:3000] {
		vocab = append(vocab, w)
		rows = append(rows, v.Vector(i))
	}
	for _, w := range []string{"cat", "dog", "revenue", "mat", "rug", "quarterly", "kitten"} {
		i := indexOf(v.Words, w)
		require.GreaterOrEqual(t, i, 0, w)
		vocab = append(vocab, w)
		rows = append(rows, v.Vector(i))
	}
	vocab = append(vocab, "kit", "##ten")
	kitten := v.Vector(indexOf(v.Words, "kitten"))
	rows = append(rows, kitten, kitten)

	for _, dtype := range []string{"F32", "F16"} {
		t.Run(dtype, func(t *testing.T) {
			dir := writeModel2Vec(t, vocab, rows, dtype)
			c, err := Open(dir, Options{})
			require.NoError(t, err)
			assert.Equal(t, embed.Info{Driver: "static", Model: filepath.Base(dir), Dim: v.Dim, Endpoint: dir}, c.Info())
			e := embed.New(c, embed.Options{})
			got := embedAll(t, e, "cat", "dog", "revenue", "The cat sat on the mat.", "A dog lay on the rug.", "Quarterly revenue rose.",
				"cat zzqxv", "kitten")
			assert.Greater(t, embed.Dot(got[0], got[1]), embed.Dot(got[0], got[2]))
			assert.Greater(t, embed.Dot(got[3], got[4]), embed.Dot(got[3], got[5]))
			assert.InDelta(t, 1, embed.Dot(got[0], got[6]), 1e-3, "[UNK] is left out")
			want := append([]float32(nil), kitten...)
			embed.Normalize(want)
			assert.InDeltaSlice(t, want, got[7], 2e-3, "a whole word beats its pieces")
		})
	}
}

func TestModel2VecErrors(t *testing.T) {
	dir := writeModel2Vec(t, []string{"[UNK]", "a", "b"}, [][]float32{{1, 0}, {0, 1}}, "F32")
	_, err := Open(dir, Options{})
	assert.ErrorContains(t, err, "the tokenizer has ids up to 2 but the embeddings have 2 rows")

	dir = writeModel2Vec(t, []string{"[UNK]"}, [][]float32{{1, 0}}, "F32")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "model.safetensors"), []byte("short"), 0o644))
	_, err = Open(dir, Options{})
	assert.ErrorContains(t, err, "model.safetensors")
}

func TestModel2VecQuantisedIsRefused(t *testing.T) {
	dir := writeModel2Vec(t, []string{"[UNK]", "a"}, [][]float32{{1, 0}, {0, 1}}, "F32")
	path := filepath.Join(dir, "model.safetensors")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	n := binary.LittleEndian.Uint64(data)
	header := strings.Replace(string(data[8:8+n]), `"embeddings"`, `"mapping":{"dtype":"F32","shape":[1,1],"data_offsets":[0,4]},"embeddings"`, 1)
	file := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	file = append(append(file, header...), data[8+n:]...)
	require.NoError(t, os.WriteFile(path, file, 0o644))
	_, err = Open(dir, Options{})
	assert.ErrorContains(t, err, `"mapping" tensor (vocabulary quantisation)`)
}

func ones(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = 1
	}
	return v
}

func indexOf(words []string, w string) int {
	for i, x := range words {
		if x == w {
			return i
		}
	}
	return -1
}

package local

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/embed"
	"github.com/sagasu-dev/sagasu/internal/embed/safetensors"
)

// tiny describes a small random BERT-family model for the tests.
type tiny struct {
	modelType string // "bert" or "xlm-roberta"
	act       string
	pooling   string // a 1_Pooling mode, "" for no 1_Pooling folder
	prefix    string // tensor name prefix ("", "bert.", "roberta.")
	oldNorm   bool   // LayerNorm tensors named gamma and beta
	maxSeq    int    // sentence_bert_config's max_seq_length, 0 for none
}

const (
	tinyHidden = 32
	tinyHeads  = 4
	tinyInter  = 48
	tinyLayers = 2
	tinyPos    = 40
)

var tinyVocab = []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "cat", "sat", "on", "mat", "dog", "ran", "a", "rug", "##s", ",", "."}

// writeTiny writes a model folder and returns it with the weights by name.
func writeTiny(t *testing.T, spec tiny) (string, map[string][]float32) {
	t.Helper()
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(7, uint64(len(spec.modelType)+len(spec.act)+len(spec.pooling))))
	weights := map[string][]float32{}
	var tensors []safetensors.Tensor
	add := func(name string, shape ...int) {
		n := 1
		for _, d := range shape {
			n *= d
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = (r.Float32()*2 - 1) * 0.5
		}
		if bytes.HasSuffix([]byte(name), []byte("LayerNorm.weight")) {
			for i := range v {
				v[i] += 1
			}
		}
		weights[name] = v
		stored := name
		if spec.oldNorm {
			stored = replaceSuffix(replaceSuffix(stored, "LayerNorm.weight", "LayerNorm.gamma"), "LayerNorm.bias", "LayerNorm.beta")
		}
		tensors = append(tensors, safetensors.Tensor{Name: spec.prefix + stored, Shape: shape, F32: v})
	}
	h := tinyHidden
	add("embeddings.word_embeddings.weight", len(tinyVocab), h)
	add("embeddings.position_embeddings.weight", tinyPos, h)
	add("embeddings.token_type_embeddings.weight", 2, h)
	add("embeddings.LayerNorm.weight", h)
	add("embeddings.LayerNorm.bias", h)
	for i := 0; i < tinyLayers; i++ {
		p := fmt.Sprintf("encoder.layer.%d.", i)
		for _, n := range []string{"query", "key", "value"} {
			add(p+"attention.self."+n+".weight", h, h)
			add(p+"attention.self."+n+".bias", h)
		}
		add(p+"attention.output.dense.weight", h, h)
		add(p+"attention.output.dense.bias", h)
		add(p+"attention.output.LayerNorm.weight", h)
		add(p+"attention.output.LayerNorm.bias", h)
		add(p+"intermediate.dense.weight", tinyInter, h)
		add(p+"intermediate.dense.bias", tinyInter)
		add(p+"output.dense.weight", h, tinyInter)
		add(p+"output.dense.bias", h)
		add(p+"output.LayerNorm.weight", h)
		add(p+"output.LayerNorm.bias", h)
	}
	var buf bytes.Buffer
	require.NoError(t, safetensors.Write(&buf, tensors, map[string]string{"format": "pt"}))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "model.safetensors"), buf.Bytes(), 0o644))

	writeJSON(t, filepath.Join(dir, "config.json"), map[string]any{
		"model_type": spec.modelType, "hidden_size": h, "num_hidden_layers": tinyLayers, "num_attention_heads": tinyHeads,
		"intermediate_size": tinyInter, "hidden_act": spec.act, "max_position_embeddings": tinyPos, "type_vocab_size": 2,
		"vocab_size": len(tinyVocab), "layer_norm_eps": 1e-12, "pad_token_id": 1,
	})
	ids := map[string]int{}
	for i, w := range tinyVocab {
		ids[w] = i
	}
	writeJSON(t, filepath.Join(dir, "tokenizer.json"), map[string]any{
		"added_tokens":   []map[string]any{{"id": 2, "content": "[CLS]", "special": true}, {"id": 3, "content": "[SEP]", "special": true}},
		"normalizer":     map[string]any{"type": "BertNormalizer", "lowercase": true},
		"pre_tokenizer":  map[string]any{"type": "BertPreTokenizer"},
		"model":          map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "vocab": ids},
		"post_processor": map[string]any{"type": "BertProcessing", "cls": []any{"[CLS]", 2}, "sep": []any{"[SEP]", 3}},
	})
	if spec.pooling != "" {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "1_Pooling"), 0o755))
		writeJSON(t, filepath.Join(dir, "1_Pooling", "config.json"), map[string]any{
			"word_embedding_dimension": h, "pooling_mode_" + spec.pooling: true,
		})
	}
	if spec.maxSeq > 0 {
		writeJSON(t, filepath.Join(dir, "sentence_bert_config.json"), map[string]any{"max_seq_length": spec.maxSeq})
	}
	return dir, weights
}

func replaceSuffix(s, old, new string) string {
	if len(s) >= len(old) && s[len(s)-len(old):] == old {
		return s[:len(s)-len(old)] + new
	}
	return s
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

// reference runs the encoder in float64 straight from the formulas.
func reference(w map[string][]float32, spec tiny, ids []int32) []float64 {
	h, d := tinyHidden, tinyHidden/tinyHeads
	n := len(ids)
	off := 0
	if spec.modelType != "bert" {
		off = 2 // pad id 1 + 1
	}
	lin := func(x [][]float64, name string, out int) [][]float64 {
		wt, b := w[name+".weight"], w[name+".bias"]
		in := len(x[0])
		y := make([][]float64, len(x))
		for i := range x {
			y[i] = make([]float64, out)
			for o := 0; o < out; o++ {
				s := float64(b[o])
				for j := 0; j < in; j++ {
					s += x[i][j] * float64(wt[o*in+j])
				}
				y[i][o] = s
			}
		}
		return y
	}
	ln := func(x [][]float64, name string) {
		g, b := w[name+".weight"], w[name+".bias"]
		for _, row := range x {
			var mean, v float64
			for _, a := range row {
				mean += a
			}
			mean /= float64(len(row))
			for _, a := range row {
				v += (a - mean) * (a - mean)
			}
			v /= float64(len(row))
			for j := range row {
				row[j] = (row[j]-mean)/math.Sqrt(v+1e-12)*float64(g[j]) + float64(b[j])
			}
		}
	}
	x := make([][]float64, n)
	for i, id := range ids {
		x[i] = make([]float64, h)
		for j := 0; j < h; j++ {
			x[i][j] = float64(w["embeddings.word_embeddings.weight"][int(id)*h+j]) +
				float64(w["embeddings.position_embeddings.weight"][(i+off)*h+j]) +
				float64(w["embeddings.token_type_embeddings.weight"][j])
		}
	}
	ln(x, "embeddings.LayerNorm")
	for l := 0; l < tinyLayers; l++ {
		p := fmt.Sprintf("encoder.layer.%d.", l)
		q := lin(x, p+"attention.self.query", h)
		k := lin(x, p+"attention.self.key", h)
		v := lin(x, p+"attention.self.value", h)
		ctx := make([][]float64, n)
		for i := range ctx {
			ctx[i] = make([]float64, h)
		}
		for hd := 0; hd < tinyHeads; hd++ {
			for i := 0; i < n; i++ {
				sc := make([]float64, n)
				hi := math.Inf(-1)
				for j := 0; j < n; j++ {
					for e := 0; e < d; e++ {
						sc[j] += q[i][hd*d+e] * k[j][hd*d+e]
					}
					sc[j] /= math.Sqrt(float64(d))
					hi = math.Max(hi, sc[j])
				}
				var sum float64
				for j := range sc {
					sc[j] = math.Exp(sc[j] - hi)
					sum += sc[j]
				}
				for j := range sc {
					for e := 0; e < d; e++ {
						ctx[i][hd*d+e] += sc[j] / sum * v[j][hd*d+e]
					}
				}
			}
		}
		a := lin(ctx, p+"attention.output.dense", h)
		for i := range x {
			for j := range x[i] {
				x[i][j] += a[i][j]
			}
		}
		ln(x, p+"attention.output.LayerNorm")
		in := lin(x, p+"intermediate.dense", tinyInter)
		for _, row := range in {
			for j, u := range row {
				switch spec.act {
				case "relu":
					row[j] = math.Max(u, 0)
				case "gelu_new":
					row[j] = 0.5 * u * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(u+0.044715*u*u*u)))
				default:
					row[j] = 0.5 * u * (1 + math.Erf(u/math.Sqrt2))
				}
			}
		}
		o := lin(in, p+"output.dense", h)
		for i := range x {
			for j := range x[i] {
				x[i][j] += o[i][j]
			}
		}
		ln(x, p+"output.LayerNorm")
	}
	out := make([]float64, h)
	switch spec.pooling {
	case "cls_token":
		copy(out, x[0])
	case "max_tokens":
		copy(out, x[0])
		for _, row := range x[1:] {
			for j, a := range row {
				out[j] = math.Max(out[j], a)
			}
		}
	default:
		for _, row := range x {
			for j, a := range row {
				out[j] += a / float64(n)
			}
		}
	}
	return out
}

func cosine64(a []float32, b []float64) float64 {
	var ab, aa, bb float64
	for i := range b {
		ab += float64(a[i]) * b[i]
		aa += float64(a[i]) * float64(a[i])
		bb += b[i] * b[i]
	}
	return ab / math.Sqrt(aa*bb)
}

// TestForwardMatchesFormulas: the encoder, on small random models of each
// supported kind (BERT and XLM-R position ids, mean/CLS/max pooling, the
// three activations, prefixed and old-style tensor names), gives the
// vectors a float64 transcription of the formulas gives, for texts of
// different lengths embedded in one batch, and truncates at
// max_seq_length.
func TestForwardMatchesFormulas(t *testing.T) {
	specs := []tiny{
		{modelType: "bert", act: "gelu", pooling: "mean_tokens"},
		{modelType: "xlm-roberta", act: "relu", pooling: "cls_token", prefix: "roberta.", oldNorm: true},
		{modelType: "bert", act: "gelu_new", pooling: "max_tokens", prefix: "bert.", maxSeq: 8},
		{modelType: "bert", act: "gelu"}, // no 1_Pooling: mean
	}
	texts := []string{"the cat sat on the mat.", "a dog ran", "cats, dogs, the rug, the mat, a cat sat on a dog . the end of it", "mat"}
	for _, spec := range specs {
		t.Run(fmt.Sprintf("%s-%s-%s", spec.modelType, spec.act, spec.pooling), func(t *testing.T) {
			dir, w := writeTiny(t, spec)
			c, err := Open(dir, Options{})
			require.NoError(t, err)
			assert.Equal(t, embed.Info{Driver: "local", Model: filepath.Base(dir), Dim: tinyHidden, Endpoint: dir}, c.Info())
			got, err := c.Embed(context.Background(), texts, embed.TaskDocument)
			require.NoError(t, err)
			for i, text := range texts {
				ids := c.Tokenize(text)
				if spec.maxSeq > 0 {
					require.LessOrEqual(t, len(ids), spec.maxSeq)
				}
				if spec.modelType == "xlm-roberta" {
					require.LessOrEqual(t, len(ids), tinyPos-2)
				}
				assert.Greater(t, cosine64(got[i], reference(w, spec, ids)), 0.99999, "%q", text)
			}
			// One text alone gives the vector it got in the batch.
			alone, err := c.Embed(context.Background(), texts[2:3], embed.TaskQuery)
			require.NoError(t, err)
			assertClose(t, "alone", alone[0], got[2], 1e-5)
		})
	}
}

func TestSettings(t *testing.T) {
	dir, _ := writeTiny(t, tiny{modelType: "xlm-roberta", act: "gelu", pooling: "mean_tokens"})
	s, err := readSettings(dir)
	require.NoError(t, err)
	assert.Equal(t, 2, s.posOffset, "RoBERTa positions start after the padding id")
	assert.Equal(t, tinyPos-2, s.maxLen, "without a max_seq_length, the position table bounds the input")

	writeJSON(t, filepath.Join(dir, "tokenizer_config.json"), map[string]any{"model_max_length": 16})
	s, err = readSettings(dir)
	require.NoError(t, err)
	assert.Equal(t, 16, s.maxLen)
	writeJSON(t, filepath.Join(dir, "tokenizer_config.json"), map[string]any{"model_max_length": 1e30}) // "unlimited"
	s, err = readSettings(dir)
	require.NoError(t, err)
	assert.Equal(t, tinyPos-2, s.maxLen)
}

func TestOpenErrors(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "none"), Options{})
	assert.ErrorContains(t, err, "local embedder")

	file := filepath.Join(t.TempDir(), "model.bin")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	_, err = Open(file, Options{})
	assert.ErrorContains(t, err, "is not a folder")

	edit := func(t *testing.T, name string, change func(map[string]any)) string {
		dir, _ := writeTiny(t, tiny{modelType: "bert", act: "gelu", pooling: "mean_tokens"})
		path := filepath.Join(dir, name)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		var v map[string]any
		require.NoError(t, json.Unmarshal(data, &v))
		change(v)
		writeJSON(t, path, v)
		return dir
	}
	cases := []struct {
		name   string
		file   string
		change func(map[string]any)
		want   string
	}{
		{"gpt", "config.json", func(v map[string]any) { v["model_type"] = "gpt2" }, `model_type "gpt2" is not supported`},
		{"silu", "config.json", func(v map[string]any) { v["hidden_act"] = "silu" }, `hidden_act "silu" is not supported`},
		{"shape", "config.json", func(v map[string]any) { v["intermediate_size"] = 64 }, "config.json implies [64 32]"},
		{"heads", "config.json", func(v map[string]any) { v["num_attention_heads"] = 5 }, "not a multiple of num_attention_heads"},
		{"layers", "config.json", func(v map[string]any) { v["num_hidden_layers"] = 3 }, `no tensor "encoder.layer.2.`},
		{"relative", "config.json", func(v map[string]any) { v["position_embedding_type"] = "relative_key" }, "position_embedding_type"},
		{"two poolings", filepath.Join("1_Pooling", "config.json"), func(v map[string]any) { v["pooling_mode_max_tokens"] = true }, "exactly one"},
		{"vocab", "tokenizer.json", func(v map[string]any) {
			v["model"].(map[string]any)["vocab"].(map[string]any)["zebra"] = 99
		}, "ids up to 99"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Open(edit(t, c.file, c.change), Options{})
			assert.ErrorContains(t, err, c.want)
		})
	}

	dir, _ := writeTiny(t, tiny{modelType: "bert", act: "gelu"})
	require.NoError(t, os.Remove(filepath.Join(dir, "tokenizer.json")))
	_, err = Open(dir, Options{})
	assert.ErrorContains(t, err, "tokenizer.json")
}

// TestInt8Tiny: quantised weights give nearly the float vectors, under a
// name of their own, with the float weights dropped.
func TestInt8Tiny(t *testing.T) {
	dir, _ := writeTiny(t, tiny{modelType: "bert", act: "gelu", pooling: "mean_tokens"})
	f, err := Open(dir, Options{Name: "tiny"})
	require.NoError(t, err)
	q, err := Open(dir, Options{Name: "tiny", Int8: true})
	require.NoError(t, err)
	assert.Equal(t, "tiny+int8", q.Info().Model)
	assert.Nil(t, q.m.word)
	assert.Nil(t, q.m.layers[0].inter.w.data)
	texts := []string{"the cat sat on the mat.", "a dog ran on a rug"}
	a, err := f.Embed(context.Background(), texts, embed.TaskDocument)
	require.NoError(t, err)
	b, err := q.Embed(context.Background(), texts, embed.TaskDocument)
	require.NoError(t, err)
	for i := range texts {
		c := embed.Cosine(a[i], b[i])
		assert.Greater(t, c, float32(0.99))
		assert.Less(t, c, float32(0.999999))
	}
}

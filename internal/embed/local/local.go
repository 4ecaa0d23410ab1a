// Package local is the embed driver that runs a sentence-transformers model
// inside sagasu, in pure Go: a BERT-family encoder (MiniLM, BGE, E5,
// multilingual E5) read from a standard model folder — config.json,
// model.safetensors, tokenizer.json, and sentence_bert_config.json and
// 1_Pooling/config.json when there are — tokenised exactly as the Hugging
// Face tokenizers library does (package tokenizer), cut at the model's
// length, pooled as the folder says (mean or CLS). No network, no cgo, no
// GPU: matrix products go through a register-blocked micro-kernel (AVX2 and
// FMA assembly on amd64, generated with avo; portable Go elsewhere).
//
// A Client's Embed runs on the calling goroutine; embed.New's requests in
// flight are what spread a batch over the cores (Options gives the
// settings that do that).
package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/sagasu-dev/sagasu/internal/embed"
	"github.com/sagasu-dev/sagasu/internal/embed/safetensors"
	"github.com/sagasu-dev/sagasu/internal/embed/tokenizer"
)

// Options change how a model is loaded. The zero value loads float32
// weights and names the model after its folder.
type Options struct {
	// Name is the model name in Info (default: the folder's name). A
	// quantised model gets "+int8" after it, so that an index never mixes
	// its vectors with the float ones.
	Name string
	// Int8 keeps the linear layers' weights as 8-bit integers with one
	// scale per output: a quarter of the memory, slightly different
	// vectors (docs/embeddings.md has the measured loss).
	Int8 bool
}

// Client embeds texts with a local model. It implements embed.Client and
// is safe for concurrent use.
type Client struct {
	info  embed.Info
	tok   *tokenizer.Tokenizer
	m     *model
	pool  sync.Pool // *workspace
	batch int
}

// tokensPerPass bounds the tokens one forward pass takes, so that a
// worker's activations stay near 15 MB for a small model.
const tokensPerPass = 1024

// Open loads the model in folder dir.
func Open(dir string, opt Options) (*Client, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("local embedder: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("local embedder: %s is not a folder: give the folder of a sentence-transformers model (config.json, model.safetensors, tokenizer.json), e.g. one `sagasu model pull` fetched", dir)
	}
	c, err := open(dir, opt)
	if err != nil {
		return nil, fmt.Errorf("local embedder: model %s: %w", dir, err)
	}
	return c, nil
}

func open(dir string, opt Options) (*Client, error) {
	s, err := readSettings(dir)
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.Load(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		return nil, err
	}
	f, err := safetensors.Open(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := loadModel(f, s, opt.Int8)
	if err != nil {
		return nil, err
	}
	if int(tok.MaxID()) >= m.vocabSize() {
		return nil, fmt.Errorf("tokenizer.json has ids up to %d but the model's vocabulary has %d rows", tok.MaxID(), m.vocabSize())
	}
	if tok.Specials() >= s.maxLen {
		return nil, fmt.Errorf("the model takes %d tokens, no more than its %d special tokens", s.maxLen, tok.Specials())
	}
	name := opt.Name
	if name == "" {
		name = filepath.Base(filepath.Clean(dir))
	}
	if opt.Int8 && !strings.HasSuffix(name, "+int8") {
		name += "+int8"
	}
	c := &Client{
		info:  embed.Info{Driver: "local", Model: name, Dim: s.Hidden, Endpoint: dir},
		tok:   tok,
		m:     m,
		batch: 16,
	}
	c.pool.New = func() any { return new(workspace) }
	return c, nil
}

// Info names the model.
func (c *Client) Info() embed.Info { return c.info }

// MaxBatch is how many texts one Embed call takes: few, so that
// embed.New's requests in flight keep every core busy.
func (c *Client) MaxBatch() int { return c.batch }

// MaxTokens is the longest input in tokens, special tokens included.
func (c *Client) MaxTokens() int { return c.m.s.maxLen }

// Tokenize returns the token ids the model sees for text.
func (c *Client) Tokenize(text string) []int32 {
	if c.m.s.lowercase {
		text = lowerText(text)
	}
	return c.tok.Encode(text, c.m.s.maxLen)
}

// CountTokens returns how many tokens the model reads text as (without its
// special tokens and without cutting it at MaxTokens), and how many of them
// are the unknown token: how well its vocabulary covers the text
// (embed.Vocabulary).
func (c *Client) CountTokens(text string) (tokens, unknown int) {
	if c.m.s.lowercase {
		text = lowerText(text)
	}
	ids := c.tok.Tokens(text)
	unk := c.tok.Unknown()
	for _, id := range ids {
		if id == unk {
			unknown++
		}
	}
	return len(ids), unknown
}

// Embed runs the model over texts. Documents and queries are embedded
// alike: their prefixes, when the model wants them, come from
// embed.WithPrefixes.
func (c *Client) Embed(ctx context.Context, texts []string, _ embed.Task) ([][]float32, error) {
	seqs := make([][]int32, len(texts))
	for i, t := range texts {
		seqs[i] = c.Tokenize(t)
	}
	// Passes of similar lengths, longest first, each within tokensPerPass.
	order := make([]int, len(texts))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return len(seqs[order[a]]) > len(seqs[order[b]]) })
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = make([]float32, c.m.s.Hidden)
	}
	ws := c.pool.Get().(*workspace)
	defer c.pool.Put(ws)
	for start := 0; start < len(order); {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		end, tokens := start, 0
		for end < len(order) && (end == start || tokens+len(seqs[order[end]]) <= tokensPerPass) {
			tokens += len(seqs[order[end]])
			end++
		}
		pass := make([][]int32, 0, end-start)
		dst := make([][]float32, 0, end-start)
		for _, i := range order[start:end] {
			pass = append(pass, seqs[i])
			dst = append(dst, out[i])
		}
		c.m.forward(ws, pass, dst)
		start = end
	}
	return out, nil
}

// EmbedOptions are the embed.Options that suit a local model: as many
// requests in flight as there are cores, each a small batch, and no
// per-request timeout or retries (the work is CPU, not a server that may
// answer later). batchSize 0 keeps the driver's batch.
func EmbedOptions(batchSize int) embed.Options {
	return embed.Options{
		BatchSize:   batchSize,
		MaxInFlight: runtime.GOMAXPROCS(0),
		Timeout:     -1,
		MaxRetries:  -1,
	}
}

var _ embed.Client = (*Client)(nil)

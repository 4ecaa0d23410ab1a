// Package openai is the embed driver for the OpenAI embeddings API
// (POST {base}/embeddings) and the servers that speak it: Ollama, the
// llama.cpp server, vLLM, LM Studio and others. Wrap a Client with embed.New;
// the vectors that come out are L2-normalised, so cosine is a dot product.
package openai

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/clip"
	"github.com/sagasu-dev/sagasu/internal/embed"
)

// DefaultBaseURL is OpenAI's own API.
const DefaultBaseURL = "https://api.openai.com/v1"

// DefaultKeyEnv names the environment variable that holds the API key.
const DefaultKeyEnv = "OPENAI_API_KEY"

// knownDims are the native sizes of OpenAI's models, used when Config.Dim
// is not set. Any other model's size is learned from its first answer.
var knownDims = map[string]int{
	"text-embedding-3-small": 1536,
	"text-embedding-3-large": 3072,
	"text-embedding-ada-002": 1536,
}

// Config says which server and model to use. Only Model is required.
type Config struct {
	// BaseURL of the API, up to but not including /embeddings (default
	// DefaultBaseURL; for Ollama http://localhost:11434/v1).
	BaseURL string
	// Model as the server names it, e.g. "text-embedding-3-small" or
	// "nomic-embed-text".
	Model string
	// Dim, when set, is sent as "dimensions" (for models that can shorten
	// their vectors) and every answer is checked against it. Leave it 0 for
	// servers that reject the field; the size is then learned.
	Dim int
	// KeyEnv names the environment variable to read the API key from
	// (default OPENAI_API_KEY). The key is required for the default base
	// URL and optional for others (local servers need none). It is kept in
	// memory only to send it, never written or logged.
	KeyEnv string
	// MaxBatch is the most texts in one request (default 128; OpenAI
	// accepts up to 2048 inputs and 300k tokens per request).
	MaxBatch int
	// HTTPClient sends the requests (default: a client without timeout;
	// embed.New applies one per request).
	HTTPClient *http.Client
	// Getenv reads the environment (default os.Getenv); tests replace it.
	Getenv func(string) string
}

// Client speaks the OpenAI embeddings protocol. It implements embed.Client.
type Client struct {
	base     string
	model    string
	dim      int
	send     bool // send "dimensions"
	key      string
	maxBatch int
	hc       *http.Client
}

// New checks cfg and reads the API key from the environment.
func New(cfg Config) (*Client, error) {
	if cfg.Model == "" {
		return nil, errors.New("openai embedder: no model given (set the embedding model, e.g. text-embedding-3-small)")
	}
	if cfg.Dim < 0 {
		return nil, fmt.Errorf("openai embedder: dimension %d for model %q is negative", cfg.Dim, cfg.Model)
	}
	c := &Client{
		base:     strings.TrimRight(cfg.BaseURL, "/"),
		model:    cfg.Model,
		dim:      cfg.Dim,
		send:     cfg.Dim > 0,
		maxBatch: cfg.MaxBatch,
		hc:       cfg.HTTPClient,
	}
	if c.base == "" {
		c.base = DefaultBaseURL
	}
	if !strings.HasPrefix(c.base, "http://") && !strings.HasPrefix(c.base, "https://") {
		return nil, fmt.Errorf("openai embedder: base URL %q must start with http:// or https://", cfg.BaseURL)
	}
	if c.dim == 0 && c.base == DefaultBaseURL {
		c.dim = knownDims[c.model]
	}
	if c.maxBatch <= 0 {
		c.maxBatch = 128
	}
	if c.hc == nil {
		c.hc = &http.Client{}
	}
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	keyEnv := cfg.KeyEnv
	if keyEnv == "" {
		keyEnv = DefaultKeyEnv
	}
	c.key = strings.TrimSpace(getenv(keyEnv))
	if c.key == "" && c.base == DefaultBaseURL {
		return nil, fmt.Errorf("openai embedder: %s is not set: export your OpenAI API key, or set a base URL for a local server", keyEnv)
	}
	return c, nil
}

// Info names the model; Dim is 0 until known when it was not configured.
func (c *Client) Info() embed.Info {
	return embed.Info{Driver: "openai", Model: c.model, Dim: c.dim, Endpoint: c.base}
}

// MaxBatch is the most texts one request takes.
func (c *Client) MaxBatch() int { return c.maxBatch }

type request struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	Dimensions     int      `json:"dimensions,omitempty"`
	EncodingFormat string   `json:"encoding_format"`
}

type response struct {
	Object string `json:"object"`
	Data   []struct {
		Object    string          `json:"object"`
		Index     int             `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
}

// Embed sends one request. The OpenAI API has no task types, so documents
// and queries are embedded alike.
func (c *Client) Embed(ctx context.Context, texts []string, _ embed.Task) ([][]float32, error) {
	body, err := json.Marshal(request{Model: c.model, Input: texts, Dimensions: c.dimParam(), EncodingFormat: "float"})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/embeddings", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, embed.ReadStatusError(resp)
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	return decode(raw, len(texts))
}

func (c *Client) dimParam() int {
	if c.send {
		return c.dim
	}
	return 0
}

// decode reads an embeddings answer, putting the vectors back in input
// order: the API numbers them with "index" and need not send them in order.
func decode(raw []byte, n int) ([][]float32, error) {
	var r response
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("malformed JSON in the answer (%v): %s", err, snippet(raw))
	}
	if r.Data == nil {
		return nil, fmt.Errorf("the answer has no \"data\" list: %s", snippet(raw))
	}
	if len(r.Data) != n {
		return nil, fmt.Errorf("got %d embeddings for %d inputs", len(r.Data), n)
	}
	out := make([][]float32, n)
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil {
			return nil, fmt.Errorf("the answer has a missing, repeated or out-of-range index %d", d.Index)
		}
		v, err := vector(d.Embedding)
		if err != nil {
			return nil, fmt.Errorf("embedding %d: %w", d.Index, err)
		}
		out[d.Index] = v
	}
	return out, nil
}

// vector reads one embedding: a JSON list of numbers or, from servers that
// ignore encoding_format, base64 of little-endian float32s.
func vector(raw json.RawMessage) ([]float32, error) {
	var v []float32
	if err := json.Unmarshal(raw, &v); err == nil {
		if len(v) == 0 {
			return nil, errors.New("the vector is empty")
		}
		return v, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("not a list of numbers: %s", snippet(raw))
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) == 0 || len(b)%4 != 0 {
		return nil, errors.New("not a list of numbers nor base64 float32s")
	}
	v = make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// snippet is a body quoted in an error: one line, at most 200 runes.
func snippet(b []byte) string {
	if s := clip.Line(string(b), 200); s != "" {
		return s
	}
	return "(empty body)"
}

var _ embed.Client = (*Client)(nil)

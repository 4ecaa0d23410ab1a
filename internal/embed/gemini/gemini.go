// Package gemini is the embed driver for Google's Gemini API
// (gemini-embedding-001 and its kin) through google.golang.org/genai. It
// sends documents as RETRIEVAL_DOCUMENT and queries as RETRIEVAL_QUERY.
// Wrap a Client with embed.New; the vectors that come out are
// L2-normalised (the API normalises only full 3072-dimension vectors, so a
// shortened one is normalised here), so cosine is a dot product.
package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"

	"google.golang.org/genai"

	"github.com/sagasu-dev/sagasu/internal/embed"
)

// DefaultModel is Google's text embedding model.
const DefaultModel = "gemini-embedding-001"

// defaultBaseURL is where the SDK sends requests when no base URL is given.
const defaultBaseURL = "https://generativelanguage.googleapis.com"

// nativeDims are the full vector sizes of known models, used when Config.Dim
// is not set.
var nativeDims = map[string]int{
	"gemini-embedding-001": 3072,
	"text-embedding-004":   768,
}

// Config says which model to use and where. All fields are optional.
type Config struct {
	// Model, default gemini-embedding-001.
	Model string
	// Dim is sent as outputDimensionality (gemini-embedding-001 gives 128 to
	// 3072; 768, 1536 and 3072 are the recommended sizes). 0 means the
	// model's full size, and the request leaves the field out.
	Dim int
	// BaseURL overrides the API's address (for tests and proxies).
	BaseURL string
	// MaxBatch is the most texts in one request (default and API limit 100).
	MaxBatch int
	// HTTPClient sends the requests (default: a client without timeout;
	// embed.New applies one per request).
	HTTPClient *http.Client
	// Getenv reads the environment (default os.Getenv); tests replace it.
	Getenv func(string) string
}

// Client calls batchEmbedContents. It implements embed.Client.
type Client struct {
	models   *genai.Models
	model    string
	dim      int
	sendDim  bool
	base     string
	maxBatch int
}

// New reads the API key from GEMINI_API_KEY, or else GOOGLE_API_KEY, and
// makes a Gemini API client. The key is kept in memory only to send it.
func New(ctx context.Context, cfg Config) (*Client, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	c := &Client{model: cfg.Model, dim: cfg.Dim, sendDim: cfg.Dim > 0, maxBatch: cfg.MaxBatch}
	if c.model == "" {
		c.model = DefaultModel
	}
	c.model = strings.TrimPrefix(c.model, "models/")
	if cfg.Dim < 0 {
		return nil, fmt.Errorf("gemini embedder: dimension %d for model %q is negative", cfg.Dim, c.model)
	}
	if c.dim == 0 {
		c.dim = nativeDims[c.model]
	}
	if c.maxBatch <= 0 || c.maxBatch > 100 {
		c.maxBatch = 100
	}
	c.base = strings.TrimRight(cfg.BaseURL, "/")
	if c.base == "" {
		c.base = defaultBaseURL
	}
	key := strings.TrimSpace(getenv("GEMINI_API_KEY"))
	if key == "" {
		key = strings.TrimSpace(getenv("GOOGLE_API_KEY"))
	}
	if key == "" {
		return nil, errors.New("gemini embedder: neither GEMINI_API_KEY nor GOOGLE_API_KEY is set: export your Gemini API key")
	}
	hc := &http.Client{}
	if cfg.HTTPClient != nil {
		copied := *cfg.HTTPClient
		hc = &copied
	}
	hc.Transport = statusRecorder{next: hc.Transport}
	gc, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:      key,
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  hc,
		HTTPOptions: genai.HTTPOptions{BaseURL: cfg.BaseURL},
	})
	if err != nil {
		return nil, fmt.Errorf("gemini embedder: %w", err)
	}
	c.models = gc.Models
	return c, nil
}

// Info names the model; Dim is 0 until known for a model of unknown size
// whose dimension was not configured.
func (c *Client) Info() embed.Info {
	return embed.Info{Driver: "gemini", Model: c.model, Dim: c.dim, Endpoint: c.base}
}

// MaxBatch is the most texts one request takes.
func (c *Client) MaxBatch() int { return c.maxBatch }

// Embed sends one batchEmbedContents request.
func (c *Client) Embed(ctx context.Context, texts []string, task embed.Task) ([][]float32, error) {
	contents := make([]*genai.Content, len(texts))
	for i, t := range texts {
		contents[i] = &genai.Content{Parts: []*genai.Part{{Text: t}}}
	}
	cfg := &genai.EmbedContentConfig{TaskType: "RETRIEVAL_DOCUMENT"}
	if task == embed.TaskQuery {
		cfg.TaskType = "RETRIEVAL_QUERY"
	}
	if c.sendDim {
		d := int32(c.dim)
		cfg.OutputDimensionality = &d
	}
	rec := &recorded{}
	resp, err := c.models.EmbedContent(context.WithValue(ctx, recordKey{}, rec), c.model, contents, cfg)
	if err != nil {
		var apiErr genai.APIError
		if errors.As(err, &apiErr) {
			status, retryAfter := rec.get()
			if status == 0 {
				status = apiErr.Code
			}
			return nil, &embed.StatusError{StatusCode: status, Message: apiErr.Message, RetryAfter: retryAfter}
		}
		var syntaxErr *json.SyntaxError
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &syntaxErr) || errors.As(err, &typeErr) {
			return nil, fmt.Errorf("batchEmbedContents: malformed JSON in the answer: %w", err)
		}
		return nil, fmt.Errorf("batchEmbedContents: %w", err)
	}
	out := make([][]float32, len(resp.Embeddings))
	for i, e := range resp.Embeddings {
		if e == nil || len(e.Values) == 0 {
			return nil, fmt.Errorf("batchEmbedContents: embedding %d of %d is empty", i+1, len(resp.Embeddings))
		}
		out[i] = e.Values
	}
	return out, nil
}

// The SDK's APIError keeps no headers, so a RoundTripper notes the status
// and Retry-After of a failed answer in a slot carried by the request's
// context, where Embed finds it.
type recordKey struct{}

type recorded struct {
	mu         sync.Mutex
	status     int
	retryAfter string
}

func (r *recorded) get() (int, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status, r.retryAfter
}

type statusRecorder struct{ next http.RoundTripper }

func (s statusRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	next := s.next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(req)
	if err == nil && resp.StatusCode >= 400 {
		if rec, ok := req.Context().Value(recordKey{}).(*recorded); ok {
			rec.mu.Lock()
			rec.status, rec.retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
			rec.mu.Unlock()
		}
	}
	return resp, err
}

var _ embed.Client = (*Client)(nil)

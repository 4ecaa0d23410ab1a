package openai

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/embed"
	"github.com/sagasu-dev/sagasu/internal/embed/embedtest"
)

// server speaks the OpenAI embeddings protocol: after any scripted replies
// it answers each request properly with vectors of dim floats.
type server struct {
	*embedtest.Server
	dim     int
	reverse bool // send data in reverse order
	base64  bool // send vectors as base64 strings
}

// captured is a request as the OpenAI server sees it.
type captured struct {
	Path   string
	Auth   string
	Body   map[string]any
	Inputs []string
}

func newServer(t *testing.T, dim int) *server {
	s := &server{dim: dim}
	s.Server = embedtest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("decoding a request: %v", err)
		}
		s.answer(w, req.Input)
	})
	return s
}

func (s *server) got() []captured {
	var out []captured
	for _, r := range s.Requests() {
		c := captured{Path: r.Path, Auth: r.Header.Get("Authorization")}
		var req struct {
			Input []string `json:"input"`
		}
		_ = json.Unmarshal(r.Body, &c.Body)
		_ = json.Unmarshal(r.Body, &req)
		c.Inputs = req.Input
		out = append(out, c)
	}
	return out
}

func (s *server) answer(w http.ResponseWriter, inputs []string) {
	type item struct {
		Object    string `json:"object"`
		Index     int    `json:"index"`
		Embedding any    `json:"embedding"`
	}
	data := make([]item, len(inputs))
	for i, in := range inputs {
		v := embedtest.TextVector(in, s.dim)
		var e any = v
		if s.base64 {
			b := make([]byte, 4*len(v))
			for j, x := range v {
				binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(x))
			}
			e = base64.StdEncoding.EncodeToString(b)
		}
		data[i] = item{Object: "embedding", Index: i, Embedding: e}
	}
	if s.reverse {
		for i, j := 0, len(data)-1; i < j; i, j = i+1, j-1 {
			data[i], data[j] = data[j], data[i]
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"object": "list",
		"data":   data,
		"model":  "text-embedding-3-small",
		"usage":  map[string]int{"prompt_tokens": 8, "total_tokens": 8},
	})
}

func newEmbedder(t *testing.T, s *server, cfg Config, opt embed.Options) (embed.Embedder, *embedtest.Sleeper) {
	t.Helper()
	cfg.BaseURL = s.URL + "/v1"
	if cfg.Model == "" {
		cfg.Model = "text-embedding-3-small"
	}
	if cfg.Getenv == nil {
		cfg.Getenv = embedtest.Env(map[string]string{"OPENAI_API_KEY": "sk-test-123"})
	}
	c, err := New(cfg)
	require.NoError(t, err)
	sl := &embedtest.Sleeper{}
	opt.Sleep = sl.Sleep
	return embed.New(c, opt), sl
}

func TestWireFormat(t *testing.T) {
	s := newServer(t, 4)
	s.reverse = true // the API may answer out of order
	e, _ := newEmbedder(t, s, Config{Dim: 4}, embed.Options{})
	vecs, err := e.EmbedDocuments(context.Background(), []string{"alpha", "be", "gamma ray"})
	require.NoError(t, err)

	reqs := s.got()
	require.Len(t, reqs, 1)
	assert.Equal(t, "/v1/embeddings", reqs[0].Path)
	assert.Equal(t, "Bearer sk-test-123", reqs[0].Auth)
	assert.Equal(t, map[string]any{
		"model":           "text-embedding-3-small",
		"input":           []any{"alpha", "be", "gamma ray"},
		"dimensions":      float64(4),
		"encoding_format": "float",
	}, reqs[0].Body)

	require.Len(t, vecs, 3)
	for i, text := range []string{"alpha", "be", "gamma ray"} {
		want := embedtest.TextVector(text, 4)
		embed.Normalize(want)
		assert.InDeltaSlice(t, want, vecs[i], 1e-6, "vector %d sorted back by index", i)
	}
	assert.Equal(t, embed.Info{Driver: "openai", Model: "text-embedding-3-small", Dim: 4, Endpoint: s.URL + "/v1"}, e.Info())
}

func TestLocalServerNeedsNoKeyNorDimensions(t *testing.T) {
	s := newServer(t, 6)
	e, _ := newEmbedder(t, s, Config{Model: "nomic-embed-text", Getenv: embedtest.Env(nil)}, embed.Options{})
	assert.Equal(t, 0, e.Info().Dim)
	v, err := e.EmbedQuery(context.Background(), "what is sagasu")
	require.NoError(t, err)
	assert.Len(t, v, 6)
	assert.Equal(t, 6, e.Info().Dim, "learned from the answer")
	reqs := s.got()
	assert.Empty(t, reqs[0].Auth)
	assert.NotContains(t, reqs[0].Body, "dimensions")
}

func TestBase64Vectors(t *testing.T) {
	s := newServer(t, 3)
	s.base64 = true
	e, _ := newEmbedder(t, s, Config{Dim: 3}, embed.Options{})
	v, err := e.EmbedQuery(context.Background(), "hi")
	require.NoError(t, err)
	want := embedtest.TextVector("hi", 3)
	embed.Normalize(want)
	assert.InDeltaSlice(t, want, v, 1e-6)
}

func TestBatching(t *testing.T) {
	s := newServer(t, 4)
	e, _ := newEmbedder(t, s, Config{Dim: 4, MaxBatch: 4}, embed.Options{MaxInFlight: 2})
	texts := make([]string, 10)
	for i := range texts {
		texts[i] = fmt.Sprintf("text number %d%s", i, strings.Repeat("!", i))
	}
	vecs, err := e.EmbedDocuments(context.Background(), texts)
	require.NoError(t, err)
	reqs := s.got()
	require.Len(t, reqs, 3, "10 texts, 4 per request")
	var sizes []int
	for _, r := range reqs {
		sizes = append(sizes, len(r.Inputs))
	}
	assert.ElementsMatch(t, []int{4, 4, 2}, sizes)
	for i, text := range texts {
		want := embedtest.TextVector(text, 4)
		embed.Normalize(want)
		assert.InDeltaSlice(t, want, vecs[i], 1e-6, "text %d", i)
	}
}

func TestRateLimitHonoursRetryAfter(t *testing.T) {
	s := newServer(t, 4)
	s.Then(embedtest.Status(429, "3", `{"error":{"message":"Rate limit reached for text-embedding-3-small","type":"requests","code":"rate_limit_exceeded"}}`))
	e, sl := newEmbedder(t, s, Config{Dim: 4}, embed.Options{})
	_, err := e.EmbedDocuments(context.Background(), []string{"a"})
	require.NoError(t, err)
	assert.Len(t, s.got(), 2)
	assert.Equal(t, []time.Duration{3 * time.Second}, sl.Waits())
}

func TestServerErrorThenSuccess(t *testing.T) {
	s := newServer(t, 4)
	s.Then(embedtest.Status(500, "", `{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`))
	e, sl := newEmbedder(t, s, Config{Dim: 4}, embed.Options{MinBackoff: time.Second, MaxBackoff: time.Minute})
	vecs, err := e.EmbedDocuments(context.Background(), []string{"a", "b"})
	require.NoError(t, err)
	assert.Len(t, vecs, 2)
	assert.Len(t, s.got(), 2)
	require.Len(t, sl.Waits(), 1)
	assert.True(t, sl.Waits()[0] >= 500*time.Millisecond && sl.Waits()[0] <= time.Second, "backoff %s", sl.Waits()[0])
}

func TestTimeout(t *testing.T) {
	s := newServer(t, 4)
	s.Then(s.Hang(), s.Hang())
	e, sl := newEmbedder(t, s, Config{Dim: 4}, embed.Options{Timeout: 20 * time.Millisecond, MaxRetries: 1})
	_, err := e.EmbedDocuments(context.Background(), []string{"a"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `embed openai model "text-embedding-3-small" at `+s.URL+"/v1")
	assert.Contains(t, err.Error(), "20ms request timeout")
	assert.Contains(t, err.Error(), "gave up after 2 attempts")
	assert.Len(t, sl.Waits(), 1)
}

func TestFailures(t *testing.T) {
	cases := []struct {
		name     string
		dim      int
		reply    http.HandlerFunc
		want     []string
		requests int
	}{
		{
			name:     "malformed JSON",
			dim:      4,
			reply:    embedtest.Status(200, "", `{"object":"list","data":[{"index":0,"embedding":[0.1,`),
			want:     []string{"malformed JSON in the answer", `{"object":"list","data":[{"index":0,"embedding":[0.1,`},
			requests: 1,
		},
		{
			name:     "not embeddings",
			dim:      4,
			reply:    embedtest.Status(200, "", `{"hello":"world"}`),
			want:     []string{`the answer has no "data" list`},
			requests: 1,
		},
		{
			name:     "wrong dimension",
			dim:      8,
			reply:    embedtest.Status(200, "", `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,0.2,0.3]}],"model":"m","usage":{"prompt_tokens":1,"total_tokens":1}}`),
			want:     []string{"got a vector of 3 dimensions for text 1, want 8"},
			requests: 1,
		},
		{
			name:     "bad key",
			dim:      4,
			reply:    embedtest.Status(401, "", `{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","code":"invalid_api_key"}}`),
			want:     []string{"HTTP 401 Unauthorized: Incorrect API key provided."},
			requests: 1,
		},
		{
			name:     "unknown model on a local server",
			dim:      4,
			reply:    embedtest.Status(404, "", `{"error":{"message":"model \"nomic\" not found, try pulling it first","type":"api_error"}}`),
			want:     []string{`HTTP 404 Not Found: model "nomic" not found, try pulling it first`},
			requests: 1,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newServer(t, c.dim)
			s.Then(c.reply)
			e, _ := newEmbedder(t, s, Config{Dim: c.dim}, embed.Options{})
			_, err := e.EmbedDocuments(context.Background(), []string{"a"})
			require.Error(t, err)
			msg := err.Error()
			assert.Contains(t, msg, `embed openai model "text-embedding-3-small" at `+s.URL+"/v1: ")
			for _, w := range c.want {
				assert.Contains(t, msg, w)
			}
			assert.NotContains(t, msg, "sk-test-123", "the key never shows")
			assert.Len(t, s.got(), c.requests)
		})
	}
}

func TestEmptyInput(t *testing.T) {
	s := newServer(t, 4)
	e, _ := newEmbedder(t, s, Config{Dim: 4}, embed.Options{})
	_, err := e.EmbedDocuments(context.Background(), []string{"a", ""})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `embed openai model "text-embedding-3-small"`)
	assert.Contains(t, err.Error(), "document 2 of 2 is empty")
	_, err = e.EmbedQuery(context.Background(), " ")
	require.Error(t, err)
	assert.Empty(t, s.got(), "nothing is sent")
}

func TestConfigErrors(t *testing.T) {
	_, err := New(Config{Model: "text-embedding-3-small", Getenv: embedtest.Env(nil)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "OPENAI_API_KEY is not set")

	_, err = New(Config{Model: "m", KeyEnv: "TOGETHER_API_KEY", Getenv: embedtest.Env(nil)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "TOGETHER_API_KEY is not set")

	_, err = New(Config{Getenv: embedtest.Env(nil)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no model")

	_, err = New(Config{Model: "m", BaseURL: "localhost:11434", Getenv: embedtest.Env(nil)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "http://")

	c, err := New(Config{Model: "text-embedding-3-large", Getenv: embedtest.Env(map[string]string{"OPENAI_API_KEY": "k"})})
	require.NoError(t, err)
	assert.Equal(t, embed.Info{Driver: "openai", Model: "text-embedding-3-large", Dim: 3072, Endpoint: DefaultBaseURL}, c.Info())
}

func TestServerDown(t *testing.T) {
	c, err := New(Config{BaseURL: "http://127.0.0.1:1/v1", Model: "nomic-embed-text", Getenv: embedtest.Env(nil)})
	require.NoError(t, err)
	sl := &embedtest.Sleeper{}
	_, err = embed.New(c, embed.Options{Sleep: sl.Sleep}).EmbedQuery(context.Background(), "q")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `embed openai model "nomic-embed-text" at http://127.0.0.1:1/v1: `)
	assert.Contains(t, err.Error(), "connection refused")
	assert.Empty(t, sl.Waits(), "a server that is not there is not retried")
}

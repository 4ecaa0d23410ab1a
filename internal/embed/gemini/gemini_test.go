package gemini

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/embed"
	"github.com/sagasu-dev/sagasu/internal/embed/embedtest"
)

// server speaks the Gemini API's batchEmbedContents: after any scripted
// replies it answers each request properly with vectors of dim floats.
type server struct {
	*embedtest.Server
	dim int
}

// captured is a request as the Gemini server sees it.
type captured struct {
	Method, Path, Key string
	Body              map[string]any
	Texts             []string
}

type batchRequest struct {
	Requests []struct {
		Model   string `json:"model"`
		Content struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"content"`
		TaskType             string `json:"taskType"`
		OutputDimensionality int    `json:"outputDimensionality"`
	} `json:"requests"`
}

func newServer(t *testing.T, dim int) *server {
	s := &server{dim: dim}
	s.Server = embedtest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		var br batchRequest
		if err := json.NewDecoder(r.Body).Decode(&br); err != nil {
			t.Errorf("decoding a request: %v", err)
		}
		type values struct {
			Values []float32 `json:"values"`
		}
		var out struct {
			Embeddings []values `json:"embeddings"`
		}
		for _, t := range br.texts() {
			out.Embeddings = append(out.Embeddings, values{embedtest.TextVector(t, s.dim)})
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		_ = json.NewEncoder(w).Encode(out)
	})
	return s
}

func (br batchRequest) texts() []string {
	var out []string
	for _, q := range br.Requests {
		out = append(out, q.Content.Parts[0].Text)
	}
	return out
}

func (s *server) got() []captured {
	var out []captured
	for _, r := range s.Requests() {
		c := captured{Method: r.Method, Path: r.Path, Key: r.Header.Get("x-goog-api-key")}
		var br batchRequest
		_ = json.Unmarshal(r.Body, &c.Body)
		_ = json.Unmarshal(r.Body, &br)
		c.Texts = br.texts()
		out = append(out, c)
	}
	return out
}

func googleError(code int, status, msg string) string {
	return fmt.Sprintf(`{"error":{"code":%d,"message":%q,"status":%q}}`, code, msg, status)
}

func newEmbedder(t *testing.T, s *server, cfg Config, opt embed.Options) (embed.Embedder, *embedtest.Sleeper) {
	t.Helper()
	cfg.BaseURL = s.URL
	if cfg.Getenv == nil {
		cfg.Getenv = embedtest.Env(map[string]string{"GEMINI_API_KEY": "gm-key-456"})
	}
	c, err := New(context.Background(), cfg)
	require.NoError(t, err)
	sl := &embedtest.Sleeper{}
	opt.Sleep = sl.Sleep
	return embed.New(c, opt), sl
}

func TestWireFormat(t *testing.T) {
	s := newServer(t, 4)
	e, _ := newEmbedder(t, s, Config{Dim: 4}, embed.Options{})
	ctx := context.Background()
	docs, err := e.EmbedDocuments(ctx, []string{"alpha", "beta"})
	require.NoError(t, err)
	q, err := e.EmbedQuery(ctx, "what is alpha")
	require.NoError(t, err)

	reqs := s.got()
	require.Len(t, reqs, 2)
	assert.Equal(t, http.MethodPost, reqs[0].Method)
	assert.Equal(t, "/v1beta/models/gemini-embedding-001:batchEmbedContents", reqs[0].Path)
	assert.Equal(t, "gm-key-456", reqs[0].Key)
	one := func(text, task string) map[string]any {
		return map[string]any{
			"model":                "models/gemini-embedding-001",
			"content":              map[string]any{"parts": []any{map[string]any{"text": text}}},
			"taskType":             task,
			"outputDimensionality": float64(4),
		}
	}
	assert.Equal(t, map[string]any{"requests": []any{
		one("alpha", "RETRIEVAL_DOCUMENT"), one("beta", "RETRIEVAL_DOCUMENT"),
	}}, reqs[0].Body)
	assert.Equal(t, map[string]any{"requests": []any{one("what is alpha", "RETRIEVAL_QUERY")}}, reqs[1].Body)

	for i, v := range append(docs, q) {
		assert.InDelta(t, 1, embed.Dot(v, v), 1e-5, "vector %d is normalised", i)
	}
	want := embedtest.TextVector("beta", 4)
	embed.Normalize(want)
	assert.InDeltaSlice(t, want, docs[1], 1e-6)
	assert.Equal(t, embed.Info{Driver: "gemini", Model: "gemini-embedding-001", Dim: 4, Endpoint: s.URL}, e.Info())
}

func TestFullSizeByDefault(t *testing.T) {
	s := newServer(t, 3072)
	e, _ := newEmbedder(t, s, Config{}, embed.Options{})
	assert.Equal(t, 3072, e.Info().Dim)
	v, err := e.EmbedQuery(context.Background(), "q")
	require.NoError(t, err)
	assert.Len(t, v, 3072)
	body := s.got()[0].Body["requests"].([]any)[0].(map[string]any)
	assert.NotContains(t, body, "outputDimensionality")
}

func TestKeyFromEnvironment(t *testing.T) {
	s := newServer(t, 4)
	_, err := New(context.Background(), Config{BaseURL: s.URL, Getenv: embedtest.Env(nil)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "GEMINI_API_KEY")

	e, _ := newEmbedder(t, s, Config{Dim: 4, Getenv: embedtest.Env(map[string]string{"GOOGLE_API_KEY": "g-key"})}, embed.Options{})
	_, err = e.EmbedQuery(context.Background(), "q")
	require.NoError(t, err)
	assert.Equal(t, "g-key", s.got()[0].Key)
}

func TestBatching(t *testing.T) {
	s := newServer(t, 4)
	e, _ := newEmbedder(t, s, Config{Dim: 4}, embed.Options{})
	texts := make([]string, 250)
	for i := range texts {
		texts[i] = fmt.Sprintf("passage %d", i)
	}
	vecs, err := e.EmbedDocuments(context.Background(), texts)
	require.NoError(t, err)
	var sizes []int
	for _, r := range s.got() {
		sizes = append(sizes, len(r.Texts))
	}
	assert.ElementsMatch(t, []int{100, 100, 50}, sizes, "the API takes at most 100 per request")
	for i, text := range texts {
		want := embedtest.TextVector(text, 4)
		embed.Normalize(want)
		assert.InDeltaSlice(t, want, vecs[i], 1e-6)
	}
}

func TestRateLimitHonoursRetryAfter(t *testing.T) {
	s := newServer(t, 4)
	s.Then(embedtest.Status(429, "5", googleError(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).")))
	e, sl := newEmbedder(t, s, Config{Dim: 4}, embed.Options{})
	_, err := e.EmbedDocuments(context.Background(), []string{"a"})
	require.NoError(t, err)
	assert.Len(t, s.got(), 2)
	assert.Equal(t, []time.Duration{5 * time.Second}, sl.Waits())
}

func TestServerErrorThenSuccess(t *testing.T) {
	s := newServer(t, 4)
	s.Then(embedtest.Status(500, "", googleError(500, "INTERNAL", "An internal error has occurred.")),
		embedtest.Status(503, "", googleError(503, "UNAVAILABLE", "The model is overloaded.")))
	e, sl := newEmbedder(t, s, Config{Dim: 4}, embed.Options{MinBackoff: time.Second, MaxBackoff: time.Minute})
	_, err := e.EmbedDocuments(context.Background(), []string{"a"})
	require.NoError(t, err)
	assert.Len(t, s.got(), 3)
	require.Len(t, sl.Waits(), 2)
	assert.True(t, sl.Waits()[0] >= 500*time.Millisecond && sl.Waits()[0] <= time.Second, "first wait %s", sl.Waits()[0])
	assert.True(t, sl.Waits()[1] >= time.Second && sl.Waits()[1] <= 2*time.Second, "second wait %s", sl.Waits()[1])
}

func TestTimeout(t *testing.T) {
	s := newServer(t, 4)
	s.Then(s.Hang())
	e, sl := newEmbedder(t, s, Config{Dim: 4}, embed.Options{Timeout: 20 * time.Millisecond, MaxRetries: -1})
	_, err := e.EmbedQuery(context.Background(), "q")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `embed gemini model "gemini-embedding-001" at `+s.URL)
	assert.Contains(t, err.Error(), "20ms request timeout")
	assert.Empty(t, sl.Waits())
	assert.Len(t, s.got(), 1)
}

func TestFailures(t *testing.T) {
	cases := []struct {
		name  string
		reply http.HandlerFunc
		want  string
	}{
		{"malformed JSON", embedtest.Status(200, "", `{"embeddings":[{"values":[0.1,`), "batchEmbedContents: malformed"},
		{"wrong dimension", embedtest.Status(200, "", `{"embeddings":[{"values":[0.1,0.2,0.3]}]}`), "got a vector of 3 dimensions for text 1, want 4"},
		{"too few vectors", embedtest.Status(200, "", `{"embeddings":[]}`), "got 0 vectors for 1 texts"},
		{"bad key", embedtest.Status(400, "", googleError(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.")),
			"HTTP 400 Bad Request: API key not valid. Please pass a valid API key."},
		{"bad dimensionality", embedtest.Status(400, "", googleError(400, "INVALID_ARGUMENT", "* BatchEmbedContentsRequest.requests[0].output_dimensionality: out of range")),
			"output_dimensionality: out of range"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newServer(t, 4)
			s.Then(c.reply)
			e, _ := newEmbedder(t, s, Config{Dim: 4}, embed.Options{})
			_, err := e.EmbedDocuments(context.Background(), []string{"a"})
			require.Error(t, err)
			assert.Contains(t, err.Error(), `embed gemini model "gemini-embedding-001" at `+s.URL+": ")
			assert.Contains(t, err.Error(), c.want)
			assert.NotContains(t, err.Error(), "gm-key-456")
			assert.Len(t, s.got(), 1, "not retried")
		})
	}
}

func TestEmptyInput(t *testing.T) {
	s := newServer(t, 4)
	e, _ := newEmbedder(t, s, Config{Dim: 4}, embed.Options{})
	_, err := e.EmbedDocuments(context.Background(), []string{""})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "document 1 of 1 is empty")
	_, err = e.EmbedQuery(context.Background(), "")
	require.Error(t, err)
	assert.Empty(t, s.got())
}

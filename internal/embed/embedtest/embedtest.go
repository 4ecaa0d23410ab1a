// Package embedtest helps test code that embeds text: Hashing, a
// deterministic embedder that needs no model or network, for tests of the
// code around an embedder; and, for the drivers' protocol tests, a scripted
// HTTP server and a Sleeper that records retry waits instead of waiting.
package embedtest

import (
	"bytes"
	"context"
	"encoding/json"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/sagasu-dev/sagasu/internal/embed"
)

// Hashing is an embed.Client that hashes each lowercased word of a text to
// one of Dim buckets (with a sign) and counts them: texts that share words
// get similar vectors, the same text always the same vector. It is a
// stand-in for tests of our own logic, not a model.
type Hashing struct{ Dim int }

// New is an Embedder over Hashing{Dim: dim} with default options.
func New(dim int) embed.Embedder { return embed.New(Hashing{Dim: dim}, embed.Options{}) }

// Info names the stand-in model.
func (h Hashing) Info() embed.Info {
	return embed.Info{Driver: "test", Model: "hashing", Dim: h.Dim}
}

// MaxBatch is 64.
func (Hashing) MaxBatch() int { return 64 }

// Embed hashes the words of each text.
func (h Hashing) Embed(ctx context.Context, texts []string, _ embed.Task) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		v := make([]float32, h.Dim)
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r)
		}) {
			f := fnv.New32a()
			f.Write([]byte(w))
			x := f.Sum32()
			if x&(1<<31) != 0 {
				v[int(x%uint32(h.Dim))]--
			} else {
				v[int(x%uint32(h.Dim))]++
			}
		}
		out[i] = v
	}
	return out, nil
}

// Sleeper records the waits asked of it and returns at once; put its Sleep
// in embed.Options to test retries without wall-clock waits.
type Sleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

// Sleep records d and returns ctx's error, if any.
func (s *Sleeper) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	return ctx.Err()
}

// Waits returns the waits asked for so far.
func (s *Sleeper) Waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// Request is what a Server received.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// Server is an httptest server that answers each request with the next
// scripted reply, and with its default handler once the script has run
// out. It records every request.
type Server struct {
	URL string

	t        testing.TB
	answer   http.HandlerFunc
	done     chan struct{}
	mu       sync.Mutex
	script   []http.HandlerFunc
	requests []Request
}

// NewServer starts a server that answers with answer when no scripted reply
// is left; it stops when the test ends.
func NewServer(t testing.TB, answer http.HandlerFunc) *Server {
	s := &Server{t: t, answer: answer, done: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(s.done) }) // runs first: lets hanging replies go
	s.URL = srv.URL
	return s
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.t.Errorf("reading a request: %v", err)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	reply := s.answer
	if len(s.script) > 0 {
		reply, s.script = s.script[0], s.script[1:]
	}
	s.mu.Unlock()
	reply(w, r)
}

// Then queues replies for the next requests, in order.
func (s *Server) Then(replies ...http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, replies...)
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Status is a reply with the given status code, Retry-After header (if not
// empty) and JSON body.
func Status(code int, retryAfter, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}
}

// Hang is a reply that never comes: it waits until the client gives up
// (or the test ends).
func (s *Server) Hang() http.HandlerFunc {
	return func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
	}
}

// Env is a Getenv that knows only vals, for driver configs.
func Env(vals map[string]string) func(string) string {
	return func(k string) string { return vals[k] }
}

// TextVector is the vector a test server gives text: unnormalised, and
// different for texts that differ in length or first byte.
func TextVector(text string, dim int) []float32 {
	v := make([]float32, dim)
	v[0] = float32(len(text))
	v[1%dim] += float32(text[0])
	return v
}

// OpenAI answers OpenAI embedding requests with TextVector(text, dim) for
// each input, after passing the inputs to seen (which may be nil): the
// stand-in for an OpenAI-compatible server in tests of the code above a
// driver (use with NewServer).
func OpenAI(t testing.TB, dim int, seen func(texts []string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("bad request body: %v", err)
		}
		if seen != nil {
			seen(req.Input)
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var out struct {
			Data []item `json:"data"`
		}
		for i, text := range req.Input {
			out.Data = append(out.Data, item{i, TextVector(text, dim)})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}
}

// Package embed turns text into vectors for semantic search.
//
// A driver (openai, gemini, static) implements the small batch-level Client;
// New wraps a Client in an Embedder that adds what every driver needs:
// batching, a bound on requests in flight, retries with backoff that honours
// Retry-After, a timeout per request, a cache of query vectors and checks on
// what comes back. Every Embedder made by New returns L2-normalised vectors,
// so the cosine similarity of two of them is their dot product.
package embed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Info names an embedding model. Driver, Model and Dim together decide which
// vectors come out: an index pins them and refuses to mix vectors of two
// models. Endpoint only says where the model runs (a base URL or a file
// path), for messages; it never holds a key.
type Info struct {
	Driver   string // "openai", "gemini", "static"
	Model    string // the model's name as the driver knows it
	Dim      int    // vector length; 0 while not yet known
	Endpoint string // base URL or file path, for messages
}

// Task says what a text will be used for. Some vendors embed a document and
// a query differently (Gemini's RETRIEVAL_DOCUMENT and RETRIEVAL_QUERY).
type Task int

// Tasks.
const (
	TaskDocument Task = iota // a passage to be stored and found
	TaskQuery                // a search query
)

// String names the task: "document" or "query".
func (t Task) String() string {
	if t == TaskQuery {
		return "query"
	}
	return "document"
}

// Embedder turns documents and queries into L2-normalised vectors of
// Info().Dim floats. It is safe for concurrent use.
type Embedder interface {
	Info() Info
	// EmbedDocuments returns one vector per text, in order. An empty slice
	// gives an empty result; an empty or blank text is an error.
	EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error)
	// EmbedQuery returns the vector of one search query.
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
}

// Client is what a driver implements: one request for one batch of texts.
// Embed returns exactly one vector per text, in order, of Info().Dim floats
// (or of any length, the same for all, while Dim is 0); the vectors need not
// be normalised. It reports an HTTP failure as a *StatusError so that New can
// tell what to retry. Errors need not name the driver, model or endpoint:
// the Embedder from New adds them.
type Client interface {
	Info() Info
	Embed(ctx context.Context, texts []string, task Task) ([][]float32, error)
	// MaxBatch is the most texts one Embed call may take.
	MaxBatch() int
}

// Options tune the Embedder that New builds. The zero value gives the
// defaults noted on each field.
type Options struct {
	// BatchSize is how many texts go in one request: 0 means the client's
	// MaxBatch; larger values are cut to MaxBatch.
	BatchSize int
	// MaxInFlight bounds the requests under way at once (default 4).
	MaxInFlight int
	// MaxRetries is how often a failed request is tried again after a
	// 408, 429 or 5xx answer, a timeout or a dropped connection (default 5;
	// negative: never).
	MaxRetries int
	// Timeout bounds each request, each retry on its own (default 60s;
	// negative: none).
	Timeout time.Duration
	// QueryCacheSize is how many query vectors are kept, least recently
	// used dropped first (default 1024; negative: no cache).
	QueryCacheSize int
	// MinBackoff and MaxBackoff bound the wait before a retry when the
	// server gives no Retry-After: it doubles from MinBackoff (default
	// 500ms) up to MaxBackoff (default 30s), with jitter.
	MinBackoff, MaxBackoff time.Duration
	// MaxRetryAfter is the longest Retry-After that is waited out; a server
	// that asks for longer makes the call fail at once (default 2m).
	MaxRetryAfter time.Duration
	// Sleep waits d or until ctx is done; tests replace it to run without
	// wall-clock waits. Default: a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now tells the time, to read a Retry-After given as a date. Default
	// time.Now.
	Now func() time.Time
	// Logger gets a line per retry. Default slog.Default().
	Logger *slog.Logger
}

func (o Options) withDefaults(maxBatch int) Options {
	if maxBatch <= 0 {
		maxBatch = 1
	}
	if o.BatchSize <= 0 || o.BatchSize > maxBatch {
		o.BatchSize = maxBatch
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 4
	}
	switch {
	case o.MaxRetries == 0:
		o.MaxRetries = 5
	case o.MaxRetries < 0:
		o.MaxRetries = 0
	}
	if o.Timeout == 0 {
		o.Timeout = 60 * time.Second
	}
	if o.QueryCacheSize == 0 {
		o.QueryCacheSize = 1024
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 500 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 30 * time.Second
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = o.MinBackoff
	}
	if o.MaxRetryAfter <= 0 {
		o.MaxRetryAfter = 2 * time.Minute
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// New wraps a driver's Client in an Embedder with the given options.
func New(c Client, opt Options) Embedder {
	e := &embedder{c: c, opt: opt.withDefaults(c.MaxBatch())}
	e.dim.Store(int64(c.Info().Dim))
	if e.opt.QueryCacheSize > 0 {
		e.cache = newLRU(e.opt.QueryCacheSize)
	}
	return e
}

type embedder struct {
	c     Client
	opt   Options
	dim   atomic.Int64 // learned from the first answer when the client did not know it
	cache *lru
}

func (e *embedder) Info() Info {
	inf := e.c.Info()
	inf.Dim = int(e.dim.Load())
	return inf
}

// errorf makes an error that names the model and where it runs.
func (e *embedder) errorf(format string, args ...any) error {
	inf := e.c.Info()
	prefix := fmt.Sprintf("embed %s model %q", inf.Driver, inf.Model)
	if inf.Endpoint != "" {
		prefix += " at " + inf.Endpoint
	}
	return fmt.Errorf(prefix+": "+format, args...)
}

func (e *embedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return [][]float32{}, nil
	}
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			return nil, e.errorf("document %d of %d is empty: there is nothing to embed", i+1, len(texts))
		}
	}
	out := make([][]float32, len(texts))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
		slots    = make(chan struct{}, e.opt.MaxInFlight)
	)
	fail := func(err error) {
		once.Do(func() { firstErr = err; cancel() })
	}
send:
	for start := 0; start < len(texts); start += e.opt.BatchSize {
		end := min(start+e.opt.BatchSize, len(texts))
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			break send
		}
		wg.Go(func() {
			defer func() { <-slots }()
			vecs, err := e.embedBatch(ctx, texts[start:end], TaskDocument)
			if err != nil {
				fail(err)
				return
			}
			copy(out[start:end], vecs)
			if done, ok := ctx.Value(progressKey{}).(func(int)); ok {
				done(end - start)
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, e.errorf("embedding %d documents: %w", len(texts), err)
	}
	return out, nil
}

// progressKey is the context key of WithProgress.
type progressKey struct{}

// WithProgress returns a context under which an Embedder made by New calls
// done with the number of texts of each request of EmbedDocuments as it
// completes (from the goroutine that sent it), so that a long call can
// report how far it is.
func WithProgress(ctx context.Context, done func(n int)) context.Context {
	return context.WithValue(ctx, progressKey{}, done)
}

func (e *embedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if strings.TrimSpace(text) == "" {
		return nil, e.errorf("the query is empty: there is nothing to embed")
	}
	if e.cache != nil {
		if v, ok := e.cache.get(text); ok {
			return v, nil
		}
	}
	vecs, err := e.embedBatch(ctx, []string{text}, TaskQuery)
	if err != nil {
		return nil, err
	}
	if e.cache != nil {
		e.cache.put(text, vecs[0])
	}
	return vecs[0], nil
}

// embedBatch sends one batch, retrying what is worth retrying, and checks
// and normalises what comes back.
func (e *embedder) embedBatch(ctx context.Context, texts []string, task Task) ([][]float32, error) {
	for attempt := 0; ; attempt++ {
		vecs, err := e.attempt(ctx, texts, task)
		if err == nil {
			if err := e.check(vecs, len(texts)); err != nil {
				return nil, err
			}
			return vecs, nil
		}
		if ctx.Err() != nil {
			return nil, e.errorf("embedding %d %ss: %w", len(texts), task, ctx.Err())
		}
		if !retryable(err) {
			return nil, e.errorf("%w", err)
		}
		if attempt >= e.opt.MaxRetries {
			return nil, e.errorf("%w (gave up after %d attempts)", err, attempt+1)
		}
		wait, werr := e.wait(err, attempt)
		if werr != nil {
			return nil, werr
		}
		e.opt.Logger.Warn("embed: retrying", "driver", e.c.Info().Driver, "model", e.c.Info().Model,
			"attempt", attempt+2, "wait", wait, "err", err)
		if err := e.opt.Sleep(ctx, wait); err != nil {
			return nil, e.errorf("waiting to retry: %w", err)
		}
	}
}

// attempt makes one request under the per-request timeout.
func (e *embedder) attempt(ctx context.Context, texts []string, task Task) ([][]float32, error) {
	if e.opt.Timeout < 0 {
		return e.c.Embed(ctx, texts, task)
	}
	actx, cancel := context.WithTimeout(ctx, e.opt.Timeout)
	defer cancel()
	vecs, err := e.c.Embed(actx, texts, task)
	if err != nil && ctx.Err() == nil && actx.Err() != nil {
		// The request's own timeout fired, not the caller's context.
		return nil, &timeoutError{after: e.opt.Timeout, err: err}
	}
	return vecs, err
}

// timeoutError is a request that outlived Options.Timeout.
type timeoutError struct {
	after time.Duration
	err   error
}

func (t *timeoutError) Error() string {
	return fmt.Sprintf("no answer within the %s request timeout (%v)", t.after, t.err)
}
func (t *timeoutError) Unwrap() error { return t.err }

// wait says how long to wait before retry number attempt+1.
func (e *embedder) wait(err error, attempt int) (time.Duration, error) {
	var se *StatusError
	if errors.As(err, &se) && se.RetryAfter != "" {
		if d, ok := ParseRetryAfter(se.RetryAfter, e.opt.Now()); ok && d > 0 {
			if d > e.opt.MaxRetryAfter {
				return 0, e.errorf("%w: the server asks to wait %s before trying again, longer than the %s this client waits",
					err, d.Round(time.Second), e.opt.MaxRetryAfter)
			}
			return d, nil
		}
	}
	return Backoff(attempt, e.opt.MinBackoff, e.opt.MaxBackoff), nil
}

// check verifies the answer to one batch and normalises its vectors.
func (e *embedder) check(vecs [][]float32, n int) error {
	if len(vecs) != n {
		return e.errorf("got %d vectors for %d texts", len(vecs), n)
	}
	want := int(e.dim.Load())
	if want == 0 && len(vecs[0]) > 0 {
		// The first answer tells the dimension of a model whose size was not given.
		e.dim.CompareAndSwap(0, int64(len(vecs[0])))
		want = int(e.dim.Load())
	}
	for i, v := range vecs {
		if len(v) != want {
			return e.errorf("got a vector of %d dimensions for text %d, want %d (is the configured dimension right for this model?)",
				len(v), i+1, want)
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return e.errorf("got a vector with NaN or infinite values for text %d", i+1)
			}
		}
		Normalize(v)
	}
	return nil
}

// Probe returns e's Info with its dimension known, embedding one short query
// if the model's dimension was not configured and no call has taught it yet.
func Probe(ctx context.Context, e Embedder) (Info, error) {
	if inf := e.Info(); inf.Dim > 0 {
		return inf, nil
	}
	if _, err := e.EmbedQuery(ctx, "dimension probe"); err != nil {
		return Info{}, err
	}
	return e.Info(), nil
}

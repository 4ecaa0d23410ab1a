package embed_test

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/embed"
	"github.com/sagasu-dev/sagasu/internal/embed/embedtest"
)

// fakeClient is a scripted Client: each call pops the next scripted error
// (nil means answer), and answers with vectors derived from the text length.
type fakeClient struct {
	info     embed.Info
	maxBatch int

	mu       sync.Mutex
	errs     []error
	calls    [][]string
	tasks    []embed.Task
	inFlight int
	maxSeen  int
	block    bool // wait for ctx to end instead of answering
	vecLen   int  // length of returned vectors; default info.Dim
}

func (f *fakeClient) Info() embed.Info { return f.info }
func (f *fakeClient) MaxBatch() int    { return f.maxBatch }

func (f *fakeClient) Embed(ctx context.Context, texts []string, task embed.Task) ([][]float32, error) {
	f.mu.Lock()
	f.calls = append(f.calls, texts)
	f.tasks = append(f.tasks, task)
	f.inFlight++
	f.maxSeen = max(f.maxSeen, f.inFlight)
	var err error
	if len(f.errs) > 0 {
		err, f.errs = f.errs[0], f.errs[1:]
	}
	block := f.block
	f.mu.Unlock()
	defer func() { f.mu.Lock(); f.inFlight--; f.mu.Unlock() }()
	if block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	// Give other goroutines a chance to overlap, so that the in-flight
	// bound is exercised.
	time.Sleep(time.Millisecond)
	if err != nil {
		return nil, err
	}
	n := f.vecLen
	if n == 0 {
		n = f.info.Dim
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, n)
		v[0] = float32(len(t))
		if n > 1 {
			v[1] = 1
		}
		out[i] = v
	}
	return out, nil
}

func (f *fakeClient) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func newFake(dim int) *fakeClient {
	return &fakeClient{info: embed.Info{Driver: "fake", Model: "m1", Dim: dim, Endpoint: "http://fake"}, maxBatch: 100}
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strings.Repeat("x", i+1)
	}
	return out
}

func TestBatchingKeepsOrderAndNormalises(t *testing.T) {
	f := newFake(4)
	e := embed.New(f, embed.Options{BatchSize: 3, Sleep: (&embedtest.Sleeper{}).Sleep})
	vecs, err := e.EmbedDocuments(context.Background(), texts(10))
	require.NoError(t, err)
	require.Len(t, vecs, 10)
	assert.Equal(t, 4, f.callCount(), "10 texts in batches of 3")
	for i, v := range vecs {
		// v was (i+1, 1, 0, 0) before normalising.
		n := float32(math.Sqrt(float64((i+1)*(i+1) + 1)))
		assert.InDelta(t, float32(i+1)/n, v[0], 1e-6, "vector %d in its text's place", i)
		assert.InDelta(t, 1, embed.Dot(v, v), 1e-5)
	}
	for _, task := range f.tasks {
		assert.Equal(t, embed.TaskDocument, task)
	}
}

// A long EmbedDocuments call says how far it is, request by request.
func TestProgressPerRequest(t *testing.T) {
	f := newFake(2)
	e := embed.New(f, embed.Options{BatchSize: 4, MaxInFlight: 2})
	var mu sync.Mutex
	var reports []int
	ctx := embed.WithProgress(context.Background(), func(n int) {
		mu.Lock()
		reports = append(reports, n)
		mu.Unlock()
	})
	_, err := e.EmbedDocuments(ctx, texts(10))
	require.NoError(t, err)
	total := 0
	for _, n := range reports {
		total += n
	}
	assert.Len(t, reports, 3, "one report per request of 4, 4 and 2 texts")
	assert.Equal(t, 10, total)
}

func TestBatchSizeIsCutToClientMax(t *testing.T) {
	f := newFake(2)
	f.maxBatch = 4
	e := embed.New(f, embed.Options{BatchSize: 50})
	_, err := e.EmbedDocuments(context.Background(), texts(9))
	require.NoError(t, err)
	assert.Equal(t, 3, f.callCount())
}

func TestInFlightIsBounded(t *testing.T) {
	f := newFake(2)
	e := embed.New(f, embed.Options{BatchSize: 1, MaxInFlight: 3})
	_, err := e.EmbedDocuments(context.Background(), texts(40))
	require.NoError(t, err)
	assert.Equal(t, 40, f.callCount())
	assert.LessOrEqual(t, f.maxSeen, 3)
}

func TestRetryAfterSecondsIsHonoured(t *testing.T) {
	f := newFake(2)
	f.errs = []error{&embed.StatusError{StatusCode: 429, Message: "slow down", RetryAfter: "7"}}
	s := &embedtest.Sleeper{}
	e := embed.New(f, embed.Options{Sleep: s.Sleep})
	v, err := e.EmbedQuery(context.Background(), "hello")
	require.NoError(t, err)
	assert.Len(t, v, 2)
	assert.Equal(t, 2, f.callCount())
	assert.Equal(t, []time.Duration{7 * time.Second}, s.Waits())
	assert.Equal(t, embed.TaskQuery, f.tasks[0])
}

func TestRetryAfterDateIsHonoured(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	f := newFake(2)
	f.errs = []error{&embed.StatusError{StatusCode: 503, RetryAfter: now.Add(90 * time.Second).Format(http.TimeFormat)}}
	s := &embedtest.Sleeper{}
	e := embed.New(f, embed.Options{Sleep: s.Sleep, Now: func() time.Time { return now }})
	_, err := e.EmbedDocuments(context.Background(), []string{"a"})
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{90 * time.Second}, s.Waits())
}

func TestRetryAfterTooLongFailsAtOnce(t *testing.T) {
	f := newFake(2)
	f.errs = []error{&embed.StatusError{StatusCode: 429, RetryAfter: "86400"}}
	s := &embedtest.Sleeper{}
	e := embed.New(f, embed.Options{Sleep: s.Sleep})
	_, err := e.EmbedDocuments(context.Background(), []string{"a"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "24h0m0s")
	assert.Empty(t, s.Waits())
	assert.Equal(t, 1, f.callCount())
}

func TestServerErrorThenSuccessBacksOff(t *testing.T) {
	f := newFake(2)
	f.errs = []error{&embed.StatusError{StatusCode: 500}, &embed.StatusError{StatusCode: 502}}
	s := &embedtest.Sleeper{}
	e := embed.New(f, embed.Options{Sleep: s.Sleep, MinBackoff: time.Second, MaxBackoff: 10 * time.Second})
	_, err := e.EmbedDocuments(context.Background(), []string{"a"})
	require.NoError(t, err)
	assert.Equal(t, 3, f.callCount())
	require.Len(t, s.Waits(), 2)
	assert.True(t, s.Waits()[0] >= 500*time.Millisecond && s.Waits()[0] <= time.Second, "first wait %s", s.Waits()[0])
	assert.True(t, s.Waits()[1] >= time.Second && s.Waits()[1] <= 2*time.Second, "second wait %s", s.Waits()[1])
}

func TestGivesUpAfterMaxRetries(t *testing.T) {
	f := newFake(2)
	for range 10 {
		f.errs = append(f.errs, &embed.StatusError{StatusCode: 503, Message: "overloaded"})
	}
	s := &embedtest.Sleeper{}
	e := embed.New(f, embed.Options{Sleep: s.Sleep, MaxRetries: 2})
	_, err := e.EmbedDocuments(context.Background(), []string{"a"})
	require.Error(t, err)
	assert.Equal(t, 3, f.callCount())
	assert.Contains(t, err.Error(), `embed fake model "m1" at http://fake: HTTP 503 Service Unavailable: overloaded (gave up after 3 attempts)`)
	var se *embed.StatusError
	assert.True(t, errors.As(err, &se), "the embed.StatusError stays reachable")
}

func TestClientErrorIsNotRetried(t *testing.T) {
	f := newFake(2)
	f.errs = []error{&embed.StatusError{StatusCode: 401, Message: "bad key"}}
	e := embed.New(f, embed.Options{Sleep: (&embedtest.Sleeper{}).Sleep})
	_, err := e.EmbedDocuments(context.Background(), []string{"a"})
	require.Error(t, err)
	assert.Equal(t, 1, f.callCount())
	assert.Contains(t, err.Error(), "401")
	assert.Contains(t, err.Error(), "bad key")
}

func TestRequestTimeoutIsRetriedThenReported(t *testing.T) {
	f := newFake(2)
	f.block = true
	s := &embedtest.Sleeper{}
	e := embed.New(f, embed.Options{Sleep: s.Sleep, Timeout: time.Millisecond, MaxRetries: 1})
	_, err := e.EmbedDocuments(context.Background(), []string{"a"})
	require.Error(t, err)
	assert.Equal(t, 2, f.callCount())
	assert.Len(t, s.Waits(), 1)
	assert.Contains(t, err.Error(), "request timeout")
	assert.True(t, errors.Is(err, context.DeadlineExceeded))
}

func TestCallerCancelIsNotRetried(t *testing.T) {
	f := newFake(2)
	f.block = true
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for f.callCount() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	e := embed.New(f, embed.Options{Sleep: (&embedtest.Sleeper{}).Sleep})
	_, err := e.EmbedDocuments(ctx, texts(3))
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled))
	assert.Equal(t, 1, f.callCount())
}

func TestFirstErrorStopsOtherBatches(t *testing.T) {
	f := newFake(2)
	f.errs = []error{&embed.StatusError{StatusCode: 400, Message: "too long"}}
	e := embed.New(f, embed.Options{BatchSize: 1, MaxInFlight: 1})
	_, err := e.EmbedDocuments(context.Background(), texts(20))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "too long")
	assert.Less(t, f.callCount(), 20)
}

func TestAnswersAreChecked(t *testing.T) {
	cases := []struct {
		name   string
		dim    int
		vecLen int
		want   string
	}{
		{"wrong dimension", 4, 3, "got a vector of 3 dimensions for text 1, want 4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(c.dim)
			f.vecLen = c.vecLen
			e := embed.New(f, embed.Options{})
			_, err := e.EmbedDocuments(context.Background(), []string{"a"})
			require.Error(t, err)
			assert.Contains(t, err.Error(), `embed fake model "m1" at http://fake: `+c.want)
		})
	}
	t.Run("wrong count", func(t *testing.T) {
		e := embed.New(countClient{newFake(2)}, embed.Options{})
		_, err := e.EmbedDocuments(context.Background(), texts(3))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "got 2 vectors for 3 texts")
	})
	t.Run("NaN", func(t *testing.T) {
		e := embed.New(nanClient{newFake(2)}, embed.Options{})
		_, err := e.EmbedDocuments(context.Background(), texts(1))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "NaN")
	})
}

type countClient struct{ *fakeClient }

func (c countClient) Embed(ctx context.Context, texts []string, task embed.Task) ([][]float32, error) {
	v, err := c.fakeClient.Embed(ctx, texts, task)
	return v[:len(v)-1], err
}

type nanClient struct{ *fakeClient }

func (c nanClient) Embed(ctx context.Context, texts []string, task embed.Task) ([][]float32, error) {
	v, err := c.fakeClient.Embed(ctx, texts, task)
	v[0][1] = float32(math.NaN())
	return v, err
}

func TestDimensionIsLearnedWhenUnknown(t *testing.T) {
	f := newFake(0)
	f.vecLen = 5
	e := embed.New(f, embed.Options{})
	assert.Equal(t, 0, e.Info().Dim)
	inf, err := embed.Probe(context.Background(), e)
	require.NoError(t, err)
	assert.Equal(t, 5, inf.Dim)
	assert.Equal(t, 5, e.Info().Dim)
	f.vecLen = 6
	_, err = e.EmbedDocuments(context.Background(), []string{"a"})
	require.Error(t, err, "a model cannot change its dimension")
}

func TestEmptyInput(t *testing.T) {
	f := newFake(2)
	e := embed.New(f, embed.Options{})
	vecs, err := e.EmbedDocuments(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, vecs)

	_, err = e.EmbedDocuments(context.Background(), []string{"a", "  \n", "b"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `embed fake model "m1" at http://fake: document 2 of 3 is empty`)

	_, err = e.EmbedQuery(context.Background(), "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "query is empty")
	assert.Equal(t, 0, f.callCount())
}

func TestQueryCache(t *testing.T) {
	f := newFake(2)
	e := embed.New(f, embed.Options{QueryCacheSize: 2})
	ctx := context.Background()
	a1, err := e.EmbedQuery(ctx, "a")
	require.NoError(t, err)
	a1[0] = 42 // a caller's change must not reach the cache
	a2, err := e.EmbedQuery(ctx, "a")
	require.NoError(t, err)
	assert.Equal(t, 1, f.callCount())
	assert.NotEqual(t, float32(42), a2[0])

	_, _ = e.EmbedQuery(ctx, "b")
	_, _ = e.EmbedQuery(ctx, "c") // pushes out "a", the least recently used
	assert.Equal(t, 3, f.callCount())
	_, _ = e.EmbedQuery(ctx, "c")
	assert.Equal(t, 3, f.callCount())
	_, _ = e.EmbedQuery(ctx, "a")
	assert.Equal(t, 4, f.callCount())

	// Documents never go through the query cache.
	_, _ = e.EmbedDocuments(ctx, []string{"a"})
	assert.Equal(t, 5, f.callCount())
}

func TestQueryCacheOff(t *testing.T) {
	f := newFake(2)
	e := embed.New(f, embed.Options{QueryCacheSize: -1})
	for range 3 {
		_, err := e.EmbedQuery(context.Background(), "a")
		require.NoError(t, err)
	}
	assert.Equal(t, 3, f.callCount())
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"3", 3 * time.Second, true},
		{" 0.5 ", 500 * time.Millisecond, true},
		{"0", 0, true},
		{now.Add(time.Minute).Format(http.TimeFormat), time.Minute, true},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0, true},
		{"", 0, false},
		{"-1", 0, false},
		{"soon", 0, false},
	}
	for _, c := range cases {
		d, ok := embed.ParseRetryAfter(c.in, now)
		assert.Equal(t, c.ok, ok, c.in)
		assert.Equal(t, c.want, d, c.in)
	}
}

func TestBackoffGrowsAndIsCapped(t *testing.T) {
	for attempt, hi := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second} {
		for range 20 {
			d := embed.Backoff(attempt, time.Second, 5*time.Second)
			assert.True(t, d >= hi/2 && d <= hi, "attempt %d: %s", attempt, d)
		}
	}
}

func TestStatusErrorMessage(t *testing.T) {
	cases := []struct{ body, want string }{
		{`{"error":{"message":"Invalid API key","type":"invalid_request_error"}}`, "Invalid API key"},
		{`{"error":"model not found"}`, "model not found"},
		{`{"message":"busy"}`, "busy"},
		{"<html>\n  Bad   Gateway</html>", "<html> Bad Gateway</html>"},
	}
	for _, c := range cases {
		resp := &http.Response{StatusCode: 502, Header: http.Header{"Retry-After": {"2"}}, Body: nopCloser{strings.NewReader(c.body)}}
		se := embed.ReadStatusError(resp)
		assert.Equal(t, c.want, se.Message)
		assert.Equal(t, "2", se.RetryAfter)
	}
	assert.Equal(t, "HTTP 429 Too Many Requests: x", (&embed.StatusError{StatusCode: 429, Message: "x"}).Error())
}

type nopCloser struct{ *strings.Reader }

func (nopCloser) Close() error { return nil }

func TestCounter(t *testing.T) {
	c := embed.NewCounter(embed.New(newFake(2), embed.Options{}))
	ctx := context.Background()
	_, _ = c.EmbedDocuments(ctx, texts(5))
	_, _ = c.EmbedDocuments(ctx, texts(2))
	_, _ = c.EmbedQuery(ctx, "q")
	assert.Equal(t, embed.Counts{DocumentCalls: 2, Documents: 7, Queries: 1}, c.Counts())
	assert.Equal(t, "m1", c.Info().Model)
	c.Reset()
	assert.Equal(t, embed.Counts{}, c.Counts())
}

func TestVectorMath(t *testing.T) {
	v := []float32{3, 4}
	embed.Normalize(v)
	assert.InDeltaSlice(t, []float32{0.6, 0.8}, v, 1e-6)
	z := []float32{0, 0}
	embed.Normalize(z)
	assert.Equal(t, []float32{0, 0}, z)
	assert.InDelta(t, 1, embed.Cosine([]float32{1, 2}, []float32{2, 4}), 1e-6)
	assert.InDelta(t, 0, embed.Cosine([]float32{1, 0}, []float32{0, 3}), 1e-6)
	assert.Equal(t, float32(0), embed.Cosine([]float32{0, 0}, []float32{1, 1}))
	assert.InDelta(t, 11, embed.Dot([]float32{1, 2}, []float32{3, 4}), 1e-6)
}

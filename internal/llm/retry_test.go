package llm_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/llm/llmtest"
)

// fakeClock records the waits WithRetry asks for instead of sleeping.
type fakeClock struct{ waits []time.Duration }

func (c *fakeClock) sleep(ctx context.Context, d time.Duration) error {
	c.waits = append(c.waits, d)
	return ctx.Err()
}

func retryOpts(c *fakeClock) llm.RetryOptions {
	return llm.RetryOptions{MaxAttempts: 4, BaseDelay: 100 * time.Millisecond, MaxDelay: 5 * time.Second,
		Sleep: c.sleep, Jitter: func() float64 { return 0.5 }}
}

func apiErr(status int, after time.Duration) error {
	return &llm.APIError{Driver: "test", Endpoint: "memory", Status: status, RetryAfter: after}
}

var hello = llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}

func TestRetryBacksOffThenSucceeds(t *testing.T) {
	clock := &fakeClock{}
	m := llmtest.New(llmtest.Fail(apiErr(500, 0)), llmtest.Fail(apiErr(503, 0)), llmtest.Text("hello"))
	resp, err := llm.WithRetry(m, retryOpts(clock)).Chat(context.Background(), hello)
	require.NoError(t, err)
	assert.Equal(t, "hello", resp.Message.Content)
	assert.Len(t, m.Requests(), 3)
	// base 100ms then 200ms, each 50% + jitter 0.5 of the other half = 75%.
	assert.Equal(t, []time.Duration{75 * time.Millisecond, 150 * time.Millisecond}, clock.waits)
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	clock := &fakeClock{}
	m := llmtest.New(llmtest.Fail(apiErr(429, 2*time.Second)), llmtest.Text("ok"))
	_, err := llm.WithRetry(m, retryOpts(clock)).Chat(context.Background(), hello)
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{2 * time.Second}, clock.waits)
}

func TestRetryAfterBeyondMaxDelayIsReturned(t *testing.T) {
	clock := &fakeClock{}
	m := llmtest.New(llmtest.Fail(apiErr(429, time.Minute)), llmtest.Text("never"))
	_, err := llm.WithRetry(m, retryOpts(clock)).Chat(context.Background(), hello)
	require.ErrorIs(t, err, llm.ErrRateLimited)
	var ae *llm.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, time.Minute, ae.RetryAfter)
	assert.Empty(t, clock.waits)
	assert.Equal(t, 1, m.Remaining())
}

func TestRetryNeverRetriesClientErrors(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 422} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			clock := &fakeClock{}
			m := llmtest.New(llmtest.Fail(apiErr(status, 0)), llmtest.Text("never"))
			_, err := llm.WithRetry(m, retryOpts(clock)).Chat(context.Background(), hello)
			var ae *llm.APIError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, status, ae.Status)
			assert.Len(t, m.Requests(), 1)
		})
	}
}

func TestRetryRetries408And409(t *testing.T) {
	clock := &fakeClock{}
	m := llmtest.New(llmtest.Fail(apiErr(408, 0)), llmtest.Fail(apiErr(409, 0)), llmtest.Text("ok"))
	_, err := llm.WithRetry(m, retryOpts(clock)).Chat(context.Background(), hello)
	require.NoError(t, err)
	assert.Len(t, m.Requests(), 3)
}

func TestRetryGivesUpAfterMaxAttempts(t *testing.T) {
	clock := &fakeClock{}
	m := llmtest.New(llmtest.Fail(apiErr(500, 0)), llmtest.Fail(apiErr(500, 0)), llmtest.Fail(apiErr(502, 0)), llmtest.Fail(apiErr(500, 0)), llmtest.Text("never"))
	_, err := llm.WithRetry(m, retryOpts(clock)).Chat(context.Background(), hello)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "after 4 attempts")
	assert.Len(t, m.Requests(), 4)
	assert.Len(t, clock.waits, 3)
	// The waits grow: 75ms, 150ms, 300ms.
	assert.Equal(t, 300*time.Millisecond, clock.waits[2])
}

func TestRetryStopsWhenContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	m := llmtest.New(llmtest.Fail(apiErr(500, 0)), llmtest.Text("never"))
	opts := llm.RetryOptions{Sleep: func(ctx context.Context, _ time.Duration) error { cancel(); return ctx.Err() }}
	_, err := llm.WithRetry(m, opts).Chat(ctx, hello)
	require.ErrorIs(t, err, context.Canceled)
	assert.Len(t, m.Requests(), 1)
}

func TestRetryPerCallTimeout(t *testing.T) {
	clock := &fakeClock{}
	calls := 0
	m := &blockingModel{answerOn: 2, calls: &calls}
	opts := retryOpts(clock)
	opts.Timeout = 10 * time.Millisecond
	resp, err := llm.WithRetry(m, opts).Chat(context.Background(), hello)
	require.NoError(t, err)
	assert.Equal(t, "answered on call 2", resp.Message.Content)
	assert.Equal(t, 2, calls)
}

// blockingModel blocks until its context ends, except on call answerOn.
type blockingModel struct {
	answerOn int
	calls    *int
}

func (b *blockingModel) Info() llm.Info { return llm.Info{Driver: "blocking"} }
func (b *blockingModel) Chat(ctx context.Context, _ llm.Request) (*llm.Response, error) {
	*b.calls++
	if *b.calls == b.answerOn {
		return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: fmt.Sprintf("answered on call %d", *b.calls)}}, nil
	}
	<-ctx.Done()
	return nil, fmt.Errorf("blocking: %w", ctx.Err())
}
func (b *blockingModel) Stream(ctx context.Context, req llm.Request, _ func(llm.Delta) error) (*llm.Response, error) {
	return b.Chat(ctx, req)
}

func TestRetryStreamBeforeFirstDeltaIsRetried(t *testing.T) {
	clock := &fakeClock{}
	m := llmtest.New(llmtest.Fail(apiErr(503, 0)), llmtest.Text("hello there"))
	var got string
	resp, err := llm.WithRetry(m, retryOpts(clock)).Stream(context.Background(), hello, func(d llm.Delta) error {
		got += d.Text
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, "hello there", got)
	assert.Equal(t, "hello there", resp.Message.Content)
}

func TestRetryStreamAfterADeltaIsNotRetried(t *testing.T) {
	clock := &fakeClock{}
	m := llmtest.New(llmtest.Step{Text: "hello there", CutAfter: 2}, llmtest.Text("hello there"))
	var got string
	_, err := llm.WithRetry(m, retryOpts(clock)).Stream(context.Background(), hello, func(d llm.Delta) error {
		got += d.Text
		return nil
	})
	require.ErrorIs(t, err, llm.ErrIncomplete)
	assert.Equal(t, "hello th", got, "the caller saw two deltas and no repeat")
	assert.Equal(t, 1, m.Remaining())
}

func TestRetryStreamCallbackErrorIsReturned(t *testing.T) {
	stop := errors.New("user pressed stop")
	m := llmtest.New(llmtest.Text("hello there"), llmtest.Text("never"))
	_, err := llm.WithRetry(m, retryOpts(&fakeClock{})).Stream(context.Background(), hello, func(llm.Delta) error { return stop })
	require.ErrorIs(t, err, stop)
	assert.Equal(t, 1, m.Remaining())
}

func TestRetryKeepsInfo(t *testing.T) {
	assert.Equal(t, "llmtest", llm.WithRetry(llmtest.New(), llm.RetryOptions{}).Info().Driver)
}

func TestRetryLogsEachRetry(t *testing.T) {
	var buf bytes.Buffer
	opts := retryOpts(&fakeClock{})
	opts.Logger = slog.New(slog.NewTextHandler(&buf, nil))
	m := llmtest.New(llmtest.Fail(apiErr(503, 0)), llmtest.Text("ok"))
	_, err := llm.WithRetry(m, opts).Chat(context.Background(), hello)
	require.NoError(t, err)
	assert.Contains(t, buf.String(), "llm call failed; retrying")
	assert.Contains(t, buf.String(), "driver=llmtest")
	assert.Contains(t, buf.String(), "HTTP 503")
	assert.Equal(t, 1, bytes.Count(buf.Bytes(), []byte("\n")))
}

package llm_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/sagasu-dev/sagasu/internal/llm"
)

func TestAPIErrorSentinelsAndRetryable(t *testing.T) {
	tests := []struct {
		status                        int
		unauthorized, limited, badReq bool
		retryable                     bool
	}{
		{400, false, false, true, false},
		{401, true, false, false, false},
		{403, true, false, false, false},
		{404, false, false, true, false},
		{408, false, false, false, true},
		{409, false, false, false, true},
		{422, false, false, true, false},
		{429, false, true, false, true},
		{500, false, false, false, true},
		{501, false, false, false, false},
		{503, false, false, false, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			err := fmt.Errorf("chat: %w", &llm.APIError{Driver: "openai", Status: tt.status})
			assert.Equal(t, tt.unauthorized, errors.Is(err, llm.ErrUnauthorized))
			assert.Equal(t, tt.limited, errors.Is(err, llm.ErrRateLimited))
			assert.Equal(t, tt.badReq, errors.Is(err, llm.ErrBadRequest))
			assert.Equal(t, tt.retryable, llm.IsRetryable(err))
		})
	}
}

func TestAPIErrorMessage(t *testing.T) {
	e := &llm.APIError{Driver: "anthropic", Endpoint: "https://api.anthropic.com", Status: 401,
		Code: "authentication_error", Message: "invalid x-api-key", KeyEnv: "ANTHROPIC_API_KEY"}
	assert.Equal(t, "anthropic API at https://api.anthropic.com: HTTP 401 Unauthorized (authentication_error): invalid x-api-key; check the API key in ANTHROPIC_API_KEY", e.Error())

	e = &llm.APIError{Driver: "openai", Endpoint: "http://x/v1", Status: 429, RetryAfter: 2 * time.Second}
	assert.Contains(t, e.Error(), "retry after 2s")
}

func TestIsRetryableOtherErrors(t *testing.T) {
	assert.False(t, llm.IsRetryable(nil))
	assert.False(t, llm.IsRetryable(errors.New("something")))
	assert.False(t, llm.IsRetryable(fmt.Errorf("openai at x: %w", llm.ErrMalformed)))
	assert.True(t, llm.IsRetryable(fmt.Errorf("openai at x: %w", llm.ErrIncomplete)))
	assert.True(t, llm.IsRetryable(&url.Error{Op: "Post", URL: "http://x", Err: io.EOF}))
	assert.True(t, llm.IsRetryable(fmt.Errorf("read: %w", io.ErrUnexpectedEOF)))
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC)
	h := func(k, v string) http.Header { x := http.Header{}; x.Set(k, v); return x }
	assert.Equal(t, 3*time.Second, llm.ParseRetryAfter(h("Retry-After", "3"), now))
	assert.Equal(t, 1500*time.Millisecond, llm.ParseRetryAfter(h("Retry-After", "1.5"), now))
	assert.Equal(t, 250*time.Millisecond, llm.ParseRetryAfter(h("retry-after-ms", "250"), now))
	assert.Equal(t, 10*time.Second, llm.ParseRetryAfter(h("Retry-After", now.Add(10*time.Second).Format(http.TimeFormat)), now))
	assert.Equal(t, time.Duration(0), llm.ParseRetryAfter(h("Retry-After", "soon"), now))
	assert.Equal(t, time.Duration(0), llm.ParseRetryAfter(nil, now))
}

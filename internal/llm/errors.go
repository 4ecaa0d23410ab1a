package llm

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Sentinel errors, matched with errors.Is against an *APIError (by its
// status) or against a driver's wrapped error.
var (
	// ErrUnauthorized: the API refused the key (401 or 403, or Gemini's
	// 400 with reason API_KEY_INVALID).
	ErrUnauthorized = errors.New("unauthorized")
	// ErrRateLimited: the API asked to slow down (429).
	ErrRateLimited = errors.New("rate limited")
	// ErrBadRequest: the API rejected the request itself (400, 404, 413,
	// 422): retrying the same request will not help.
	ErrBadRequest = errors.New("bad request")
	// ErrMalformed: the API answered with a body the driver could not
	// read. Drivers wrap it with their name and endpoint.
	ErrMalformed = errors.New("malformed response")
	// ErrIncomplete: a stream ended before the model said it had finished.
	ErrIncomplete = errors.New("stream ended before the model finished")
)

// APIError is an HTTP error answer from a model API.
type APIError struct {
	Driver     string // "openai", "gemini", "anthropic"
	Endpoint   string // base URL the request went to
	Status     int    // HTTP status
	Code       string // the vendor's error code or type, if it sent one
	Message    string // the vendor's explanation, if it sent one
	RetryAfter time.Duration
	// KeyEnv names the environment variable(s) the key is read from, for
	// the message of a 401 or 403.
	KeyEnv string
}

// Error says which API answered what, and for a refused key where the key
// is read from. It never contains the key.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s API at %s: HTTP %d", e.Driver, e.Endpoint, e.Status)
	if t := http.StatusText(e.Status); t != "" {
		b.WriteString(" " + t)
	}
	if e.Code != "" {
		b.WriteString(" (" + e.Code + ")")
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	switch {
	case e.unauthorized():
		if e.KeyEnv != "" {
			fmt.Fprintf(&b, "; check the API key in %s", e.KeyEnv)
		} else {
			b.WriteString("; check the API key")
		}
	case e.Status == http.StatusTooManyRequests && e.RetryAfter > 0:
		fmt.Fprintf(&b, "; retry after %s", e.RetryAfter)
	}
	return b.String()
}

// Is matches the sentinel errors by status.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrUnauthorized:
		return e.unauthorized()
	case ErrRateLimited:
		return e.Status == http.StatusTooManyRequests
	case ErrBadRequest:
		if e.unauthorized() {
			return false
		}
		switch e.Status {
		case http.StatusBadRequest, http.StatusNotFound, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
			return true
		}
	}
	return false
}

// unauthorized: 401, 403, or Gemini's 400 for a bad key.
func (e *APIError) unauthorized() bool {
	return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden || e.Code == "API_KEY_INVALID"
}

// Retryable reports whether the same request may succeed later: 408, 409,
// 429 and 5xx other than 501 and 505.
func (e *APIError) Retryable() bool {
	switch e.Status {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooManyRequests:
		return true
	case http.StatusNotImplemented, http.StatusHTTPVersionNotSupported:
		return false
	}
	return e.Status >= 500 && e.Status <= 599
}

// IsRetryable reports whether a failed call may succeed if made again: an
// APIError that says so, a broken stream, or a network failure. It is false
// for cancellation, malformed answers and errors it does not know.
func IsRetryable(err error) bool {
	if err == nil {
		return false
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Retryable()
	}
	if errors.Is(err, ErrMalformed) {
		return false
	}
	if errors.Is(err, ErrIncomplete) {
		return true
	}
	return isNetworkError(err)
}

// ParseRetryAfter reads a Retry-After header: delay seconds or an HTTP
// date (relative to now). It returns 0 for an empty or unreadable value.
// Drivers also accept the vendors' millisecond variant (retry-after-ms).
func ParseRetryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if ms := h.Get("Retry-After-Ms"); ms != "" {
		if f, err := strconv.ParseFloat(ms, 64); err == nil && f > 0 {
			return time.Duration(f * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

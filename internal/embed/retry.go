package embed

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// StatusError is an HTTP answer other than 2xx from an embedding server.
// Drivers return it so that New knows which failures to retry and how long
// the server asked it to wait.
type StatusError struct {
	StatusCode int
	Message    string // the server's own explanation, if it gave one
	RetryAfter string // the Retry-After header as sent, "" if none
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Temporary reports whether the same request may succeed later: 408, 429
// and the 5xx answers other than 501 and 505.
func (e *StatusError) Temporary() bool {
	switch e.StatusCode {
	case http.StatusRequestTimeout, http.StatusTooManyRequests:
		return true
	case http.StatusNotImplemented, http.StatusHTTPVersionNotSupported:
		return false
	}
	return e.StatusCode >= 500 && e.StatusCode <= 599
}

// ReadStatusError builds a StatusError from a non-2xx response, taking the
// message from a JSON error body ({"error":{"message":...}}, {"error":"..."}
// or {"message":...}) or else from the start of the body. It reads (at most
// 64 KiB of) the body but does not close it.
func ReadStatusError(resp *http.Response) *StatusError {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return &StatusError{
		StatusCode: resp.StatusCode,
		Message:    errorMessage(body),
		RetryAfter: resp.Header.Get("Retry-After"),
	}
}

func errorMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &v) == nil {
		var obj struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &obj) == nil && obj.Message != "":
			return obj.Message
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return s
		case v.Message != "":
			return v.Message
		}
	}
	msg := strings.Join(strings.Fields(string(body)), " ")
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	return msg
}

// ParseRetryAfter reads a Retry-After header: either a number of seconds or
// an HTTP date, measured from now. It reports false for anything else.
func ParseRetryAfter(h string, now time.Time) (time.Duration, bool) {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(h, 64); err == nil {
		if secs < 0 || secs > 1e6 {
			return 0, false
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// Backoff is the wait before retry number attempt+1 when the server did not
// say: it doubles from lo up to hi, and a random part of up to half of it
// keeps many clients from retrying in step.
func Backoff(attempt int, lo, hi time.Duration) time.Duration {
	d := lo
	for i := 0; i < attempt && d < hi; i++ {
		d *= 2
	}
	d = min(d, hi)
	half := d / 2
	return half + rand.N(half+1)
}

// retryable reports whether err is worth another try: a temporary HTTP
// status, a request that timed out, or a connection that broke.
func retryable(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Temporary()
	}
	var te *timeoutError
	if errors.As(err, &te) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF)
}

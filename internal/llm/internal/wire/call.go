package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/sagasu-dev/sagasu/internal/llm"
)

// Endpoint is what the drivers share of one API: its name for errors,
// base URL and where its key comes from.
type Endpoint struct {
	Driver string // "openai", ...
	Base   string // base URL, no trailing slash
	KeyEnv string // environment variable(s) holding the key
}

// ParseBase checks a configured base URL (def when empty) and returns it
// without trailing slash, with its host name.
func ParseBase(driver, given, def string) (base, host string, err error) {
	base = strings.TrimRight(given, "/")
	if base == "" {
		base = def
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", fmt.Errorf("%s: base URL %q is not an http(s) URL; give one like %s", driver, given, def)
	}
	return base, u.Hostname(), nil
}

// Bound applies a driver's per-call timeout (none when 0).
func Bound(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout > 0 {
		return context.WithTimeout(ctx, timeout)
	}
	return context.WithCancel(ctx)
}

// CallError turns what an SDK returned for a whole (not streamed) call
// into an *llm.APIError, a malformed-answer error, or the transport's
// error with the endpoint named.
func (e Endpoint) CallError(ctx context.Context, rec *Recorder, err error) error {
	if ae := rec.APIError(e.Driver, e.Base, e.KeyEnv); ae != nil {
		return ae
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s call to %s: %w", e.Driver, e.Base, context.Cause(ctx))
	}
	// An error after the whole body arrived is about what it said.
	if st := rec.Status(); st >= 200 && st < 300 && (rec.BodyRead() || !llm.IsRetryable(err)) {
		return Malformed(e.Driver, e.Base, err)
	}
	return fmt.Errorf("%s call to %s: %w", e.Driver, e.Base, err)
}

// StreamError turns an error met while reading a stream into an
// *llm.APIError, the caller's cancellation, a malformed-answer error, or
// an incomplete-stream error. events is how many events were read whole,
// deltas how many deltas were passed on.
func (e Endpoint) StreamError(ctx context.Context, rec *Recorder, events, deltas int, err error) error {
	if ae := rec.APIError(e.Driver, e.Base, e.KeyEnv); ae != nil {
		return ae
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s stream from %s: %w", e.Driver, e.Base, context.Cause(ctx))
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) {
		return Malformed(e.Driver, e.Base, fmt.Errorf("stream event %d: %w", events+1, err))
	}
	if events == 0 && !rec.EventStream() {
		return Malformed(e.Driver, e.Base, fmt.Errorf("expected an event stream, got Content-Type %q: %w", rec.ContentType(), err))
	}
	return Incomplete(e.Driver, e.Base, deltas, err)
}

// StreamEnded is the error for a stream that ended cleanly but without the
// vendor's sign that the model had finished.
func (e Endpoint) StreamEnded(rec *Recorder, events, deltas int) error {
	if events == 0 && !rec.EventStream() {
		return Malformed(e.Driver, e.Base, fmt.Errorf("expected an event stream, got Content-Type %q", rec.ContentType()))
	}
	return Incomplete(e.Driver, e.Base, deltas, nil)
}

// EventStream reports whether the last answer was a text/event-stream.
func (r *Recorder) EventStream() bool {
	return strings.Contains(r.ContentType(), "event-stream")
}

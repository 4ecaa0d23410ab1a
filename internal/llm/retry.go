package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"
)

// RetryOptions configure WithRetry. Zero fields take the defaults.
type RetryOptions struct {
	// MaxAttempts is the most calls made for one request (default 3; 1
	// means no retry).
	MaxAttempts int
	// BaseDelay is the wait before the first retry (default 500ms); it
	// doubles with each further retry, with jitter.
	BaseDelay time.Duration
	// MaxDelay caps one wait (default 30s). A Retry-After longer than this
	// is not waited for: the error is returned at once so the caller can
	// decide.
	MaxDelay time.Duration
	// Timeout bounds each call (for Stream: the whole stream); 0 means no
	// bound beyond the caller's context. A call that runs out of time is
	// retried.
	Timeout time.Duration
	// Sleep waits d or until ctx ends; tests replace it (default: a timer).
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter returns a number in [0,1) (default math/rand/v2); tests
	// replace it.
	Jitter func() float64
	// Logger, when set, gets a warning before each retry.
	Logger *slog.Logger
}

// WithRetry wraps m so that failed calls are made again when IsRetryable
// says they may succeed: with exponential backoff and jitter, waiting at
// least what a Retry-After asked for, each call bounded by opts.Timeout,
// stopping when ctx ends. A Stream is never retried once a delta reached
// the caller, since the caller has already shown or used it. Drivers turn
// off their SDK's own retries, so this is the one retry policy.
func WithRetry(m Model, opts RetryOptions) Model {
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 3
	}
	if opts.BaseDelay <= 0 {
		opts.BaseDelay = 500 * time.Millisecond
	}
	if opts.MaxDelay <= 0 {
		opts.MaxDelay = 30 * time.Second
	}
	if opts.Sleep == nil {
		opts.Sleep = sleep
	}
	if opts.Jitter == nil {
		opts.Jitter = rand.Float64
	}
	return &retrying{m: m, o: opts}
}

type retrying struct {
	m Model
	o RetryOptions
}

func (r *retrying) Info() Info { return r.m.Info() }

func (r *retrying) Chat(ctx context.Context, req Request) (*Response, error) {
	return r.do(ctx, func(ctx context.Context) (*Response, bool, error) {
		resp, err := r.m.Chat(ctx, req)
		return resp, false, err
	})
}

func (r *retrying) Stream(ctx context.Context, req Request, onDelta func(Delta) error) (*Response, error) {
	return r.do(ctx, func(ctx context.Context) (*Response, bool, error) {
		delivered := false
		resp, err := r.m.Stream(ctx, req, func(d Delta) error {
			delivered = true
			return onDelta(d)
		})
		return resp, delivered, err
	})
}

// do makes up to MaxAttempts calls. call reports whether it delivered
// anything to the caller, which rules out another attempt.
func (r *retrying) do(ctx context.Context, call func(context.Context) (*Response, bool, error)) (*Response, error) {
	for attempt := 1; ; attempt++ {
		resp, delivered, err := r.once(ctx, call)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, err // the caller gave up; the driver's error says where
		}
		retry := IsRetryable(err) || errors.Is(err, errAttemptTimeout)
		if !retry || delivered || attempt >= r.o.MaxAttempts {
			if retry && attempt > 1 && !delivered {
				return nil, fmt.Errorf("after %d attempts: %w", attempt, err)
			}
			return nil, err
		}
		wait := r.backoff(attempt)
		var ae *APIError
		if errors.As(err, &ae) && ae.RetryAfter > 0 {
			if ae.RetryAfter > r.o.MaxDelay {
				return nil, err
			}
			wait = max(wait, ae.RetryAfter)
		}
		if r.o.Logger != nil {
			info := r.m.Info()
			r.o.Logger.Warn("llm call failed; retrying", "driver", info.Driver, "model", info.Model,
				"attempt", attempt, "of", r.o.MaxAttempts, "wait", wait, "err", err)
		}
		if serr := r.o.Sleep(ctx, wait); serr != nil {
			return nil, fmt.Errorf("waiting to retry after %w: %w", err, serr)
		}
	}
}

// errAttemptTimeout marks a call that ran past RetryOptions.Timeout.
var errAttemptTimeout = errors.New("call timed out")

func (r *retrying) once(ctx context.Context, call func(context.Context) (*Response, bool, error)) (*Response, bool, error) {
	if r.o.Timeout <= 0 {
		return call(ctx)
	}
	actx, cancel := context.WithTimeoutCause(ctx, r.o.Timeout, errAttemptTimeout)
	defer cancel()
	resp, delivered, err := call(actx)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(actx), errAttemptTimeout) {
		err = fmt.Errorf("%w after %s: %w", errAttemptTimeout, r.o.Timeout, err)
	}
	return resp, delivered, err
}

// backoff is the wait before retry number attempt (1, 2, ...): BaseDelay
// doubled per attempt, capped at MaxDelay, the upper half jittered.
func (r *retrying) backoff(attempt int) time.Duration {
	d := r.o.BaseDelay
	for i := 1; i < attempt && d < r.o.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, r.o.MaxDelay)
	return d/2 + time.Duration(r.o.Jitter()*float64(d/2))
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

package store

import "errors"

// ErrUnavailable means the index's server could not be reached or the
// connection to it was lost: the same request may succeed once it is back.
// Drivers mark such errors with Unavailable; faces answer them as a service
// that is down (HTTP 503) rather than as the caller's mistake.
var ErrUnavailable = errors.New("the index's server is unavailable")

// Unavailable marks err as ErrUnavailable, keeping its message and chain.
func Unavailable(err error) error {
	if err == nil {
		return nil
	}
	return unavailable{err}
}

type unavailable struct{ err error }

func (e unavailable) Error() string   { return e.err.Error() }
func (e unavailable) Unwrap() []error { return []error{e.err, ErrUnavailable} }

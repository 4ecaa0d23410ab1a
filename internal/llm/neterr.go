package llm

import (
	"errors"
	"io"
	"net"
	"net/url"
	"syscall"
)

// isNetworkError reports whether err is a failure of the connection (reset,
// refused, cut short, timed out) rather than an answer from the server.
func isNetworkError(err error) bool {
	var ne net.Error
	var oe *net.OpError
	var ue *url.Error
	switch {
	case errors.As(err, &ue) && errors.Is(ue.Err, io.EOF):
		return true // the server closed the connection before answering
	case errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.EPIPE),
		errors.As(err, &oe):
		return true
	case errors.As(err, &ne) && ne.Timeout():
		return true
	}
	return false
}

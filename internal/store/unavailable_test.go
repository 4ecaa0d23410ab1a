package store

import (
	"errors"
	"fmt"
	"testing"
)

// TestUnavailableKeepsMessageAndChain: a marked error reads as before, is
// ErrUnavailable and still unwraps to its cause; nil stays nil.
func TestUnavailableKeepsMessageAndChain(t *testing.T) {
	cause := errors.New("connection refused")
	err := fmt.Errorf("keyword search: %w", Unavailable(fmt.Errorf("lost the connection: %w", cause)))
	if err.Error() != "keyword search: lost the connection: connection refused" {
		t.Errorf("message %q", err)
	}
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, cause) {
		t.Errorf("%v: want ErrUnavailable and its cause in the chain", err)
	}
	if errors.Is(cause, ErrUnavailable) {
		t.Error("an unmarked error is ErrUnavailable")
	}
	if Unavailable(nil) != nil {
		t.Error("Unavailable(nil) is not nil")
	}
}

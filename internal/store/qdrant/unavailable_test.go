package qdrant

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// TestWrapMarksUnreachableServerUnavailable: a call the server did not
// answer (gRPC Unavailable) is store.ErrUnavailable, so faces answer it
// as a service that is down; a refused API key or another failure is not.
func TestWrapMarksUnreachableServerUnavailable(t *testing.T) {
	s := &Store{set: Settings{Host: "127.0.0.1", Port: 6334}}
	// The client wraps gRPC statuses in an error of its own.
	call := func(c codes.Code) error {
		return fmt.Errorf("search points: %w", status.Error(c, "connection refused"))
	}
	err := s.wrap("keyword search", call(codes.Unavailable))
	if !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), "cannot reach Qdrant at 127.0.0.1:6334") {
		t.Errorf("unavailable: %v", err)
	}
	for _, c := range []codes.Code{codes.PermissionDenied, codes.InvalidArgument} {
		if err := s.wrap("keyword search", call(c)); errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%v: %v is marked unavailable", c, err)
		}
	}
}

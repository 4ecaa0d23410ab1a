//go:build unix

package tokenizer

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/userfile"
)

// TestLoadRefusesDevicesAndFIFOs: a tokenizer.json that is a FIFO blocked
// Load for ever and /dev/zero was read until memory ran out; both are
// refused at once now.
func TestLoadRefusesDevicesAndFIFOs(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/dev/zero", fifo} {
		if _, err := Load(path); !errors.Is(err, userfile.ErrNotPlain) {
			t.Errorf("Load(%s) = %v, want a refusal: not a regular file", path, err)
		}
	}
}

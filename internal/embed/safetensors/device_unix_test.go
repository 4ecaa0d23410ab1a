//go:build unix

package safetensors

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/userfile"
)

// TestOpenRefusesDevicesAndFIFOs: a model setting (or a model folder's
// model.safetensors link) naming a FIFO blocked Open for ever, and
// /dev/zero was read as a header; both are refused at once now, saying the
// path is not a regular file.
func TestOpenRefusesDevicesAndFIFOs(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "model.safetensors")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/dev/zero", fifo} {
		f, err := Open(path)
		if err == nil {
			f.Close()
		}
		if !errors.Is(err, userfile.ErrNotPlain) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Open(%s) = %v, want a refusal: not a regular file", path, err)
		}
	}
}

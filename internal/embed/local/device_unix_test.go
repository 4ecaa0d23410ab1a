//go:build unix

package local

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/userfile"
)

// TestOpenRefusesDevicesAndFIFOs: a model folder (named by a setting an
// index or a clone can pin) whose config.json is a FIFO blocked Open for
// ever, and one linked to /dev/zero was read until memory ran out; both
// are refused at once now, naming the file.
func TestOpenRefusesDevicesAndFIFOs(t *testing.T) {
	dir := t.TempDir()
	fifoModel := filepath.Join(dir, "fifo")
	zeroModel := filepath.Join(dir, "zero")
	for _, d := range []string{fifoModel, zeroModel} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(fifoModel, "config.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(zeroModel, "config.json")); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{fifoModel, zeroModel} {
		if _, err := Open(d, Options{}); !errors.Is(err, userfile.ErrNotPlain) {
			t.Errorf("Open(%s) = %v, want a refusal: config.json is not a regular file", d, err)
		}
	}
}

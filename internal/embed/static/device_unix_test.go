//go:build unix

package static

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/userfile"
)

// TestOpenRefusesDevicesAndFIFOs plays issue 35's `embedder: {driver:
// static, path: /dev/zero}`: the file was read until memory ran out (and a
// FIFO blocked for ever). Now what is not a regular file is refused at
// once, saying so, also inside a Model2Vec folder; a link to a real vectors
// file still opens, since model caches are made of links.
func TestOpenRefusesDevicesAndFIFOs(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "vectors.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Model2Vec folders whose tokenizer.json is a FIFO or /dev/zero.
	fifoModel := filepath.Join(dir, "m2v-fifo")
	zeroModel := filepath.Join(dir, "m2v-zero")
	for _, d := range []string{fifoModel, zeroModel} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(fifoModel, "tokenizer.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(zeroModel, "tokenizer.json")); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/dev/zero", fifo, fifoModel, zeroModel} {
		if _, err := Open(path, Options{}); !errors.Is(err, userfile.ErrNotPlain) {
			t.Errorf("Open(%s) = %v, want a refusal: not a regular file", path, err)
		}
	}
	real := filepath.Join(dir, "glove.txt")
	if err := os.WriteFile(real, []byte("cat 0.1 0.2 0.3\ndog 0.2 0.1 0.3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "vectors.txt")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(link, Options{}); err != nil {
		t.Errorf("a link to a vectors file: %v", err)
	}
}

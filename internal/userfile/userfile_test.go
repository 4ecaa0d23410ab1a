//go:build unix

package userfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestPrivateWhateverTheUmask: with a umask that lets everyone read, what
// Write, Create and MkdirAll make is still the user's alone; an existing
// file keeps the mode the user gave it.
func TestPrivateWhateverTheUmask(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "a", "b")
	f := filepath.Join(dir, "data.json")
	if err := Write(f, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{f: FileMode, dir: DirMode, filepath.Dir(dir): DirMode} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want || Exposed(fi) {
			t.Errorf("%s: mode %v, want %v", path, fi.Mode().Perm(), want)
		}
	}
	db := filepath.Join(t.TempDir(), "x", "index.db")
	if err := Create(db); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(db); fi.Mode().Perm() != FileMode {
		t.Errorf("Create: mode %v", fi.Mode().Perm())
	}
	shared := filepath.Join(t.TempDir(), "shared.db")
	if err := os.WriteFile(shared, []byte("x"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := Create(shared); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(shared)
	if fi.Mode().Perm() != 0o640 || !Exposed(fi) {
		t.Errorf("Create changed an existing file's mode to %v, or Exposed missed it", fi.Mode().Perm())
	}
	if err := Write(f, []byte("{\"new\":1}")); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(f); string(data) != "{\"new\":1}" {
		t.Errorf("Write did not replace the content: %s", data)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".tmp-*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

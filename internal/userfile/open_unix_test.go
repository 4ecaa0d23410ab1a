//go:build unix

package userfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOpenRefusesWhatIsNotPlain: Open and ReadFile never go through a
// symbolic link (not even a dangling one, which O_CREATE would have made
// the target of), nor open a FIFO, a folder or a file with another hard
// link, and leave each target as it was.
func TestOpenRefusesWhatIsNotPlain(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "thesis.txt")
	if err := os.WriteFile(victim, []byte("thesis\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plant := map[string]func(string) error{
		"symlink":  func(p string) error { return os.Symlink(victim, p) },
		"dangling": func(p string) error { return os.Symlink(filepath.Join(dir, "new-file"), p) },
		"hardlink": func(p string) error { return os.Link(victim, p) },
		"fifo":     func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"folder":   func(p string) error { return os.Mkdir(p, 0o700) },
	}
	for name, make := range plant {
		p := filepath.Join(dir, name+".lock")
		if err := make(p); err != nil {
			t.Fatal(err)
		}
		for _, flag := range []int{os.O_RDONLY, os.O_RDWR | os.O_CREATE, os.O_WRONLY | os.O_APPEND | os.O_CREATE} {
			f, err := Open(p, flag)
			if err == nil {
				f.Close()
			}
			if !errors.Is(err, ErrNotPlain) && !(name == "folder" && err != nil) {
				t.Errorf("Open(%s, %#x) = %v, want ErrNotPlain", name, flag, err)
			}
		}
		if err := Check(p); !errors.Is(err, ErrNotPlain) {
			t.Errorf("Check(%s) = %v, want ErrNotPlain", name, err)
		}
		if _, err := ReadFile(p, 100); err == nil {
			t.Errorf("ReadFile(%s) read it", name)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "thesis\n" {
		t.Errorf("the target became %q", b)
	}
	if _, err := os.Lstat(filepath.Join(dir, "new-file")); !errors.Is(err, os.ErrNotExist) {
		t.Error("a dangling link's target was created")
	}

	// A plain file is opened, created for the user alone, and never
	// truncated by the open.
	own := filepath.Join(dir, "own.lock")
	f, err := Open(own, os.O_RDWR|os.O_CREATE)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("123\n")
	f.Close()
	if fi, _ := os.Stat(own); fi.Mode().Perm() != FileMode {
		t.Errorf("created with mode %v", fi.Mode().Perm())
	}
	if _, err := Open(own, os.O_RDWR|os.O_TRUNC); err == nil || !strings.Contains(err.Error(), "never truncates") {
		t.Errorf("Open with O_TRUNC: %v", err)
	}
	if b, err := ReadFile(own, 4); err != nil || string(b) != "123\n" {
		t.Errorf("ReadFile = %q, %v", b, err)
	}
	if _, err := ReadFile(own, 3); err == nil || !strings.Contains(err.Error(), "larger than 3 bytes") {
		t.Errorf("ReadFile over the cap: %v", err)
	}
	if err := Check(filepath.Join(dir, "missing")); err != nil {
		t.Errorf("Check(missing) = %v", err)
	}
}

// TestReadRegularCapsWhatItReads: ReadRegular reads a regular file (through
// a link too) up to its limit, and refuses a larger one and a device
// before reading it.
func TestReadRegularCapsWhatItReads(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "config.json")
	if err := os.WriteFile(small, []byte(`{"a":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(small, link); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadRegular(link, 7); err != nil || string(b) != `{"a":1}` {
		t.Errorf("ReadRegular(link, 7) = %q, %v", b, err)
	}
	if _, err := ReadRegular(small, 6); err == nil || !strings.Contains(err.Error(), "more than the 6") {
		t.Errorf("a file over the limit: %v, want a refusal naming it", err)
	}
	if _, err := ReadRegular("/dev/zero", 1<<20); !errors.Is(err, ErrNotPlain) {
		t.Errorf("/dev/zero: %v, want ErrNotPlain", err)
	}
}

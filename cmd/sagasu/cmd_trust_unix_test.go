//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestUserDataIsPrivate: everything sagasu writes under .sagasu (the index
// with its WAL and lock, the agent cache, the agent's memory) is readable
// by the user alone, whatever the umask lets through: it holds copies of
// private files.
func TestUserDataIsPrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.md"), "# Alpha\n\nAlpha is the first letter of the Greek alphabet.\n")
	mustRun(t, dir, "index", "a.md")
	mustRun(t, dir, "loop", "--goal", "what is alpha")
	mustRun(t, dir, "agent", "run", "--offline", "--goal", "what is alpha")
	var files int
	err := filepath.WalkDir(filepath.Join(dir, ".sagasu"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v: others can read it", strings.TrimPrefix(path, dir), fi.Mode().Perm())
		}
		if !d.IsDir() {
			files++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 4 {
		t.Errorf("only %d files under .sagasu: the index, cache and memory were not all written", files)
	}
}

// Package userfile writes the files that hold a user's data (the index,
// run logs, agent memory and cache, trust records): readable by the user
// alone (0600) in folders only the user can enter (0700), and written
// atomically where a reader must never see half a file.
package userfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Modes of what sagasu creates for the user.
const (
	FileMode os.FileMode = 0o600
	DirMode  os.FileMode = 0o700
)

// MkdirAll creates dir and its missing parents for the user alone. Folders
// that exist keep their mode: they are the user's to set.
func MkdirAll(dir string) error {
	return os.MkdirAll(dir, DirMode)
}

// Create makes path (and its folder) for the user alone when it does not
// exist; an existing file is left as it is. Stores whose engine creates
// the file itself (SQLite copies the main file's mode to its WAL) call it
// first, so the file is born private.
func Create(path string) error {
	if err := MkdirAll(filepath.Dir(path)); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, FileMode)
	if os.IsExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// OpenAppend opens path for reading and appending, creating it for the
// user alone, through Open: never through a symbolic link, and only a
// plain regular file.
func OpenAppend(path string) (*os.File, error) {
	return Open(path, os.O_RDWR|os.O_CREATE)
}

// Write replaces path with data through a temporary file in the same
// folder and a rename, so a reader sees either the old file or the whole
// new one, never part of it. The file is the user's alone; the folder is
// created for the user alone when missing.
func Write(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := MkdirAll(dir); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	tmp, err := WriteTemp(dir, ".tmp-*", data, FileMode)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// Exposed reports whether a file or folder that holds the user's data can
// be read by other users of this machine (a group or world permission
// bit), for checks such as `sagasu doctor`. It reports false on platforms
// without Unix permissions.
func Exposed(fi os.FileInfo) bool {
	return exposed(fi)
}

// WriteTemp writes data to a new file in dir named after pattern (as
// os.CreateTemp), with mode, synced to disk, and returns its name: the first
// half of an atomic replace, which the caller ends with os.Rename (or
// removes). Nothing is left behind when it fails.
func WriteTemp(dir, pattern string, data []byte, mode fs.FileMode) (string, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	err = f.Chmod(mode)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

//go:build !unix

package userfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// openNoFollow opens path when its name is not a symbolic link or reparse
// point: it is checked with Lstat, then the file opened must be the one
// checked (a link swapped in between is refused).
func openNoFollow(path string, flag int) (*os.File, error) {
	before, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && flag&os.O_CREATE != 0:
		// Created exclusively, so a link made in between is not followed.
		f, err := os.OpenFile(path, flag|os.O_EXCL, FileMode)
		if errors.Is(err, fs.ErrExist) {
			return openNoFollow(path, flag&^os.O_CREATE)
		}
		return f, err
	case err != nil:
		return nil, err
	}
	if err := plain(path, before); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, flag, FileMode)
	if err != nil {
		return nil, err
	}
	after, err := f.Stat()
	if err != nil || !os.SameFile(before, after) {
		f.Close()
		return nil, fmt.Errorf("%s changed while it was opened: %w", path, ErrNotPlain)
	}
	return f, nil
}

// links is the number of hard links of fi, which Windows does not report
// here.
func links(os.FileInfo) uint64 { return 1 }

// openRead opens path for reading, following links; a name that is not a
// regular file is refused before it is opened, so that opening cannot
// block.
func openRead(path string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s): %w; give the path of the file itself", path, kind(fi.Mode()), ErrNotPlain)
	}
	return os.Open(path)
}

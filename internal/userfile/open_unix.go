//go:build unix

package userfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// openNoFollow opens path without following a symbolic link at its last
// element, and without blocking on a FIFO (which Open then refuses).
func openNoFollow(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, FileMode)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return f, err
	}
	// ELOOP for a link (EMLINK on FreeBSD), ENXIO for a FIFO opened to
	// write: say what the file is.
	if fi, lerr := os.Lstat(path); lerr == nil {
		if perr := plain(path, fi); perr != nil {
			return nil, perr
		}
	}
	if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK) {
		return nil, fmt.Errorf("%s: %w (%v)", path, ErrNotPlain, err)
	}
	return nil, err
}

// links is the number of hard links of fi.
func links(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// openRead opens path for reading, following links, without blocking on a
// FIFO (which OpenRegular then refuses).
func openRead(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

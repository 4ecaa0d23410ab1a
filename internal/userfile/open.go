package userfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// The files sagasu keeps beside an index or in its caches (the index's
// lock, its saved vector graph, run logs, agent records and memory) may
// sit in a folder that came with a cloned repository, which can ship
// ".sagasu/sagasu.db.lock -> ../../thesis.txt". Open and ReadFile never
// follow a symbolic link at the file's own name, and refuse anything but a
// plain regular file: a FIFO or device could block or never end, and a
// second hard link could be someone else's file.

// ErrNotPlain is wrapped by the errors of Open, Check and ReadFile for a
// file that is a symbolic link, not a regular file, or a file with more
// than one hard link.
var ErrNotPlain = errors.New("not a plain file")

// Open opens path, a file sagasu keeps, with flag (as os.OpenFile:
// os.O_RDONLY, os.O_RDWR|os.O_CREATE, ...), creating it for the user alone.
// It does not follow a symbolic link at path (O_NOFOLLOW on Unix; on
// Windows the name is checked with Lstat and the opened file must be the
// one checked, so a reparse point is refused too), and refuses what is not
// a regular file or has more than one hard link. It never truncates:
// os.O_TRUNC is refused, so that a file sagasu did not create is never
// emptied by opening it.
func Open(path string, flag int) (*os.File, error) {
	if flag&os.O_TRUNC != 0 {
		return nil, fmt.Errorf("open %s: userfile.Open never truncates; truncate the file once it is known to be sagasu's", path)
	}
	f, err := openNoFollow(path, flag)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = plain(path, fi)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Check says why path, a file sagasu keeps or is about to let another
// engine open (SQLite's -wal and -shm), is not a plain regular file: a
// symbolic link, a folder, a device, or a file with other hard links. A
// missing file is fine (nil).
func Check(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return plain(path, fi)
}

// plain refuses fi, the file at path, unless it is a regular file with one
// hard link.
func plain(path string, fi os.FileInfo) error {
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return fmt.Errorf("%s is a symbolic link (to %s): %w; sagasu does not write or read its own files through links, since a cloned repository can ship one that points at your files: delete the link", path, target, ErrNotPlain)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file (%s): %w; delete or move it", path, kind(fi.Mode()), ErrNotPlain)
	case links(fi) > 1:
		return fmt.Errorf("%s has %d hard links, so another name shares its content: %w; delete it (sagasu makes a new one)", path, links(fi), ErrNotPlain)
	}
	return nil
}

// ReadFile reads path, a file sagasu keeps, through Open, and at most max
// bytes of it: a larger file is an error that names the limit.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := Open(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAtMost(f, path, max)
}

// ReadAtMost reads r, named name in errors, whole when it holds at most
// max bytes, else fails naming the limit.
func ReadAtMost(r io.Reader, name string, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes, more than sagasu reads from such a file: check that it is the file you meant", name, max)
	}
	return data, nil
}

// OpenRegular opens path, a file the user names for sagasu to read (a
// model, word vectors, a tokenizer), for reading. It follows links, since
// model caches are made of them, but refuses what is not a regular file,
// without blocking on it: a setting that names /dev/zero, /dev/stdin or a
// FIFO would otherwise read forever or hang.
func OpenRegular(path string) (*os.File, error) {
	f, err := openRead(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file (%s): %w; give the path of the file itself", path, kind(fi.Mode()), ErrNotPlain)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadRegular reads path through OpenRegular, whole when it holds at most
// max bytes, else fails naming the limit.
func ReadRegular(path string, max int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > max {
		return nil, fmt.Errorf("%s holds %d bytes, more than the %d sagasu reads from such a file: check that it is the file you meant", path, fi.Size(), max)
	}
	return ReadAtMost(f, path, max)
}

// kind names what a file that is not a regular file is, for errors.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "mode " + m.Type().String()
}

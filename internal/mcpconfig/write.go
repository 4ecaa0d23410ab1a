package mcpconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sagasu-dev/sagasu/internal/userfile"
)

// Written says what WriteFile did.
type Written struct {
	// Path is the file that was (or would have been) changed; a symbolic
	// link is followed, so this is the file it points to.
	Path   string
	Action Action
	// Backup is the copy of the original kept because the rewrite drops
	// its comments ("" when none was needed).
	Backup string
}

// WriteFile merges s into the client's file at path: through a temporary
// file and a rename (a reader sees the old file or the new one, never
// half), with the file's own permissions, following a symbolic link to the
// file it names. A file that does not parse is left alone and reported; one
// whose comments the rewrite drops is first copied to a backup beside it.
func WriteFile(path string, c Client, s Server) (Written, error) {
	return WriteFileWithin(path, "", c, s)
}

// WriteFileWithin is WriteFile for a file that must stay inside the folder
// within ("" for anywhere), such as a project-scoped client's
// .vscode/mcp.json: when a symbolic link at path or among its folders
// leads out of within, nothing is written. A cloned repository can ship
// .vscode/mcp.json as a link to a file of the user's elsewhere.
func WriteFileWithin(path, within string, c Client, s Server) (Written, error) {
	real, err := resolveExisting(path)
	if err != nil {
		return Written{}, fmt.Errorf("%s: %w", path, err)
	}
	if within != "" {
		base, err := resolveExisting(within)
		if err != nil {
			return Written{}, fmt.Errorf("%s: %w", within, err)
		}
		if rel, err := filepath.Rel(base, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return Written{Path: real}, fmt.Errorf("%s leads outside the project %s (to %s) through a symbolic link, which a cloned repository can plant; nothing was written: remove the link, or name the file you mean with --file", path, within, real)
		}
	}
	w := Written{Path: real}
	mode := fs.FileMode(0o600)
	data, err := os.ReadFile(real)
	switch {
	case err == nil:
		fi, err := os.Stat(real)
		if err != nil {
			return w, err
		}
		mode = fi.Mode().Perm()
	case errors.Is(err, fs.ErrNotExist):
		data = nil
	default:
		return w, fmt.Errorf("read %s: %w", real, err)
	}
	r, err := Merge(c, data, s)
	var pe *ParseError
	if errors.As(err, &pe) {
		return w, fmt.Errorf("%s: %v; nothing was written: fix the file, or add the entry that `sagasu mcp config %s` prints by hand", real, pe.Err, c.ID)
	}
	if err != nil {
		return w, err
	}
	w.Action = r.Action
	if r.Action == Unchanged {
		return w, nil
	}
	dir := filepath.Dir(real)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return w, fmt.Errorf("create %s: %w", dir, err)
	}
	if r.Lossy {
		if w.Backup, err = backup(real, data, mode); err != nil {
			return w, fmt.Errorf("back up %s before rewriting it without its comments: %w", real, err)
		}
	}
	return w, replace(real, data, r.Data, mode)
}

// resolveExisting returns the absolute path p with the symbolic links of
// its longest existing part resolved, the rest as written.
func resolveExisting(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err == nil {
		return real, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	parent := filepath.Dir(abs)
	if parent == abs {
		return abs, nil
	}
	up, err := resolveExisting(parent)
	if err != nil {
		return "", err
	}
	return filepath.Join(up, filepath.Base(abs)), nil
}

// backup copies data to a new file beside path.
func backup(path string, data []byte, mode fs.FileMode) (string, error) {
	base := path + ".sagasu-backup-" + time.Now().UTC().Format("20060102T150405Z")
	for i := 0; i < 100; i++ {
		name := base
		if i > 0 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = f.Write(data)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return name, err
	}
	return "", errors.New("too many backups already")
}

// replace writes data over path atomically with mode, unless the file no
// longer holds was (the client or the user changed it meanwhile).
func replace(path string, was, data []byte, mode fs.FileMode) error {
	tmp, err := userfile.WriteTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*", data, mode)
	if err != nil {
		return err
	}
	if err == nil {
		now, rerr := os.ReadFile(path)
		if rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = rerr
		} else if !bytes.Equal(now, was) {
			err = fmt.Errorf("%s changed while sagasu was merging into it; nothing was written, run the command again", path)
		}
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

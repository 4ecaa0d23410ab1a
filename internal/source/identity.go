package source

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A local file has one identity however it was named: its canonical path
// (absolute, cleaned, every symbolic link among its folders resolved). A
// symbolic link to a file keeps its own name, as the walker reads it: the
// link is a name the user chose, and resolving it would give a file under
// the root a path outside it. The identity is shown as the file's slash
// path from the index's root when it lies under the root
// ("docs/guide/intro.md"), else as its absolute slash path.

// Canonical returns the canonical form of the local path p (relative paths
// start from the working directory): absolute and cleaned, with the
// symbolic links among its folders resolved, and p itself resolved when it
// is a folder. The last element of a file path is kept (a symbolic link to
// a file keeps its name). Parts that do not exist are kept as written, so
// the name of a deleted file still canonicalises.
func Canonical(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("make %q absolute: %w", p, err)
	}
	if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
		return resolveExisting(abs)
	}
	dir, base := filepath.Split(abs)
	if base == "" { // the file system root
		return abs, nil
	}
	real, err := resolveExisting(filepath.Clean(dir))
	if err != nil {
		return "", err
	}
	return filepath.Join(real, base), nil
}

// resolveExisting resolves the symbolic links of the longest part of the
// absolute path dir that exists and appends the rest as written.
func resolveExisting(dir string) (string, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err == nil {
		return real, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("resolve the symbolic links of %q: %w", dir, err)
	}
	parent := filepath.Dir(dir)
	if parent == dir {
		return dir, nil
	}
	up, err := resolveExisting(parent)
	if err != nil {
		return "", err
	}
	return filepath.Join(up, filepath.Base(dir)), nil
}

// CanonicalRoot returns the canonical form of an index root folder; ""
// means the working directory.
func CanonicalRoot(root string) (string, error) {
	if root == "" {
		root = "."
	}
	c, err := Canonical(root)
	if err != nil {
		return "", fmt.Errorf("index root: %w", err)
	}
	return c, nil
}

// LocalURI returns the URI under which the local path p (relative paths
// start from the working directory) is indexed when the index's root is
// root ("" for the working directory): its canonical path, as a slash path
// from root when it lies under root, else as an absolute slash path. The
// same file named as "docs/a.md", "/abs/docs/a.md", "../repo/docs/a.md" or
// through a symbolic link to one of its folders has one URI.
func LocalURI(root, p string) (string, error) {
	r, err := CanonicalRoot(root)
	if err != nil {
		return "", err
	}
	c, err := Canonical(p)
	if err != nil {
		return "", err
	}
	return uriFor(r, c), nil
}

// URIOf is the URI of the canonical path c in an index whose canonical
// root is root (see CanonicalRoot), without touching the disk.
func URIOf(root, c string) string { return uriFor(root, c) }

// uriFor shows the canonical path c in an index rooted at the canonical
// folder root.
func uriFor(root, c string) string {
	if rel, ok := within(root, c); ok {
		return filepath.ToSlash(rel)
	}
	return filepath.ToSlash(c)
}

// within returns p relative to dir when p lies under dir (both absolute
// and clean).
func within(dir, p string) (string, bool) {
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

// URIPath returns the OS path a stored local file URI names in an index
// whose root is root ("" for the working directory): a relative URI starts
// from root, an absolute one is taken as it is.
func URIPath(root, uri string) string {
	p := filepath.FromSlash(uri)
	if filepath.IsAbs(p) || root == "" {
		return p
	}
	return filepath.Join(root, p)
}

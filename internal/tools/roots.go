package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/glob"
	"github.com/sagasu-dev/sagasu/internal/source"
)

// roots are the folders sagasu_index may read. An agent names files the
// way a user would ("docs/", "docs/**/*.md"); every path is resolved,
// symbolic links included, and must lie inside a root.
type roots struct {
	dirs []string // absolute, symbolic links resolved; dirs[0] anchors relative paths
	cwd  string   // the working directory, as the OS reports it
}

func newRoots(dirs []string) (*roots, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	}
	if len(dirs) == 0 {
		dirs = []string{cwd}
	}
	r := &roots{cwd: cwd}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("allowed root %q: %w", d, err)
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, fmt.Errorf("allowed root %q: %w: give an existing folder", d, err)
		}
		if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("allowed root %q is not a folder: give a folder", d)
		}
		r.dirs = append(r.dirs, real)
	}
	return r, nil
}

// String lists the roots for messages.
func (r *roots) String() string { return strings.Join(r.dirs, ", ") }

// within reports whether the resolved absolute path p lies in a root.
func (r *roots) within(p string) bool {
	for _, d := range r.dirs {
		rel, err := filepath.Rel(d, p)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// input checks one file, folder or glob an agent asked to index and
// returns it in the form source.Walk takes: relative to the working
// directory when it lies under it (so URIs match those of `sagasu index`),
// else absolute. Relative inputs start from the first root.
func (r *roots) input(in string) (string, error) {
	if strings.TrimSpace(in) == "" {
		return "", errors.New(`empty path: give a file, a folder or a glob such as "docs/**/*.md"`)
	}
	if in == "-" {
		return "", errors.New(`"-" (standard input) is not available over MCP: pass the text in "text" instead`)
	}
	abs := filepath.Clean(filepath.FromSlash(in))
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(r.dirs[0], abs)
	}
	check := abs
	if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) && strings.ContainsAny(in, "*?[") {
		for _, seg := range strings.Split(filepath.ToSlash(in), "/") {
			if seg == ".." {
				return "", fmt.Errorf("glob %q climbs out with \"..\": write the pattern from inside an allowed root (%s)", in, r)
			}
		}
		check = filepath.FromSlash(glob.Base(filepath.ToSlash(abs)))
	}
	// Whether the path is inside the roots is decided before whether it
	// exists, and a path outside them gets one answer either way: the
	// answer must not tell what exists outside the roots.
	real, err := resolve(check)
	if !r.within(real) {
		return "", r.outside(in)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("path %q does not exist (relative paths start from %s); check the path", in, r.dirs[0])
	}
	if err != nil {
		return "", fmt.Errorf("path %q cannot be read: %w", in, err)
	}
	if rel, err := filepath.Rel(r.cwd, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return rel, nil
	}
	return abs, nil
}

// outside is the answer for a path outside the roots, whether or not it
// exists.
func (r *roots) outside(in string) error {
	return fmt.Errorf("path %q is not inside the allowed roots (%s): the server reads and changes only files under them; start it with --root to allow another folder", in, r)
}

// resolve resolves the symbolic links of the absolute path p as far as it
// exists and appends the rest: where p lies, or would lie once created. The
// error says why p itself could not be resolved (fs.ErrNotExist when it
// does not exist).
func resolve(p string) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err == nil {
		return real, nil
	}
	var rest []string
	for dir := p; ; {
		parent := filepath.Dir(dir)
		if parent == dir {
			return p, err
		}
		rest = append([]string{filepath.Base(dir)}, rest...)
		dir = parent
		if r, perr := filepath.EvalSymlinks(dir); perr == nil {
			return filepath.Join(append([]string{r}, rest...)...), err
		}
	}
}

// allows reports whether a file met while walking (named by its URI, a
// slash path relative to the index's root base, "" for the working
// directory) really lies in a root: a symbolic link inside a root may point
// anywhere.
func (r *roots) allows(uri, base string) bool {
	real, err := filepath.EvalSymlinks(source.URIPath(base, uri))
	if err != nil {
		return false
	}
	if !filepath.IsAbs(real) {
		real = filepath.Join(r.cwd, real)
	}
	return r.within(real)
}

// CheckRoots checks that every allowed root is an existing folder.
func CheckRoots(dirs []string) error {
	_, err := newRoots(dirs)
	return err
}

package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/glob"
	"github.com/sagasu-dev/sagasu/internal/source"
)

// ErrOutsideRoots is wrapped by the errors of paths outside the allowed
// roots.
var ErrOutsideRoots = errors.New("outside the allowed roots")

// ErrDotfile is wrapped by the errors of dotfiles and dot-folders that a
// toolset refuses (see Toolset.WithDotfiles).
var ErrDotfile = errors.New("a dotfile or dot-folder")

// refused is a refusal: its own message, and the kind it Is.
type refused struct {
	msg  string
	kind error
}

func (e *refused) Error() string { return e.msg }
func (e *refused) Unwrap() error { return e.kind }

// roots are the folders sagasu_index may read. An agent names files the
// way a user would ("docs/", "docs/**/*.md"); every path is resolved,
// symbolic links included, and must lie inside a root. Unless dotfiles is
// set, no path under a root may pass through a dotfile or dot-folder
// (".env", ".ssh/", ".git/...): the faces other programs reach (the web
// page, MCP) refuse them, since they often hold keys and secrets.
type roots struct {
	dirs     []string // absolute, symbolic links resolved; dirs[0] anchors relative paths
	cwd      string   // the working directory, as the OS reports it
	dotfiles bool     // dotfiles and dot-folders are allowed
	// served marks the rules of a face other programs reach (see
	// WithDotfiles): a source is handed out only when where its links lead
	// now passes the rules too.
	served bool
}

// dotSegment returns the first element of path p (slash or OS separators)
// that starts with "." and is neither "." nor "..": ".ssh" for
// ".ssh/id_rsa". It returns "" when there is none.
func dotSegment(p string) string {
	for _, seg := range strings.FieldsFunc(filepath.ToSlash(p), func(r rune) bool { return r == '/' }) {
		if strings.HasPrefix(seg, ".") && seg != "." && seg != ".." {
			return seg
		}
	}
	return ""
}

// dotfile is the refusal of what, which passes through the dotfile or
// dot-folder seg.
func dotfile(what, seg string) error {
	return &refused{kind: ErrDotfile, msg: fmt.Sprintf("%s passes through %q, a dotfile or dot-folder: those often hold keys and secrets (.env, .ssh/, .git/), so this server neither indexes nor shows them; start it with --allow-dotfiles to allow them", what, seg)}
}

// rel returns p relative to the root it lies in (lexically), and whether
// it lies in one.
func (r *roots) rel(p string) (string, bool) {
	i, rel := r.place(p)
	return rel, i >= 0
}

// place returns the index of the root the absolute path p lies in
// (lexically) and p relative to it, or -1.
func (r *roots) place(p string) (int, string) {
	for i, d := range r.dirs {
		rel, err := filepath.Rel(d, p)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return i, rel
		}
	}
	return -1, ""
}

// checkDots refuses what when any of paths (absolute, or relative to a
// root) passes through a dotfile or dot-folder below its root, unless
// dotfiles are allowed. A root's own path does not count: a root may lie
// in a dot-folder.
func (r *roots) checkDots(what string, paths ...string) error {
	if r.dotfiles {
		return nil
	}
	for _, p := range paths {
		if filepath.IsAbs(p) {
			rel, ok := r.rel(p)
			if !ok {
				continue
			}
			p = rel
		}
		if seg := dotSegment(p); seg != "" {
			return dotfile(what, seg)
		}
	}
	return nil
}

func newRoots(dirs []string) (*roots, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	}
	if len(dirs) == 0 {
		dirs = []string{cwd}
	}
	r := &roots{cwd: cwd, dotfiles: true}
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
	_, ok := r.rel(p)
	return ok
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
	// Both the path as named (a glob's pattern too) and where its links
	// lead must stay out of dotfiles.
	if err := r.checkDots(fmt.Sprintf("path %q", in), abs, real); err != nil {
		return "", err
	}
	if errors.Is(err, fs.ErrNotExist) {
		return "", &refused{kind: fs.ErrNotExist, msg: fmt.Sprintf("path %q does not exist (relative paths start from %s); check the path", in, r.dirs[0])}
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
	return &refused{kind: ErrOutsideRoots, msg: fmt.Sprintf("path %q is not inside the allowed roots (%s): the server reads and changes only files under them; start it with --root to allow another folder", in, r)}
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

// allows says why a file met while walking (named by its URI, a slash
// path relative to the index's root base, "" for the working directory)
// may not be read, or nil: it must really lie in a root (a symbolic link
// inside a root may point anywhere), and neither its path nor where its
// links lead may pass through a dotfile unless they are allowed.
func (r *roots) allows(uri, base string) error {
	p := source.URIPath(base, uri)
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.cwd, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil || !r.within(real) {
		return errOutsideRoots
	}
	return r.checkDots(fmt.Sprintf("file %q", uri), p, real)
}

// CheckRoots checks that every allowed root is an existing folder.
func CheckRoots(dirs []string) error {
	_, err := newRoots(dirs)
	return err
}

// WithDotfiles returns the toolset with its rule on dotfiles and
// dot-folders: allowed (as a toolset is made, for the command line, where
// the user names files themselves) or refused (what the faces other
// programs reach use unless the user allows them): then Index refuses
// paths and skips files that pass through one, and Get and Readable
// refuse sources whose path does.
//
// The toolset it returns also checks, before it hands out a local file's
// content, where the file's symbolic link leads now (see Readable).
func (t *Toolset) WithDotfiles(allow bool) *Toolset {
	if t.roots.dotfiles == allow && t.roots.served {
		return t
	}
	c, r := *t, *t.roots
	r.dotfiles = allow
	r.served = true
	c.roots = &r
	return &c
}

// CheckPath says why Index would refuse the file, folder or glob p (outside
// the roots, a dotfile, missing), without reading it; remote inputs are
// checked when they are fetched.
func (t *Toolset) CheckPath(p string) error {
	if isRemote(p) {
		return nil
	}
	_, err := t.roots.input(p)
	return err
}

// Readable says why the toolset may not hand out src's content (a local
// file in a dotfile or dot-folder, unless they are allowed), or nil. A
// file's URI is checked below the root it lies in, or else whole. On the
// faces (WithDotfiles), a file that is a symbolic link is checked where it
// leads as well: inside a root, and not a dotfile or in a dot-folder
// unless they are allowed; an index made before walks stopped following
// such links (or copied from elsewhere) may hold "docs/setup.md" read
// through a link to ~/.ssh/id_rsa.
func (t *Toolset) Readable(src doc.Source) error {
	if src.Type != doc.TypeFile {
		return nil
	}
	if !t.roots.dotfiles {
		p := src.URI
		if filepath.IsAbs(filepath.FromSlash(p)) {
			if rel, ok := t.roots.rel(filepath.FromSlash(p)); ok {
				p = rel
			}
		}
		if seg := dotSegment(p); seg != "" {
			return dotfile(fmt.Sprintf("source %q", src.URI), seg)
		}
	}
	if t.roots.served {
		return t.roots.linkServed(src.URI, t.opt.Index.Source.Root)
	}
	return nil
}

// linkServed says why a face may not hand out the file named by uri (a
// slash path from the index's root base) because of where its symbolic
// link leads now, or nil: a file that is no link, or is gone, is judged by
// its URI alone.
func (r *roots) linkServed(uri, base string) error {
	p := filepath.Clean(source.URIPath(base, uri))
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.cwd, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil || real == p {
		return nil
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil && filepath.Join(dir, filepath.Base(p)) == real {
		return nil // only its folders are links: the URI already names the real file
	}
	if !r.within(real) {
		return &refused{kind: ErrOutsideRoots, msg: fmt.Sprintf("source %q is a symbolic link that leads outside the allowed roots (%s): this server does not hand it out; start it with --root to allow that folder", uri, r)}
	}
	if r.dotfiles {
		return nil
	}
	if rel, _ := r.rel(real); dotSegment(rel) != "" {
		return dotfile(fmt.Sprintf("source %q (a symbolic link to %q)", uri, filepath.ToSlash(rel)), dotSegment(rel))
	}
	return nil
}

// opener opens the files and folders of one index run inside the roots
// (os.Root): a symbolic link may lead anywhere inside them, never out,
// whenever it was swapped in. Where the platform tells which file was
// opened (/proc on Linux), that file's path is checked too, against the
// roots and the dotfile rule, before a byte is read.
type opener struct {
	roots *roots
	dirs  []*os.Root // one per roots.dirs
	// hook, when set (by tests), runs each open in place of calling it.
	hook func(name string, open func() (*os.File, error)) (*os.File, error)
}

// openRoots opens the roots for one run; Close them after.
func (r *roots) openRoots() (*opener, error) {
	o := &opener{roots: r}
	for _, d := range r.dirs {
		root, err := os.OpenRoot(d)
		if err != nil {
			o.Close()
			return nil, fmt.Errorf("open allowed root %q: %w", d, err)
		}
		o.dirs = append(o.dirs, root)
	}
	return o, nil
}

// reopen opens the file the links of abs lead to, if it lies in a root,
// inside that root; else it refuses name as outside the roots (first is
// why the first open failed).
func (o *opener) reopen(name, abs string, first error) (*os.File, error) {
	real, err := filepath.EvalSymlinks(abs)
	if err == nil {
		if i, rel := o.roots.place(real); i >= 0 {
			if f, err := o.dirs[i].Open(rel); err == nil {
				return f, nil
			}
		}
	}
	return nil, &refused{kind: ErrOutsideRoots, msg: fmt.Sprintf("%q leads outside the allowed roots (%s): %v", name, o.roots, first)}
}

// Close closes the roots.
func (o *opener) Close() {
	for _, d := range o.dirs {
		d.Close()
	}
}

// open opens name (relative to the working directory, or absolute) inside
// the root it lies in.
func (o *opener) open(name string) (*os.File, error) {
	abs := name
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(o.roots.cwd, abs)
	}
	i, rel := o.roots.place(abs)
	if i < 0 {
		// Named through a link to a root's folder: place its parent.
		if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
			i, rel = o.roots.place(filepath.Join(dir, filepath.Base(abs)))
		}
	}
	if i < 0 {
		return nil, o.roots.outside(name)
	}
	openIt := func() (*os.File, error) { return o.dirs[i].Open(rel) }
	var f *os.File
	var err error
	if o.hook != nil {
		f, err = o.hook(name, openIt)
	} else {
		f, err = openIt()
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
		// os.Root refuses a link that leads out of the root, and any
		// absolute link. Where the link leads now, if inside a root, is
		// opened in that root: whatever is swapped in, nothing outside.
		f, err = o.reopen(name, abs, err)
	}
	if err != nil {
		return nil, err
	}
	if real := openedPath(f); real != "" {
		if !o.roots.within(real) {
			f.Close()
			return nil, o.roots.outside(name)
		}
		if err := o.roots.checkDots(fmt.Sprintf("file %q", name), real); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

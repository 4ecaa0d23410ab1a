// Package source turns what a user points sagasu at (files, directories,
// glob patterns, stdin, literal text, web pages, GitHub repositories and
// gists) into doc.Document values, one at a time, so that a folder of
// 100,000 files never has to sit in memory. Each form of input has a
// Loader; a Registry picks one per input.
package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/glob"
	"github.com/sagasu-dev/sagasu/internal/ignore"
)

// DefaultMaxFileSize is the largest file read when Options.MaxFileSize is 0.
const DefaultMaxFileSize int64 = 10 << 20

// Options tunes the loaders. The zero value is ready to use.
type Options struct {
	// MaxFileSize is the largest file, in bytes, that is read; larger files
	// are skipped with a warning. 0 (or less) means DefaultMaxFileSize.
	MaxFileSize int64
	// Stdin is read when an input is "-"; nil means os.Stdin.
	Stdin io.Reader
	// Logger receives notices and warnings: binary files skipped, files too
	// large, invalid UTF-8 repaired, unreadable files. nil discards them.
	Logger *slog.Logger
	// Exclude holds extra glob patterns (see package glob) for files and
	// directories to skip while walking a directory or a glob. A pattern is
	// matched against the entry's slash path as given ("docs/drafts/a.md"),
	// its URI (the same from any directory, see LocalURI), its path relative
	// to the walked input ("drafts/a.md") and its base name ("a.md"); an
	// excluded directory is not entered. Explicitly named files
	// are never excluded. GitHub repositories are filtered the same way.
	Exclude []string
	// Remote configures GitHub repositories, gists and web pages.
	Remote Remote
	// Root is the folder local file URIs are shown relative to (see
	// LocalURI): a file under it is "docs/guide/intro.md" however it was
	// named, any other file its absolute canonical path. "" means the
	// working directory.
	Root string
	// Accept, when set, is asked about every loaded document; an error
	// skips it with SkipRefused and the error as the reason (the MCP
	// server refuses files that symbolic links lead outside its roots).
	Accept func(doc.Document) error
	// Open, when set, opens the local files and folders a walk reads in
	// place of os.Open: the faces open them inside their roots, so that a
	// symbolic link swapped in after a path was checked cannot lead the
	// read elsewhere. Its error is the file's read error.
	Open func(name string) (*os.File, error)
	// NoIgnore turns off ignore files: by default a walked folder leaves
	// out what its .gitignore files (git's rules, with the repository's
	// .git/info/exclude), .ignore and .sagasuignore files and the user's
	// global excludes (GlobalExcludes) leave out; see package ignore.
	// Files named as inputs are read whatever the ignore files say.
	NoIgnore bool
	// GlobalExcludes is the user's global git excludes file
	// (ignore.GlobalExcludesFile); "" reads none.
	GlobalExcludes string
	// Only, when set, limits a walk of a folder to the files and folders
	// it accepts, by canonical OS path (a folder it refuses is not
	// entered): a watch reads again only what changed, under the same
	// rules as a full walk.
	Only func(canon string, isDir bool) bool
}

// SkipReason says why a file was not turned into a document.
type SkipReason string

// Reasons a file is skipped.
const (
	SkipBinary     SkipReason = "binary"     // a NUL byte or mostly invalid UTF-8
	SkipTooLarge   SkipReason = "too-large"  // over Options.MaxFileSize
	SkipUnreadable SkipReason = "unreadable" // could not be opened or read inside a walked directory
	// SkipIgnored is a symlinked directory (not followed) or a special file
	// such as a FIFO or socket met while walking. Directories and files left
	// out by the default rules (.git, node_modules, .sagasu, hidden
	// directories) or by Options.Exclude are routine and are only logged at
	// debug level, not reported.
	SkipIgnored SkipReason = "ignored"
	// SkipRefused is a document Options.Accept refused.
	SkipRefused SkipReason = "refused"
	// SkipIgnoreFile is a file or folder an ignore file (.gitignore,
	// .ignore, .sagasuignore, the global excludes) leaves out; a folder's
	// contents are not listed.
	SkipIgnoreFile SkipReason = "ignore-file"
	// SkipLink is a symbolic link met while walking that leads outside the
	// folder being walked, or to a dotfile or into a dot-folder (see
	// followLink). Name the file as an input to read it.
	SkipLink SkipReason = "link"
)

// Skip reports one file or directory that Walk did not load.
type Skip struct {
	Path   string // the URI the file would have had; "-" for stdin
	Reason SkipReason
	Err    error // what went wrong, in words; never nil
}

// Walk loads every input in order and calls fn with each document.
//
// An input is "-" (read Options.Stdin), a file, a directory (walked
// recursively in lexical order), or a glob pattern such as "docs/**/*.md"
// (walked from its base directory, selecting the files whose slash path
// matches; see package glob). An input that names an existing path is taken
// literally even if it contains glob characters. A document's URI is the
// file's identity (see LocalURI), whatever spelling named it: its canonical
// path shown as a slash path from Options.Root when it lies under it
// (input "docs", "./docs", "/abs/root/docs" or "../root/docs" all yield
// "docs/guide/intro.md" when the root is /abs/root), else as an absolute
// slash path. A file reached twice (say through "docs" and "docs/a.md", or
// through a symbolic link to its folder) is loaded once. Glob inputs match
// the paths as given; Options.Exclude matches both.
//
// While walking, directories named .git, node_modules and .sagasu and other
// hidden directories are skipped, unless the directory is itself the input
// or a glob names it literally ("**/.github/*.md"). Symlinked directories are
// not followed, except one named as an input, which is resolved; symlinked
// files are read and keep their own names when the link leads to a file
// inside the walked folder that is not a dotfile or in a dot-folder, and
// are skipped with SkipLink otherwise: a cloned repository's
// "docs/setup.md -> ../../.ssh/id_rsa" is not read.
//
// Files that cannot be loaded as text are passed to skip (which may be nil)
// and Walk goes on. Walk fails, naming the input and what to do, when an
// input does not exist, a glob is malformed or matches no file, or an
// explicitly named file or directory cannot be read; all inputs are checked
// before any is loaded. An error from fn stops the walk and is returned as
// is; when ctx is cancelled Walk stops promptly and returns ctx.Err().
//
// Remote inputs (github:owner/repo, gist:ID, http(s) URLs; see
// DefaultRegistry) are loaded in full, since Walk keeps no state between
// runs; index.Indexer.Run loads them incrementally.
func Walk(ctx context.Context, inputs []string, opt Options, fn func(doc.Document) error, skip func(Skip)) error {
	w := newWalker(ctx, opt, fn, skip)
	if err := w.setup(); err != nil {
		return err
	}
	if err := w.setRoot(); err != nil {
		return err
	}
	rm := newRemote(opt)
	reg := NewRegistry(&GitHub{rm: rm}, &Gist{rm: rm}, &Web{rm: rm})
	type step struct {
		plan   plan
		remote Loader // nil for local inputs
		input  string
	}
	steps := make([]step, 0, len(inputs))
	for _, in := range inputs {
		if IsRemote(in) {
			l, err := reg.For(in)
			if err == nil {
				err = l.Check(in)
			}
			if err != nil {
				return err
			}
			steps = append(steps, step{remote: l, input: in})
			continue
		}
		p, err := resolve(in)
		if err != nil {
			return err
		}
		steps = append(steps, step{plan: p})
	}
	for _, st := range steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		if st.remote != nil {
			// Without an index there is no saved state: load in full.
			r := &Run{Options: opt, Emit: fn, Keep: func(string) {}, Skip: w.skip,
				Stored: func(string) bool { return false }, State: func(string) string { return "" }}
			if _, err := st.remote.Load(ctx, st.input, r); err != nil {
				return err
			}
			continue
		}
		if err := w.run(st.plan); err != nil {
			return err
		}
	}
	return nil
}

func newWalker(ctx context.Context, opt Options, fn func(doc.Document) error, skip func(Skip)) *walker {
	w := &walker{
		ctx:  ctx,
		max:  opt.MaxFileSize,
		in:   opt.Stdin,
		log:  opt.Logger,
		fn:   fn,
		skip: skip,
		excl: opt.Exclude,
		seen: make(map[string]bool),
		opt:  opt,
	}
	if w.max <= 0 {
		w.max = DefaultMaxFileSize
	}
	if w.in == nil {
		w.in = os.Stdin
	}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	if w.skip == nil {
		w.skip = func(Skip) {}
	}
	return w
}

// setup checks the exclude patterns.
func (w *walker) setup() error {
	for _, p := range w.excl {
		if err := glob.Valid(p); err != nil {
			return fmt.Errorf("exclude pattern: %w", err)
		}
	}
	return nil
}

// setRoot settles the canonical root URIs are shown from, once: the
// working directory is read when the first input is loaded.
func (w *walker) setRoot() error {
	if w.root != "" {
		return nil
	}
	r, err := CanonicalRoot(w.opt.Root)
	if err != nil {
		return err
	}
	w.root = r
	return nil
}

// uri is the URI of the file or folder at the canonical path c.
func (w *walker) uri(c string) string { return uriFor(w.root, c) }

// kind is what an input turned out to be.
type kind int

const (
	kindStdin kind = iota
	kindFile
	kindDir
	kindGlob
)

// plan is one input, checked and ready to load.
type plan struct {
	input string // as the user gave it
	kind  kind
	os    string // OS path of the file, directory or glob base
	uri   string // slash path of the same, as given
	canon string // canonical path of the same (see Canonical)
	glob  *pattern
}

// pattern is a glob input.
type pattern struct {
	text string // cleaned, slash-separated
	// named holds the literal segments of the pattern, so that a hidden or
	// normally skipped directory the pattern names ("**/.github/*.yml") is
	// entered.
	named map[string]bool
}

// resolve decides what an input is, or says why it cannot be loaded.
func resolve(in string) (plan, error) {
	switch in {
	case "-":
		return plan{input: in, kind: kindStdin, uri: "-"}, nil
	case "":
		return plan{}, errors.New(`empty input: give a file, a directory, a glob such as "docs/**/*.md", or "-" for stdin`)
	}
	osPath := filepath.Clean(in)
	uri := path.Clean(filepath.ToSlash(in))
	fi, err := os.Stat(osPath)
	var canon string
	if err == nil && (fi.IsDir() || fi.Mode().IsRegular()) {
		// A special file named as an input (a pipe such as /dev/fd/3 from
		// "<(command)") has no lasting identity: it keeps its name as given.
		if canon, err = Canonical(osPath); err != nil {
			return plan{}, fmt.Errorf("input %q: %w", in, err)
		}
	}
	switch {
	case err == nil && fi.IsDir():
		return plan{input: in, kind: kindDir, os: osPath, uri: uri, canon: canon}, nil
	case err == nil:
		return plan{input: in, kind: kindFile, os: osPath, uri: uri, canon: canon}, nil
	case errors.Is(err, fs.ErrNotExist) && strings.ContainsAny(uri, "*?["):
		// A backslash alone does not make a glob: "C:\docs\a.md" is a
		// mistyped path, not a pattern to match against the whole tree.
		return resolveGlob(in, uri)
	case errors.Is(err, fs.ErrNotExist):
		return plan{}, fmt.Errorf("input %q does not exist; check the path (relative paths start from %s): %w", in, cwd(), err)
	default:
		return plan{}, fmt.Errorf("input %q cannot be read; check the path and its permissions: %w", in, err)
	}
}

func resolveGlob(in, pat string) (plan, error) {
	if err := glob.Valid(pat); err != nil {
		return plan{}, fmt.Errorf("input %q does not exist, and as a glob it is malformed; fix the path or the pattern: %w", in, err)
	}
	base := glob.Base(pat)
	fi, err := os.Stat(filepath.FromSlash(base))
	if err != nil || !fi.IsDir() {
		return plan{}, fmt.Errorf("input %q: its base directory %q does not exist; check the path (relative paths start from %s)", in, base, cwd())
	}
	canon, err := Canonical(filepath.FromSlash(base))
	if err != nil {
		return plan{}, fmt.Errorf("input %q: %w", in, err)
	}
	p := &pattern{text: pat, named: make(map[string]bool)}
	for _, seg := range strings.Split(pat, "/") {
		if !glob.HasMeta(seg) {
			p.named[seg] = true
		}
	}
	return plan{input: in, kind: kindGlob, os: filepath.FromSlash(base), uri: base, canon: canon, glob: p}, nil
}

func cwd() string {
	dir, err := os.Getwd()
	if err != nil {
		return "the current directory"
	}
	return dir
}

// walker holds one Walk's settings and progress.
type walker struct {
	ctx  context.Context
	max  int64
	in   io.Reader
	log  *slog.Logger
	fn   func(doc.Document) error
	skip func(Skip)
	excl []string
	seen map[string]bool // URIs already loaded
	hits int             // files the current glob matched
	opt  Options
	root string       // canonical folder URIs are shown from; set by setRoot
	base string       // canonical folder being walked: links may not lead out of it
	ign  *ignore.Tree // the ignore rules of the folder being walked, or nil
	// ignBase is the canonical folder ign's paths start from.
	ignBase string
}

func (w *walker) run(p plan) error {
	if err := w.setRoot(); err != nil {
		return err
	}
	switch p.kind {
	case kindStdin:
		return w.stdin()
	case kindFile:
		uri := p.uri
		if p.canon != "" {
			uri = w.uri(p.canon)
		}
		return w.file(p.os, p.uri, uri, true)
	case kindDir:
		w.base = p.canon
		if err := w.rules(p.canon); err != nil {
			return err
		}
		return w.dir(p.os, p.canon, p.uri, p.uri, nil, true)
	default:
		w.hits = 0
		w.base = p.canon
		if err := w.rules(p.canon); err != nil {
			return err
		}
		if err := w.dir(p.os, p.canon, p.uri, p.uri, p.glob, true); err != nil {
			return err
		}
		if w.hits == 0 {
			return fmt.Errorf("input %q matches no files under %q; check the pattern (hidden directories, .git and node_modules are searched only when the pattern names them)", p.input, p.uri)
		}
		return nil
	}
}

// dir loads everything under the directory osDir, whose canonical path is
// canon and whose slash path as given is uri. root is the slash path of the
// walked input; g is the glob being matched, if any. Globs and excludes
// match the paths as given; documents are named by their canonical paths.
func (w *walker) dir(osDir, canon, uri, root string, g *pattern, isRoot bool) error {
	entries, err := w.readDir(osDir)
	if err != nil {
		if isRoot {
			return fmt.Errorf("cannot read directory %q; check its permissions: %w", uri, err)
		}
		w.skipped(w.uri(canon), SkipUnreadable, err)
		if len(entries) == 0 {
			return nil
		}
		// Go on with what could be read.
	}
	for _, e := range entries {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		name := e.Name()
		childOS := filepath.Join(osDir, name)
		childCanon := filepath.Join(canon, name)
		childURI := path.Join(uri, name)
		typ := e.Type()
		if typ&fs.ModeSymlink != 0 {
			fi, err := os.Stat(childOS)
			if err != nil {
				if g == nil || glob.Match(g.text, childURI) {
					// A link whose target is gone is common in a checkout
					// (a build output not built yet) and no fault of the
					// user's: reported as a link, not as a file to fix.
					w.skipped(w.uri(childCanon), SkipLink, brokenLink(childOS, err))
				}
				continue
			}
			if fi.IsDir() {
				// Following links to directories can loop forever.
				if g == nil || glob.MatchBelow(g.text, childURI) {
					w.skipped(w.uri(childCanon), SkipIgnored, errors.New("symbolic link to a directory is not followed"))
				}
				continue
			}
			if err := followLink(w.base, childOS); err != nil {
				if g == nil || glob.Match(g.text, childURI) {
					w.skipped(w.uri(childCanon), SkipLink, err)
				}
				continue
			}
			typ = fi.Mode().Type()
		}

		if w.leftOut(name, childCanon, childURI, typ.IsDir(), g) {
			continue
		}
		if typ.IsDir() {
			if g != nil && !glob.MatchBelow(g.text, childURI) {
				continue
			}
			if why := w.ignoreDir(name, childURI, w.uri(childCanon), root, g); why != "" {
				// Routine, so not reported to skip: .git would show up on every run.
				w.log.Debug("skipped directory", "path", childURI, "reason", why)
				continue
			}
			if err := w.dir(childOS, childCanon, childURI, root, g, false); err != nil {
				return err
			}
			continue
		}

		if g != nil {
			if !glob.Match(g.text, childURI) {
				continue
			}
			w.hits++
		}
		if p := w.excluded(childURI, w.uri(childCanon), root, name); p != "" {
			w.log.Debug("skipped file", "path", childURI, "reason", "matches exclude pattern", "pattern", p)
			continue
		}
		if strings.HasPrefix(name, ".") && (g == nil || !g.named[name]) {
			// Dotfiles (.env, .npmrc) often hold secrets that must not end up
			// in an index agents read; name one as an input to include it.
			w.log.Debug("skipped file", "path", childURI, "reason", "hidden file")
			continue
		}
		if !typ.IsRegular() {
			// Reading a FIFO or device found by walking could block forever.
			w.skipped(w.uri(childCanon), SkipIgnored, fmt.Errorf("not a regular file (%s)", typ))
			continue
		}
		if err := w.file(childOS, childURI, w.uri(childCanon), false); err != nil {
			return err
		}
	}
	return nil
}

// ignoreDir says why a directory met while walking is skipped, or "".
func (w *walker) ignoreDir(name, uri, id, root string, g *pattern) string {
	if g == nil || !g.named[name] {
		switch {
		case name == ".git" || name == "node_modules" || name == ".sagasu":
			return name + " directories are always skipped"
		case strings.HasPrefix(name, "."):
			return "hidden directory (name it as an input to include it)"
		}
	}
	if p := w.excluded(uri, id, root, name); p != "" {
		return fmt.Sprintf("matches exclude pattern %q", p)
	}
	return ""
}

// excluded returns the first Exclude pattern that matches the entry's path
// as given (uri), its URI (id), its path from the walked input or its
// name, or "".
func (w *walker) excluded(uri, id, root, name string) string {
	rel := ""
	if root == "." {
		rel = uri
	} else if r, ok := strings.CutPrefix(uri, strings.TrimSuffix(root, "/")+"/"); ok {
		rel = r
	}
	for _, p := range w.excl {
		if glob.Match(p, uri) || glob.Match(p, id) || glob.Match(p, name) || (rel != "" && glob.Match(p, rel)) {
			return p
		}
	}
	return ""
}

// brokenLink says why the link at osPath leads nowhere, naming its target.
func brokenLink(osPath string, err error) error {
	target, rerr := os.Readlink(osPath)
	switch {
	case rerr != nil:
		return fmt.Errorf("symbolic link that cannot be read: %w", rerr)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("broken symbolic link: its target %q does not exist", target)
	}
	return fmt.Errorf("symbolic link to %q that cannot be followed: %w", target, err)
}

func (w *walker) skipped(uri string, reason SkipReason, err error) {
	switch reason {
	case SkipLink:
		w.log.Info("symbolic link not followed", "path", uri, "reason", err)
	case SkipIgnored:
		w.log.Info("skipped", "path", uri, "reason", err)
	case SkipBinary:
		w.log.Info("skipped binary file", "path", uri, "reason", err)
	default:
		w.log.Warn("skipped file", "path", uri, "reason", err)
	}
	w.skip(Skip{Path: uri, Reason: reason, Err: err})
}

// file loads one file, given as the slash path given and named uri. An
// explicit file's read errors are fatal; a walked file's are reported to
// skip.
func (w *walker) file(osPath, given, uri string, explicit bool) error {
	if w.seen[uri] {
		return nil
	}
	w.seen[uri] = true

	data, tooLarge, err := w.readFile(osPath)
	if err != nil {
		if explicit {
			return fmt.Errorf("cannot read input %q; check that it is a readable file: %w", given, err)
		}
		w.skipped(uri, SkipUnreadable, err)
		return nil
	}
	if tooLarge {
		w.skipped(uri, SkipTooLarge, fmt.Errorf("larger than the %d-byte limit", w.max))
		return nil
	}
	text, ok := w.decode(uri, data)
	if !ok {
		return nil
	}
	if err := w.ctx.Err(); err != nil {
		return err
	}
	return w.fn(fileDocument(uri, text))
}

// readFile reads at most w.max bytes of a file; tooLarge reports that there
// was more. Special files named explicitly (a pipe such as /dev/fd/3) are
// read the same way. A regular file is read into a buffer of its size, so
// its content is held once, not grown by doubling and then copied.
func (w *walker) readFile(osPath string) (data string, tooLarge bool, err error) {
	f, err := w.open(osPath)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	var size int64
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		if fi.Size() > w.max {
			return "", true, nil
		}
		size = fi.Size()
	}
	return readLimit(f, w.max, size)
}

// open opens a file or folder with Options.Open, else os.Open.
func (w *walker) open(name string) (*os.File, error) {
	if w.opt.Open != nil {
		return w.opt.Open(name)
	}
	return os.Open(name)
}

// readDir is os.ReadDir through open: the folder's entries sorted by name,
// with those read before an error.
func (w *walker) readDir(name string) ([]fs.DirEntry, error) {
	if w.opt.Open == nil {
		return os.ReadDir(name)
	}
	f, err := w.open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// readLimit reads at most max bytes of r; tooLarge reports that there was
// more. size, when known, is how much r holds: the buffer is made that big
// at once, and the bytes read become the string without another copy.
func readLimit(r io.Reader, max, size int64) (data string, tooLarge bool, err error) {
	var b strings.Builder
	if size > 0 && size <= max {
		b.Grow(int(size))
	}
	if _, err := io.Copy(&b, io.LimitReader(r, max+1)); err != nil {
		return "", false, err
	}
	if int64(b.Len()) > max {
		return "", true, nil
	}
	return b.String(), false, nil
}

// decode turns file content into text, or reports the file as binary.
func (w *walker) decode(uri string, data string) (string, bool) {
	text, repaired, err := decodeString(data)
	if err != nil {
		w.skipped(uri, SkipBinary, err)
		return "", false
	}
	if repaired > 0 {
		w.log.Warn("repaired invalid UTF-8: replaced bad bytes with U+FFFD", "path", uri, "bytes", repaired)
	}
	return text, true
}

// stdin loads standard input as one document. The read runs in its own
// goroutine so that cancelling ctx is not held up by a terminal that never
// sends EOF.
func (w *walker) stdin() error {
	type result struct {
		data     string
		tooLarge bool
		err      error
	}
	done := make(chan result, 1)
	go func() {
		data, tooLarge, err := readLimit(w.in, w.max, 0)
		done <- result{data, tooLarge, err}
	}()
	var r result
	select {
	case <-w.ctx.Done():
		return w.ctx.Err()
	case r = <-done:
	}
	if r.err != nil {
		return fmt.Errorf("cannot read input %q (stdin): %w", "-", r.err)
	}
	if r.tooLarge {
		w.skipped("-", SkipTooLarge, fmt.Errorf("stdin is larger than the %d-byte limit", w.max))
		return nil
	}
	text, ok := w.decode("-", r.data)
	if !ok {
		return nil
	}
	d := textDocument("stdin:", text, "")
	if d.Title == "" {
		d.Title = "stdin"
	}
	if w.seen[d.URI] {
		return nil
	}
	w.seen[d.URI] = true
	return w.fn(d)
}

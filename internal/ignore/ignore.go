// Package ignore decides which files and folders of a tree its ignore
// files leave out, with git's semantics: .gitignore in every folder
// (nested, "!" negation, anchored and folder-only patterns, "**", escapes,
// trailing spaces), the repository's .git/info/exclude and the user's
// global excludes (core.excludesFile), plus .ignore and .sagasuignore
// files, which are written the same way and take precedence over
// .gitignore, as ripgrep's .ignore does.
//
// It is tested against `git check-ignore` on generated trees.
package ignore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
)

// The ignore files read in every folder, from the lowest precedence to the
// highest: a match in a later kind decides, whatever the earlier say.
const (
	GitIgnore    = ".gitignore"
	Ignore       = ".ignore"
	SagasuIgnore = ".sagasuignore"
)

var kinds = [...]string{GitIgnore, Ignore, SagasuIgnore}

// maxFileSize is the largest ignore file read, as git's limit.
const maxFileSize = 100 << 20

// Options say where the rules beyond the tree's own files come from.
type Options struct {
	// GlobalExcludes is the user's global excludes file (git's
	// core.excludesFile; see GlobalExcludesFile); "" reads none. A
	// repository's own core.excludesFile (.git/config) replaces it.
	GlobalExcludes string
	// Top, when root is not in a git work tree but lies below Top, is the
	// folder whose ignore files and those of the folders down to root apply
	// as well (the index's root: a walk of "docs/" in a project follows the
	// project's .sagasuignore). "" or a folder root is not below: root alone.
	Top string
}

// Tree holds the rules of one folder tree, read as the tree is walked:
// each folder's ignore files once, when a path in it is first asked about.
// It is safe for concurrent use.
type Tree struct {
	top     string // OS path of the folder the rules start from: the git work tree holding root, else root
	rootRel string // root as a slash path from top ("" when the same)
	base    []pattern

	mu   sync.Mutex
	dirs map[string]*dirRules // by slash path from top
}

// dirRules are the patterns in force in one folder: its own files' and,
// through parent, those of the folders above it.
type dirRules struct {
	parent   *dirRules
	own      [len(kinds)][]pattern
	excluded *pattern // the pattern that leaves this folder out, or nil
}

// Match is what decided about a path.
type Match struct {
	Ignored bool
	// Pattern is the line that decided ("" when none matched), and Source
	// and Line where it was written.
	Pattern string
	Source  string
	Line    int
}

// String says it for a message: `"dist/" (.gitignore:3)`.
func (m Match) String() string {
	if m.Pattern == "" {
		return "no pattern"
	}
	return fmt.Sprintf("%q (%s:%d)", m.Pattern, m.Source, m.Line)
}

// New returns the rules of the folder root (an OS path, absolute and with
// its links resolved). When root lies in a git work tree, the repository's
// .git/info/exclude and the ignore files of the folders between the work
// tree's top and root apply as well, as git applies them.
func New(root string, opt Options) (*Tree, error) {
	t := &Tree{top: root, dirs: map[string]*dirRules{}}
	global := opt.GlobalExcludes
	if top, gitDir, ok := findRepo(root); ok {
		t.top = top
		rel, err := filepath.Rel(top, root)
		if err != nil {
			return nil, fmt.Errorf("ignore rules of %q: %w", root, err)
		}
		if rel != "." {
			t.rootRel = filepath.ToSlash(rel)
		}
		if v, ok := configValue(filepath.Join(gitDir, "config"), "core", "excludesfile"); ok {
			global = expandHome(v, os.Getenv("HOME"))
		}
		info := filepath.Join(commonDir(gitDir), "info", "exclude")
		t.base = append(t.read(global, "", global), t.read(info, "", ".git/info/exclude")...)
		return t, nil
	}
	if opt.Top != "" {
		if rel, err := filepath.Rel(opt.Top, root); err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			t.top, t.rootRel = opt.Top, filepath.ToSlash(rel)
		}
	}
	t.base = t.read(global, "", global)
	return t, nil
}

// Match says whether the file or folder rel (a slash path from the root
// New was given, not "" or ".") is left out, and by which pattern. A path
// in a folder that is left out is left out too, by the folder's pattern:
// as in git, nothing below an ignored folder can be re-included.
func (t *Tree) Match(rel string, isDir bool) Match {
	full := rel
	if t.rootRel != "" {
		full = t.rootRel + "/" + rel
	}
	dir, name := path.Split(full)
	dir = strings.TrimSuffix(dir, "/")
	t.mu.Lock()
	d := t.dir(dir)
	t.mu.Unlock()
	if d.excluded != nil {
		return matchOf(d.excluded)
	}
	if p := d.match(full, name, isDir, t.base); p != nil && !p.negate {
		return matchOf(p)
	} else if p != nil {
		return Match{Pattern: p.text, Source: p.source, Line: p.line}
	}
	return Match{}
}

func matchOf(p *pattern) Match {
	return Match{Ignored: true, Pattern: p.text, Source: p.source, Line: p.line}
}

// match returns the pattern that decides about full (name is its last
// element): the last that matches among the highest kind of ignore file
// that has one, the deepest folder's first; base is the lowest of all.
func (d *dirRules) match(full, name string, isDir bool, base []pattern) *pattern {
	for k := len(kinds) - 1; k >= 0; k-- {
		for r := d; r != nil; r = r.parent {
			ps := r.own[k]
			for i := len(ps) - 1; i >= 0; i-- {
				if ps[i].match(full, name, isDir) {
					return &ps[i]
				}
			}
		}
		if k == 0 {
			for i := len(base) - 1; i >= 0; i-- {
				if base[i].match(full, name, isDir) {
					return &base[i]
				}
			}
		}
	}
	return nil
}

// dir returns the rules of the folder rel (slash path from top), reading
// the ignore files of it and of the folders above it that are not read
// yet. A folder below root that its parent's rules leave out is marked
// excluded and its files are not read. t.mu is held.
func (t *Tree) dir(rel string) *dirRules {
	if d, ok := t.dirs[rel]; ok {
		return d
	}
	d := &dirRules{}
	if rel != "" {
		parentRel, name := path.Split(rel)
		parentRel = strings.TrimSuffix(parentRel, "/")
		d.parent = t.dir(parentRel)
		switch {
		case d.parent.excluded != nil:
			d.excluded = d.parent.excluded
		case t.below(rel):
			if p := d.parent.match(rel, name, true, t.base); p != nil && !p.negate {
				d.excluded = p
			}
		}
	}
	if d.excluded == nil {
		for k, kind := range kinds {
			src := kind
			if rel != "" {
				src = rel + "/" + kind
			}
			d.own[k] = t.read(filepath.Join(t.top, filepath.FromSlash(src)), rel, t.relToRoot(src))
		}
	}
	t.dirs[rel] = d
	return d
}

// below reports whether the folder rel (from top) lies strictly below the
// root: the root and the folders above it are never left out, since the
// user named the root.
func (t *Tree) below(rel string) bool {
	if t.rootRel == "" {
		return rel != ""
	}
	return strings.HasPrefix(rel, t.rootRel+"/")
}

// relToRoot shows the path src (from top) from the root, for messages.
func (t *Tree) relToRoot(src string) string {
	if t.rootRel == "" {
		return src
	}
	if r, ok := strings.CutPrefix(src, t.rootRel+"/"); ok {
		return r
	}
	if rel, err := filepath.Rel(filepath.FromSlash(t.rootRel), filepath.FromSlash(src)); err == nil {
		return filepath.ToSlash(rel)
	}
	return src
}

// read parses the ignore file at the OS path name, whose folder is base
// (from top). A missing, unreadable or linked file has no patterns: git
// does not follow a symbolic link to a .gitignore in the tree either. An
// ignore file is read even where dotfiles may not be shown (its content
// only decides what is left out, and is never indexed).
func (t *Tree) read(name, base, shown string) []pattern {
	if name == "" {
		return nil
	}
	fi, err := os.Lstat(name)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize))
	if err != nil {
		return nil
	}
	return parse(data, base, shown)
}

// findRepo finds the git work tree that holds dir: the nearest folder at
// or above it with a .git folder or file, and its git directory.
func findRepo(dir string) (top, gitDir string, ok bool) {
	for d := dir; ; {
		g := filepath.Join(d, ".git")
		if fi, err := os.Stat(g); err == nil {
			if fi.IsDir() {
				return d, g, true
			}
			if gd, err := gitFile(g); err == nil {
				return d, gd, true
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", "", false
		}
		d = parent
	}
}

// gitFile reads a .git file ("gitdir: PATH"), which a linked worktree or
// a submodule has in place of a .git folder.
func gitFile(name string) (string, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return "", err
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return "", errors.New("not a gitdir file")
	}
	v = strings.TrimSpace(v)
	if !filepath.IsAbs(v) {
		v = filepath.Join(filepath.Dir(name), v)
	}
	return v, nil
}

// commonDir is the folder shared by a repository's worktrees (where
// info/exclude lives): gitDir itself unless it names another.
func commonDir(gitDir string) string {
	data, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if err != nil {
		return gitDir
	}
	v := strings.TrimSpace(string(data))
	if !filepath.IsAbs(v) {
		v = filepath.Join(gitDir, v)
	}
	return v
}

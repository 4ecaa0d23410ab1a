package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/doc"
)

// Loader loads one form of input: files, a GitHub repository, a gist, a web
// page. A Registry picks the loader for each input by its form.
type Loader interface {
	// Name names the loader in messages: "files", "github", "gist", "web".
	Name() string
	// Match reports whether input has this loader's form.
	Match(input string) bool
	// Check says what is wrong with input's form, without loading anything
	// or touching the network.
	Check(input string) error
	// Load reads input and reports each document to r.Emit (or, when it
	// knows a stored document is unchanged without reading it, to r.Keep).
	// An error means the input was not loaded completely: the caller must
	// not prune or save state for it.
	Load(ctx context.Context, input string, r *Run) (Outcome, error)
}

// Pruner is a Loader that can tell, for `--prune`, whether a stored source
// it owns is gone at its origin without loading the input again.
type Pruner interface {
	// Owns reports whether src came from this loader.
	Owns(src doc.Source) bool
	// Gone reports whether src no longer exists.
	Gone(ctx context.Context, src doc.Source) (bool, error)
}

// Run is what a Load reads from and reports to; the indexer fills it.
type Run struct {
	Options Options
	// Force asks the loader to read everything again, ignoring saved state.
	Force bool
	// Emit receives a document that was read. Its error stops the load.
	Emit func(doc.Document) error
	// Keep reports a stored document the loader knows is unchanged without
	// reading it (a git blob with the same SHA, a page answering 304).
	Keep func(uri string)
	// Skip receives a file that was not loaded, with the reason.
	Skip func(Skip)
	// Stored reports whether the index holds a document with this URI.
	Stored func(uri string) bool
	// State returns what the last complete load saved under key
	// (Outcome.State), or "".
	State func(key string) string
}

// Outcome is what a complete load tells the indexer.
type Outcome struct {
	// StateKey and State are saved by the indexer once every document of the
	// load is written, and handed back by Run.State next time. Empty StateKey
	// saves nothing.
	StateKey, State string
	// Scope reports whether a stored URI belongs to this input. After a
	// complete load, stored URIs in scope that were neither emitted nor kept
	// are gone at the origin and are removed. nil removes nothing (local files
	// are removed by --prune instead).
	Scope func(uri string) bool
}

// Registry picks the loader for each input by its form.
type Registry struct {
	loaders []Loader
}

// NewRegistry returns a registry that tries loaders in order; the first
// whose Match accepts an input loads it.
func NewRegistry(loaders ...Loader) *Registry {
	return &Registry{loaders: loaders}
}

// DefaultRegistry returns the loaders sagasu knows, in the order they are
// tried: GitHub repositories ("github:owner/repo", "https://github.com/…"),
// gists ("gist:ID", "https://gist.github.com/…"), other http(s) URLs as web
// pages, and everything else as files, folders, globs or "-" for stdin.
// The files loader remembers what it loaded, so build one registry per run.
func DefaultRegistry(opt Options) *Registry {
	rm := newRemote(opt) // one connection pool for the three
	return NewRegistry(&GitHub{rm: rm}, &Gist{rm: rm}, &Web{rm: rm}, NewFiles(opt))
}

// For returns the loader for input.
func (r *Registry) For(input string) (Loader, error) {
	for _, l := range r.loaders {
		if l.Match(input) {
			return l, nil
		}
	}
	return nil, fmt.Errorf("input %q: no loader reads this form; give a file, folder, glob, URL, github:owner/repo or gist:ID", input)
}

// Loaders returns the registry's loaders in order.
func (r *Registry) Loaders() []Loader { return r.loaders }

// Check reports the first input whose form is wrong (a missing path, a
// malformed glob, a bad GitHub reference) without loading anything.
func (r *Registry) Check(inputs []string) error {
	for _, in := range inputs {
		l, err := r.For(in)
		if err != nil {
			return err
		}
		if err := l.Check(in); err != nil {
			return err
		}
	}
	return nil
}

// Check reports the first input that loading would refuse (missing path,
// malformed glob, malformed GitHub or gist reference) without loading
// anything, so a caller can fail before it creates an index.
func Check(inputs []string) error {
	return DefaultRegistry(Options{}).Check(inputs)
}

// IsRemote reports whether input names a remote source (a URL, github: or
// gist:) rather than local files.
func IsRemote(input string) bool {
	return strings.HasPrefix(input, "github:") || strings.HasPrefix(input, "gist:") ||
		strings.HasPrefix(input, "http://") || strings.HasPrefix(input, "https://")
}

// Files is the loader of local files, folders, globs and stdin ("-"). It
// remembers what it loaded, so that a file reached through two inputs is
// loaded once.
type Files struct {
	w *walker
}

// NewFiles returns the local files loader.
func NewFiles(opt Options) *Files {
	return &Files{w: newWalker(context.Background(), opt, nil, nil)}
}

// Name implements Loader.
func (f *Files) Name() string { return "files" }

// Match implements Loader: anything that is not a remote form.
func (f *Files) Match(input string) bool { return !IsRemote(input) }

// Check implements Loader.
func (f *Files) Check(input string) error {
	_, err := resolve(input)
	return err
}

// Load implements Loader; see Walk for what an input may be.
func (f *Files) Load(ctx context.Context, input string, r *Run) (Outcome, error) {
	p, err := resolve(input)
	if err != nil {
		return Outcome{}, err
	}
	if err := f.w.setup(); err != nil {
		return Outcome{}, err
	}
	f.w.ctx, f.w.fn = ctx, r.Emit
	f.w.skip = r.Skip
	if f.w.skip == nil {
		f.w.skip = func(Skip) {}
	}
	return Outcome{}, f.w.run(p)
}

// Owns implements Pruner: stored sources of type file.
func (f *Files) Owns(src doc.Source) bool { return src.Type == doc.TypeFile }

// Gone implements Pruner: the file no longer exists. A relative URI names
// a file under Options.Root (see URIPath).
func (f *Files) Gone(_ context.Context, src doc.Source) (bool, error) {
	if err := f.w.setRoot(); err != nil {
		return false, err
	}
	_, err := os.Stat(URIPath(f.w.root, src.URI))
	if errors.Is(err, os.ErrNotExist) {
		return true, nil
	}
	return false, nil
}

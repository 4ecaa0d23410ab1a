// Package tools is sagasu's one toolset: the typed operations (search with
// modes, query, get, list, index, delete, evaluate, refine, plan stage, read
// cache) that every face — the MCP server, the CLI, agents calling functions,
// the web page — runs unchanged. Each takes a context and an input struct and
// returns an output the face renders; the structs carry json and jsonschema
// tags, so the MCP server derives its schemas from them.
//
// A face adds only what is its own: the MCP server fits outputs to token
// budgets and signs cursors, the CLI parses flags and prints.
//
// Words keep one meaning across faces: "full" means whole chunks (search mode
// full, `sagasu query --full`); a hit's whole source is "wholeSource"; and
// sagasu_get returns the whole source or one whole section.
package tools

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"

	"github.com/sagasu-dev/sagasu/internal/agentcache"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/glob"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/loop"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// Tool names, as agents call them.
const (
	NameIndex        = "sagasu_index"
	NameQuery        = "sagasu_query"
	NameSearch       = "sagasu_search"
	NameGet          = "sagasu_get"
	NameList         = "sagasu_list"
	NameEvaluate     = "sagasu_evaluate"
	NameRefine       = "sagasu_refine_query"
	NameExecuteStage = "sagasu_plan_execute_stage"
	NameReadCache    = "sagasu_read_cache"
)

// Options configure a Toolset. Engine is required.
type Options struct {
	// Engine searches the index; its store is the one Index and Delete write.
	Engine *search.Engine
	// Cache records evaluations, refinements and stages, and is what
	// ReadCache reads; nil records nothing.
	Cache *agentcache.Cache
	// Index holds the defaults of Index runs (chunk sizes, excluded globs,
	// file size limit). Its Embedder defaults to the engine's.
	Index index.Options
	// Roots are the folders Index may read; empty means the working
	// directory.
	Roots []string
	// Logger receives logs; nil discards them.
	Logger *slog.Logger
}

// Toolset runs sagasu's tools over one index. It is safe for concurrent use.
// It holds no language model: the agents (built in internal/app) take its
// operations as their function-calling tools (Functions).
type Toolset struct {
	opt     Options
	engine  *search.Engine
	store   store.Store
	steps   *loop.Engine // records to the cache
	analyst *loop.Engine // Search's analysis: records nothing
	roots   *roots
	log     *slog.Logger
	// cursors page the ranked results models get (Functions).
	cursors *Cursors
	// fresh is the live state of the folders a watch follows.
	fresh *Freshness
	// openHook, when set (by tests), runs each file open of an index run
	// in place of calling it.
	openHook func(name string, open func() (*os.File, error)) (*os.File, error)
}

// New returns a Toolset.
func New(opt Options) (*Toolset, error) {
	if opt.Engine == nil {
		return nil, errors.New("tools: no search engine")
	}
	t := &Toolset{opt: opt, engine: opt.Engine, store: opt.Engine.Store(), log: opt.Logger, fresh: &Freshness{}}
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	if t.opt.Index.Embedder == nil {
		t.opt.Index.Embedder = opt.Engine.Embedder()
	}
	var err error
	if t.roots, err = newRoots(opt.Roots); err != nil {
		return nil, err
	}
	if t.cursors, err = NewCursors(nil, 0, nil); err != nil {
		return nil, err
	}
	t.steps = loop.New(opt.Engine, loop.Options{Cache: opt.Cache, Logger: t.log})
	t.analyst = loop.New(opt.Engine, loop.Options{Logger: t.log})
	return t, nil
}

// Engine returns the search engine the tools run on.
func (t *Toolset) Engine() *search.Engine { return t.engine }

// Store returns the index the tools read and write.
func (t *Toolset) Store() store.Store { return t.store }

// Roots returns the allowed roots, absolute with symbolic links resolved.
func (t *Toolset) Roots() []string { return slices.Clone(t.roots.dirs) }

// Cache returns the agent cache, nil when none is kept.
func (t *Toolset) Cache() *agentcache.Cache { return t.opt.Cache }

// Loop returns the loop engine that records its steps to the cache.
func (t *Toolset) Loop() *loop.Engine { return t.steps }

// Filter checks and builds a store filter from source types, a URI glob and
// source IDs.
func Filter(types []string, pathGlob string, ids []string) (store.Filter, error) {
	f := store.Filter{PathGlob: pathGlob, SourceIDs: ids}
	if pathGlob != "" {
		if err := glob.Valid(pathGlob); err != nil {
			return f, invalidf("glob: %v; give a pattern such as docs/**/*.md", err)
		}
	}
	for _, t := range types {
		switch doc.SourceType(t) {
		case doc.TypeFile, doc.TypeText, doc.TypeURL, doc.TypeGitHub, doc.TypeGist:
			f.Types = append(f.Types, doc.SourceType(t))
		default:
			return f, badArg("types", t, "file, text, url, github or gist")
		}
	}
	return f, nil
}

// retrieval reads an agent's retrieval mode ("" for the index's
// default), with a note when hybrid search was asked of an index without
// embeddings (keyword search is used instead).
func (t *Toolset) retrieval(mode string) (search.Mode, []string) {
	if search.Mode(mode) == search.ModeHybrid && t.engine.Embedder() == nil {
		return search.ModeKeyword, []string{"hybrid search needs an index with embeddings and this one has none: keyword search was used"}
	}
	return search.Mode(mode), nil
}

// ErrInvalidArgument marks an argument a tool cannot take (errors.Is): a
// face answers it as the caller's mistake.
var ErrInvalidArgument = errors.New("invalid argument")

// argError is an argument a tool cannot take, in the tool's own words
// (kind ErrInvalidArgument), or one that names what is not in the index
// (kind store.ErrNotFound).
type argError struct {
	msg   string
	kind  error
	cause error // the check's own error (llm.ArgError), when there is one
}

func (e *argError) Unwrap() error { return e.cause }

func (e *argError) Error() string { return e.msg }
func (e *argError) Is(target error) bool {
	if e.kind == nil {
		return target == ErrInvalidArgument
	}
	return target == e.kind
}

// invalidf is an argument a tool cannot take.
func invalidf(format string, a ...any) error { return &argError{msg: fmt.Sprintf(format, a...)} }

// missingf is an argument that names what is not in the index.
func missingf(format string, a ...any) error {
	return &argError{msg: fmt.Sprintf(format, a...), kind: store.ErrNotFound}
}

// badArg is the error of an argument a tool cannot take: it names the
// argument, what was given and what is allowed
// ("k: got 0; give a whole number from 1 to 50").
func badArg(name string, got any, allowed string) error {
	if s, ok := got.(string); ok {
		return invalidf("%s: got %q; give %s", name, s, allowed)
	}
	return invalidf("%s: got %v; give %s", name, got, allowed)
}

// HashOf hashes values as JSON: the identity of a request, of what a page
// follows, or of a plan that has no ID.
func HashOf(v ...any) string {
	raw, _ := json.Marshal(v)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:12])
}

func nonEmptyList(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

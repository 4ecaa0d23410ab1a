package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/agentcache"
	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/chunk"
	"github.com/sagasu-dev/sagasu/internal/embed"
	"github.com/sagasu-dev/sagasu/internal/ignore"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/source"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/postgres"
	"github.com/sagasu-dev/sagasu/internal/store/qdrant"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
	"github.com/sagasu-dev/sagasu/internal/telemetry"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// App holds a loaded configuration and the logger every part writes to.
type App struct {
	Config Config
	Log    *slog.Logger
	// Getenv reads the environment (API keys); tests pass their own.
	Getenv func(string) string
	// LongLived is set by faces that answer many queries (see StoreOptions).
	LongLived bool
	// Tracer, when set, traces every model call (see internal/telemetry).
	Tracer *telemetry.Tracer

	// madePins holds, by index (see indexKey), the digest of the pins this
	// process made, which it may use whether or not it could record them.
	madePins map[string]string
}

// New returns an App logging to stderr at the configured level, reading
// API keys from environ ("KEY=value" entries).
func New(cfg Config, stderr io.Writer, environ []string) *App {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	return &App{
		Config: cfg,
		Log:    slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})),
		Getenv: envLookup(environ),
	}
}

// OpenStore opens the configured index. With create, a missing index is
// created; without it, a missing index is an error telling the user to index.
func (a *App) OpenStore(ctx context.Context, create bool) (store.Store, error) {
	return a.OpenStoreAt(ctx, a.Config.DB, create)
}

// OpenStoreAt opens the index at location (as OpenStore does the
// configured one), with the API key a qdrant:// server takes.
func (a *App) OpenStoreAt(ctx context.Context, location string, create bool) (store.Store, error) {
	return OpenStoreWith(ctx, location, a.StoreOptions(create, false))
}

// StoreOptions returns the options the configured index is opened with
// (long-lived when longLived or the app is).
func (a *App) StoreOptions(create, longLived bool) StoreOptions {
	return StoreOptions{Create: create, LongLived: longLived || a.LongLived, ApproxVectors: a.Config.Search.ApproxVectors,
		KeywordCacheBytes: int64(a.Config.Search.KeywordCacheMB) << 20, QdrantKey: a.Getenv("QDRANT_API_KEY")}
}

// OpenStore opens the index at location: a postgres:// or postgresql://
// DSN for PostgreSQL with pgvector, a qdrant://host:port/prefix for a
// Qdrant server (API key from QDRANT_API_KEY), else a SQLite file path
// (sqlite:// optional).
func OpenStore(ctx context.Context, location string, create bool) (store.Store, error) {
	return OpenStoreWith(ctx, location, StoreOptions{Create: create})
}

// StoreOptions say how a store is opened.
type StoreOptions struct {
	Create bool // make a new index when there is none
	// LongLived marks a process that answers many queries (the MCP server,
	// the loop, benchmarks): stores may then keep in-memory copies, such as
	// SQLite's vector cache.
	LongLived bool
	// ApproxVectors is the number of vectors from which a long-lived
	// SQLite index searches an approximate graph (0: always exact).
	ApproxVectors int
	// KeywordCacheBytes bounds a long-lived process's keyword cache (0:
	// bm25.DefaultCacheBytes).
	KeywordCacheBytes int64
	// QdrantKey is the API key sent to a qdrant:// server.
	QdrantKey string
}

// OpenStoreWith opens the index at location with opt.
func OpenStoreWith(ctx context.Context, location string, opt StoreOptions) (store.Store, error) {
	if strings.HasPrefix(location, "postgres://") || strings.HasPrefix(location, "postgresql://") {
		return postgres.Open(ctx, location, postgres.Options{Create: opt.Create, Analyzer: analyze.New(analyze.Options{}), CacheKeyword: opt.LongLived, KeywordCacheBytes: opt.KeywordCacheBytes})
	}
	if strings.HasPrefix(location, "qdrant://") {
		return qdrant.Open(ctx, location, qdrant.Options{Create: opt.Create, Analyzer: analyze.New(analyze.Options{}), APIKey: opt.QdrantKey})
	}
	location = strings.TrimPrefix(location, "sqlite://")
	return sqlite.Open(ctx, location, sqlite.Options{Create: opt.Create, Analyzer: analyze.New(analyze.Options{}), CacheVectors: opt.LongLived, CacheKeyword: opt.LongLived,
		KeywordCacheBytes: opt.KeywordCacheBytes, ApproxVectors: opt.ApproxVectors})
}

// ChunkOptions returns the configured chunk sizes.
func (a *App) ChunkOptions() chunk.Options {
	return chunk.Options{MaxTokens: a.Config.Chunk.Size, Overlap: a.Config.Chunk.Overlap}
}

// IndexOptions returns the pipeline options for the configuration. GitHub
// credentials and API addresses come from GITHUB_TOKEN,
// SAGASU_GITHUB_API_URL and SAGASU_GITHUB_RAW_URL.
func (a *App) IndexOptions() index.Options {
	return index.Options{
		Chunk: a.ChunkOptions(),
		Source: source.Options{
			MaxFileSize:    a.Config.Index.MaxFileSize,
			Exclude:        a.Config.Index.Exclude,
			NoIgnore:       a.Config.Index.NoIgnore,
			GlobalExcludes: ignore.GlobalExcludesFile(a.Getenv),
			Logger:         a.Log,
			Remote: source.Remote{
				AllowPrivate: a.Config.Index.AllowPrivate,
				GitHubToken:  a.Getenv("GITHUB_TOKEN"),
				GitHubAPIURL: a.Getenv("SAGASU_GITHUB_API_URL"),
				GitHubRawURL: a.Getenv("SAGASU_GITHUB_RAW_URL"),
			},
		},
		Logger: a.Log,
	}
}

// Engine returns a search engine over s, with e (which may be nil) for
// semantic and hybrid search.
func (a *App) Engine(s store.Store, e embed.Embedder) *search.Engine {
	opts := []search.Option{search.WithFusion(search.Fusion{
		K: a.Config.Search.RRFK, KeywordWeight: a.Config.Search.KeywordWeight,
		SemanticWeight: a.Config.Search.SemanticWeight, Depth: search.DefaultFusion().Depth,
	})}
	if e != nil {
		opts = append(opts, search.WithEmbedder(e))
		if e.Info().Driver == "static" {
			// Measured on SciFact: BM25 alone scores nDCG@10 0.686, hybrid
			// with GloVe at best 0.633. Static word vectors help recall, not
			// the top ten, so keyword stays the default; --mode asks for more.
			opts = append(opts, search.WithDefaultMode(search.ModeKeyword))
		}
	}
	return search.New(s, opts...)
}

// OpenEngine opens the index and its embedder for searching.
func (a *App) OpenEngine(ctx context.Context) (*search.Engine, func(), error) {
	st, err := a.OpenStore(ctx, false)
	if err != nil {
		return nil, nil, err
	}
	e, err := a.Embedder(ctx, st, false)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return a.Engine(st, e), func() { st.Close() }, nil
}

// OpenOptions say how Open wires a runtime.
type OpenOptions struct {
	// Create makes a new index when there is none; without it a missing
	// index is an error telling the user to index.
	Create bool
	// LongLived marks a process that answers many queries (see
	// StoreOptions).
	LongLived bool
	// NoEmbedder skips the embedder, for work that never searches by
	// meaning (reading, listing, deleting sources): nothing is loaded.
	NoEmbedder bool
	// PinEmpty gives an empty index the configured embedder for good, as
	// `sagasu index --embedder` would (the MCP server, which indexes).
	PinEmpty bool
	// Pin gives an index without embeddings the configured embedder for
	// good even when it holds sources (`sagasu index --embedder`).
	Pin bool
	// NoCache keeps no agent cache: nothing is recorded.
	NoCache bool
	// CacheDir is the agent cache folder; empty means AgentCacheDir's
	// default.
	CacheDir string
	// CacheRetention is how many records of each kind the cache keeps;
	// 0 means agentcache.DefaultRetention.
	CacheRetention int
	// Roots are the folders the toolset may index; empty means the working
	// directory.
	Roots []string
}

// Runtime is everything a face needs, wired: the index, its embedder, the
// search engine, the agent cache and the toolset over them.
type Runtime struct {
	Store store.Store
	// Embedder is nil when the index has none (or with NoEmbedder).
	Embedder embed.Embedder
	Engine   *search.Engine
	// Cache is nil with NoCache.
	Cache *agentcache.Cache
	Tools *tools.Toolset
	// LLM is the configured chat model; nil when none is configured (the
	// agents then run offline).
	LLM llm.Model
	// Root is the index's root folder, which local file URIs are relative
	// to (see SourceRoot); the toolset's index runs use it.
	Root string

	// app is the configuration the runtime was wired from: the agents
	// read their MCP servers, models and folders from it.
	app *App
}

// Close releases the index.
func (r *Runtime) Close() error { return r.Store.Close() }

// Open opens the configured index with its embedder and agent cache and
// returns the runtime every face works with. Close it when done.
func (a *App) Open(ctx context.Context, opt OpenOptions) (*Runtime, error) {
	st, err := OpenStoreWith(ctx, a.Config.DB, a.StoreOptions(opt.Create, opt.LongLived))
	if err != nil {
		return nil, err
	}
	rt, err := a.wire(ctx, st, opt)
	if err != nil {
		st.Close()
		return nil, err
	}
	if opt.LongLived {
		ServingGC(a.Getenv)
	}
	return rt, nil
}

func (a *App) wire(ctx context.Context, st store.Store, opt OpenOptions) (*Runtime, error) {
	rt := &Runtime{Store: st, app: a}
	if !opt.NoEmbedder {
		pin := opt.Pin
		if !pin && opt.PinEmpty {
			stats, err := st.Stats(ctx)
			if err != nil {
				return nil, fmt.Errorf("read the index's statistics: %w", err)
			}
			pin = stats.Sources == 0
		}
		var err error
		if rt.Embedder, err = a.Embedder(ctx, st, pin); err != nil {
			return nil, err
		}
	}
	rt.Engine = a.Engine(st, rt.Embedder)
	// A runtime that may index pins the root as the first index would.
	root, err := a.SourceRoot(ctx, st, opt.Create || opt.PinEmpty || opt.Pin)
	if err != nil {
		return nil, err
	}
	rt.Root = root
	if !opt.NoCache {
		var err error
		if rt.Cache, err = a.OpenCache(opt.CacheDir, opt.CacheRetention); err != nil {
			return nil, err
		}
	}
	ixOpt := a.IndexOptions()
	ixOpt.Source.Root = root
	rt.Tools, err = tools.New(tools.Options{Engine: rt.Engine, Cache: rt.Cache, Index: ixOpt, Roots: opt.Roots, Logger: a.Log})
	if err != nil {
		return nil, err
	}
	if rt.LLM, err = a.LLM(); err != nil {
		return nil, err
	}
	return rt, nil
}

// AgentCacheDir is the agent cache folder: dir when set, else CacheDir.
func (a *App) AgentCacheDir(dir string) string {
	if dir != "" {
		return dir
	}
	return a.CacheDir()
}

// OpenCache opens the agent cache in dir (see AgentCacheDir), keeping
// retention records of each kind (0: the default).
func (a *App) OpenCache(dir string, retention int) (*agentcache.Cache, error) {
	if dir == "" {
		a.noteLocalCache()
	}
	return agentcache.Open(a.AgentCacheDir(dir), agentcache.Options{Logger: a.Log, Retention: retention})
}

// noteLocalCache says, the first time, that an index on a server keeps its
// agent cache, run memory and browser files on this machine, and where:
// the folder is the user's alone, and the user should know it is there.
func (a *App) noteLocalCache() {
	if !IsServerLocation(a.Config.DB) || a.Config.CacheDir != "" {
		return
	}
	dir := a.CacheDir()
	if _, err := os.Stat(dir); err == nil {
		return
	}
	abs, _ := filepath.Abs(dir)
	a.Log.Warn("the index is on a server, but the agent cache, the agents' memory and the browser's files stay on this machine, readable by you alone; set cache_dir (or --cache-dir) to choose the folder", "dir", abs)
}

// CacheDir is the agent cache folder: the cache_dir setting, else
// cache/agent beside a SQLite index, else .sagasu/cache/agent under the
// working directory for a server store, whose location (a DSN that may hold
// a password) never becomes a path.
func (a *App) CacheDir() string {
	if a.Config.CacheDir != "" {
		return a.Config.CacheDir
	}
	if IsServerLocation(a.Config.DB) {
		return filepath.Join(".sagasu", "cache", "agent")
	}
	db := strings.TrimPrefix(a.Config.DB, "sqlite://")
	return filepath.Join(filepath.Dir(db), "cache", "agent")
}

// IsServerLocation reports whether an index location names a database
// server (a DSN) rather than a file.
func IsServerLocation(location string) bool {
	for _, p := range []string{"postgres://", "postgresql://", "qdrant://"} {
		if strings.HasPrefix(location, p) {
			return true
		}
	}
	return false
}

// Redact returns an index location fit for logs and messages: every
// secret in it (a password, a key) is replaced by "***".
func Redact(location string) string { return store.Redact(location) }

// ServingGCPercent is the garbage collector's target in a long-lived
// process (see ServingGC).
const ServingGCPercent = 50

// ServingGC sets the garbage collector of a long-lived process, one that
// holds the keyword cache and answers many queries, to let the heap grow
// to 1.5 times what is live instead of twice. On the 100k-chunk SciFact
// bench a web server then holds about 45 MB (18%) less, with no cost per
// query that alternating runs could tell from noise. GOGC, when set,
// wins.
func ServingGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(ServingGCPercent)
	}
}

// Package app wires sagasu together: it loads configuration (sagasu.yaml,
// SAGASU_* environment, flags; flags win) and turns it into concrete stores,
// chunkers and engines. It is the only package that names drivers.
package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/v2"
	"github.com/spf13/pflag"

	"github.com/sagasu-dev/sagasu/internal/mcpclient"
	"github.com/sagasu-dev/sagasu/internal/search"
)

// Config is everything a user can set. Each setting is declared once, here:
// its key (koanf tag; SAGASU_KEY_PATH in the environment, dots as
// underscores) and, when a flag sets it, the flag's name (flag tag).
// Defaults gives the values; the rest is derived.
type Config struct {
	DB       string `koanf:"db" flag:"db" trust:"keeps your documents on that server, with QDRANT_API_KEY for qdrant://"` // index location: a SQLite file, a postgres:// DSN or a qdrant:// location
	JSON     bool   `koanf:"json" flag:"json"`                                                                            // machine-readable output
	LogLevel string `koanf:"log_level" flag:"log-level"`                                                                  // debug, info, warn, error
	// CacheDir is the agent cache folder. Empty: cache/agent beside a
	// SQLite index, or .sagasu/cache/agent for a server store (never a
	// path made from a DSN).
	CacheDir string `koanf:"cache_dir" flag:"cache-dir" trust:"writes agent records and memory to that folder"`

	Chunk struct {
		Size    int `koanf:"size" flag:"chunk-size"`       // max tokens per chunk
		Overlap int `koanf:"overlap" flag:"chunk-overlap"` // tokens repeated between pieces of a long section
	} `koanf:"chunk"`

	Index struct {
		MaxFileSize int64    `koanf:"max_file_size" flag:"max-file-size"` // bytes; larger files are skipped
		Exclude     []string `koanf:"exclude" flag:"exclude"`             // glob patterns to skip
		// NoIgnore reads what .gitignore, .ignore and .sagasuignore files
		// and the global git excludes leave out (they are followed by
		// default). A project's config may not turn it on: ignored files
		// often hold credentials and build secrets.
		NoIgnore bool `koanf:"no_ignore" flag:"no-ignore" trust:"indexes the files ignore files leave out, which may hold secrets"`
		// AllowPrivate lets URLs reach loopback, private and link-local
		// addresses (refused by default: a guard against SSRF).
		AllowPrivate bool `koanf:"allow_private" flag:"allow-private" trust:"lets fetched URLs reach this machine and private networks"`
	} `koanf:"index"`

	Search struct {
		K              int     `koanf:"k" flag:"k"`      // default number of results
		RRFK           float64 `koanf:"rrf_k"`           // reciprocal rank fusion constant
		KeywordWeight  float64 `koanf:"keyword_weight"`  // weight of the BM25 list in hybrid search
		SemanticWeight float64 `koanf:"semantic_weight"` // weight of the vector list in hybrid search
		// ApproxVectors is the number of vectors from which a long-lived
		// process (MCP server, loop) on a SQLite index answers vector
		// queries from an approximate HNSW graph instead of an exact scan; 0
		// keeps them exact.
		ApproxVectors int `koanf:"approx_vectors"`
		// KeywordCacheMB bounds the decoded keyword postings a long-lived
		// process keeps in memory (0: the default, bm25.DefaultCacheBytes).
		KeywordCacheMB int `koanf:"keyword_cache_mb"`
	} `koanf:"search"`

	Embedder EmbedderConfig `koanf:"embedder"`
	LLM      LLMConfig      `koanf:"llm"`
	Agent    AgentConfig    `koanf:"agent"`

	// Runs is the retention of agent runs and chat threads that `agent
	// prune` and `chat prune` apply when given no rule of their own.
	// Nothing is deleted without a prune.
	Runs RunsConfig `koanf:"runs"`

	// MCP configures `sagasu mcp`.
	MCP struct {
		// Tools are the groups of tools it offers: a comma-separated list
		// of search, loop, index, agents, runs, or default or all
		// (tools.SelectGroups).
		Tools string `koanf:"tools" flag:"tools"`
	} `koanf:"mcp"`

	// MCPServers are the MCP servers agents may use, by name.
	MCPServers map[string]mcpclient.ServerConfig `koanf:"mcp_servers" trust:"starts programs or connects to servers with the headers it names"`

	// Origin says which files were read and what an untrusted project
	// file was not allowed to set; it is not a setting.
	Origin ConfigOrigin `koanf:"-"`
}

// EmbedderConfig selects an embedding model. Keys are never configured
// here: they come from OPENAI_API_KEY, GEMINI_API_KEY or GOOGLE_API_KEY.
type EmbedderConfig struct {
	Driver string `koanf:"driver" json:"driver" flag:"embedder"`                                                                                                                    // one of EmbedderDrivers; "" for none
	Model  string `koanf:"model" json:"model,omitempty" flag:"embedder-model"`                                                                                                      // model name
	URL    string `koanf:"url" json:"url,omitempty" flag:"embedder-url" trust:"section:sends your documents, and your API key, to the address it names"`                            // base URL of an OpenAI-compatible server
	Path   string `koanf:"path" json:"path,omitempty" flag:"embedder-path" trust:"section:reads a model file outside the project, which may be any file or device on this machine"` // static model file or folder; local model folder
	Dim    int    `koanf:"dim" json:"dim,omitempty" flag:"embedder-dim"`                                                                                                            // output dimension, 0 for the model's own
	Int8   bool   `koanf:"int8" json:"int8,omitempty" flag:"embedder-int8"`                                                                                                         // local: int8 weights

	// QueryPrefix and DocumentPrefix go before each query and each document
	// before it is embedded. Nil means unset: the model's known prefixes
	// (embed.KnownPrefixes), or the ones the index was built with. A pin
	// always records both, "" included.
	QueryPrefix    *string `koanf:"query_prefix" json:"query_prefix,omitempty" flag:"embedder-query-prefix"`
	DocumentPrefix *string `koanf:"document_prefix" json:"document_prefix,omitempty" flag:"embedder-document-prefix"`

	// BatchSize is how many texts go in one request (0: the driver's
	// default). A small local CPU server needs small batches, or a request
	// queued behind others outlives its timeout. Not pinned.
	BatchSize int `koanf:"batch_size" json:"-" flag:"embedder-batch-size"`
}

// Defaults returns the built-in configuration.
func Defaults() Config {
	var c Config
	c.DB = ".sagasu/sagasu.db"
	c.LogLevel = "warn"
	c.Chunk.Size = 512
	c.Chunk.Overlap = 64
	c.Index.MaxFileSize = 10 << 20
	c.Search.K = 10
	c.Search.RRFK = search.DefaultFusion().K
	c.Search.KeywordWeight = 1
	c.Search.SemanticWeight = 1
	c.Search.ApproxVectors = 100_000
	return c
}

// DefaultConfigFile is read when it exists and --config is not given.
const DefaultConfigFile = "sagasu.yaml"

// FlagKeys maps command-line flag names to configuration keys (from the
// flag tags of Config); a flag only overrides the configuration when the
// user set it.
var FlagKeys = flagKeys(reflect.TypeFor[Config](), "")

// A struct field tagged flagprefix:"p-" names its fields' flags with p-
// in front (agent.planner.model is --planner-llm-model).
func flagKeys(t reflect.Type, prefix string) map[string]string {
	out := map[string]string{}
	for f := range t.Fields() {
		if f.Tag.Get("koanf") == "-" {
			continue
		}
		key := prefix + f.Tag.Get("koanf")
		if flag := f.Tag.Get("flag"); flag != "" {
			out[flag] = key
		}
		if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeFor[time.Duration]() {
			for k, v := range flagKeys(f.Type, key+".") {
				out[f.Tag.Get("flagprefix")+k] = v
			}
		}
	}
	return out
}

// Load builds the configuration: defaults, then the user-level config
// (UserConfigDir/config.yaml), then the project config (path, or
// sagasu.yaml in the working directory when path is "" and it exists),
// then SAGASU_* variables from environ, then the flags the user set. An
// implicit sagasu.yaml the user has not trusted (see trust.go) cannot set
// the privileged settings; Config.Origin says what was ignored.
func Load(path string, environ []string, flags *pflag.FlagSet) (Config, error) {
	k := koanf.New(".")
	def := Defaults()
	if err := k.Load(structProvider{def}, nil); err != nil {
		return def, err
	}
	getenv := envLookup(environ)
	var origin ConfigOrigin
	// serverDirs holds the folder of the file that named each MCP server:
	// the server starts there (see mcpclient.ServerConfig.Dir).
	serverDirs := map[string]string{}
	userDir := UserConfigDir(getenv)
	if userDir != "" {
		userFile := filepath.Join(userDir, UserConfigFile)
		m, err := readYAML(userFile, false)
		if err != nil {
			return def, err
		}
		if m != nil {
			if err := k.Load(mapProvider{m}, nil); err != nil {
				return def, fmt.Errorf("read config %q: %w", userFile, err)
			}
			origin.UserFile = userFile
			nameServers(serverDirs, m, userDir)
		}
	}
	origin.Explicit = path != ""
	if !origin.Explicit {
		path = DefaultConfigFile
	}
	raw, err := os.ReadFile(path)
	switch {
	case err == nil:
		m, err := parseYAML(path, raw)
		if err != nil {
			return def, err
		}
		origin.ProjectFile, origin.Trusted = path, origin.Explicit
		if !origin.Trusted {
			if origin.Trusted, origin.Changed, err = trustState(userDir, path, raw); err != nil {
				return def, err
			}
		}
		if !origin.Trusted {
			origin.Ignored = filterUntrusted(m)
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return def, fmt.Errorf("read config %q: %w", path, err)
		}
		nameServers(serverDirs, m, filepath.Dir(abs))
		if err := k.Load(mapProvider{m}, nil); err != nil {
			return def, fmt.Errorf("read config %q: %w", path, err)
		}
	case origin.Explicit || !errors.Is(err, fs.ErrNotExist):
		return def, fmt.Errorf("read config %q: %w", path, err)
	}
	known := k.Keys()
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, "SAGASU_") {
			continue
		}
		want := strings.ToLower(strings.TrimPrefix(name, "SAGASU_"))
		key := ""
		for _, kk := range known {
			if strings.ReplaceAll(kk, ".", "_") == want {
				key = kk
			}
		}
		if key == "" {
			// A variable may also be named after a flag: SAGASU_EMBEDDER for
			// --embedder, SAGASU_EMBEDDER_QUERY_PREFIX for a key with no default.
			key = FlagKeys[strings.ReplaceAll(want, "_", "-")]
		}
		if key == "" {
			continue // not a setting (e.g. SAGASU_TEST_POSTGRES)
		}
		var v any = val
		if key == "index.exclude" {
			v = strings.Split(val, ",")
		}
		if err := k.Set(key, v); err != nil {
			return def, fmt.Errorf("environment %s: %w", name, err)
		}
	}
	if flags != nil {
		var err error
		flags.Visit(func(f *pflag.Flag) {
			key, ok := FlagKeys[f.Name]
			if !ok || err != nil {
				return
			}
			var v any = f.Value.String()
			if sv, ok := f.Value.(pflag.SliceValue); ok {
				v = sv.GetSlice()
			}
			err = k.Set(key, v)
		})
		if err != nil {
			return def, err
		}
	}
	var c Config
	if err := k.UnmarshalWithConf("", &c, koanf.UnmarshalConf{Tag: "koanf", FlatPaths: false}); err != nil {
		return def, fmt.Errorf("configuration: %w", err)
	}
	c.Origin = origin
	for name, srv := range c.MCPServers {
		srv.Dir = serverDirs[name]
		c.MCPServers[name] = srv
	}
	return c, c.Validate()
}

// nameServers records dir as the folder of every MCP server the parsed
// config file m names; a later file overrides an earlier one.
func nameServers(dirs map[string]string, m map[string]any, dir string) {
	servers, _ := m["mcp_servers"].(map[string]any)
	for name := range servers {
		dirs[name] = dir
	}
}

// readYAML reads and parses a config file; a missing file gives nil unless
// required.
func readYAML(path string, required bool) (map[string]any, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		if !required && errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("read config %q: %w", path, err)
	}
	return parseYAML(path, raw)
}

// parseYAML parses a config file's bytes (an empty file is no settings).
func parseYAML(path string, raw []byte) (map[string]any, error) {
	m, err := yaml.Parser().Unmarshal(raw)
	if err != nil {
		return nil, fmt.Errorf("read config %q: %w: fix its YAML", path, err)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// envLookup reads "KEY=value" entries.
func envLookup(environ []string) func(string) string {
	env := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return func(k string) string { return env[k] }
}

// mapProvider feeds parsed YAML into koanf.
type mapProvider struct{ m map[string]any }

func (p mapProvider) ReadBytes() ([]byte, error) { return nil, errors.New("not supported") }

func (p mapProvider) Read() (map[string]any, error) { return p.m, nil }

// Validate checks values a user may have mistyped.
func (c Config) Validate() error {
	if c.DB == "" {
		return errors.New("db is empty: set --db to the index file, e.g. .sagasu/sagasu.db")
	}
	if c.Chunk.Size < 16 {
		return fmt.Errorf("chunk size %d is too small: use at least 16 tokens", c.Chunk.Size)
	}
	if c.Chunk.Overlap < 0 || c.Chunk.Overlap*2 >= c.Chunk.Size {
		return fmt.Errorf("chunk overlap %d must be between 0 and half the chunk size (%d)", c.Chunk.Overlap, c.Chunk.Size)
	}
	if c.Index.MaxFileSize <= 0 {
		return fmt.Errorf("max file size %d must be positive", c.Index.MaxFileSize)
	}
	if c.Embedder.Driver != "" && !slices.Contains(EmbedderDrivers, c.Embedder.Driver) {
		return fmt.Errorf("embedder %q: use openai (and OpenAI-compatible servers such as Ollama), gemini, static or local", c.Embedder.Driver)
	}
	if c.LLM.Driver != "" && !slices.Contains(LLMDrivers, c.LLM.Driver) {
		return fmt.Errorf("llm %q: use openai (and OpenAI-compatible servers such as llama.cpp, Ollama, vLLM), gemini or anthropic", c.LLM.Driver)
	}
	if c.Embedder.Driver == "static" && c.Embedder.Path == "" {
		return errors.New("the static embedder needs --embedder-path: a word-vector file (GloVe, word2vec, or one written by `sagasu model import`) or a Model2Vec folder")
	}
	if c.Embedder.Driver == "local" && c.Embedder.Path == "" && c.Embedder.Model == "" {
		return errors.New("the local embedder needs --embedder-model NAME (a model `sagasu model pull` or `sagasu model import` put in the model cache, e.g. all-MiniLM-L6-v2) or --embedder-path DIR (a sentence-transformers model folder)")
	}
	if c.Embedder.BatchSize < 0 {
		return fmt.Errorf("embedder batch size %d must not be negative", c.Embedder.BatchSize)
	}
	if c.Embedder.Dim < 0 {
		return fmt.Errorf("embedder dim %d must not be negative", c.Embedder.Dim)
	}
	if c.Search.RRFK <= 0 || c.Search.KeywordWeight < 0 || c.Search.SemanticWeight < 0 {
		return errors.New("search: rrf_k must be positive and the weights not negative")
	}
	if c.Search.ApproxVectors < 0 {
		return fmt.Errorf("search.approx_vectors is %d: set a number of vectors, or 0 to keep vector search exact", c.Search.ApproxVectors)
	}
	if err := c.Runs.validate(); err != nil {
		return err
	}
	if err := c.Agent.validate(); err != nil {
		return err
	}
	if c.Search.KeywordCacheMB < 0 {
		return fmt.Errorf("search.keyword_cache_mb is %d: set a size in MB, or 0 for the default", c.Search.KeywordCacheMB)
	}
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, c.LogLevel) {
		return fmt.Errorf("log level %q: use debug, info, warn or error", c.LogLevel)
	}
	return nil
}

// structProvider feeds defaults into koanf without a round trip through a
// file: every key of Config, read from its koanf tags, with its value (nil
// pointers and nil maps stay unset but known, so the environment can set
// them).
type structProvider struct{ c Config }

func (p structProvider) ReadBytes() ([]byte, error) { return nil, errors.New("not supported") }

func (p structProvider) Read() (map[string]any, error) {
	return structMap(reflect.ValueOf(p.c)), nil
}

func structMap(v reflect.Value) map[string]any {
	out := map[string]any{}
	for i := range v.NumField() {
		f := v.Type().Field(i)
		key := f.Tag.Get("koanf")
		if key == "" || key == "-" {
			continue
		}
		fv := v.Field(i)
		switch {
		case fv.Kind() == reflect.Struct:
			out[key] = structMap(fv)
		case fv.Kind() == reflect.Pointer && fv.IsNil(), fv.Kind() == reflect.Map && fv.IsNil():
			out[key] = nil
		case fv.Kind() == reflect.Pointer:
			out[key] = fv.Elem().Interface()
		default:
			out[key] = fv.Interface()
		}
	}
	return out
}

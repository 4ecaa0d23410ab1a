// Package app wires sagasu together: it loads configuration (sagasu.yaml,
// SAGASU_* environment, flags; flags win) and turns it into concrete stores,
// chunkers and engines. It is the only package that names drivers.
package app

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"
	"github.com/spf13/pflag"
)

// Config is everything a user can set.
type Config struct {
	DB       string `koanf:"db"`        // index location: a SQLite file path
	JSON     bool   `koanf:"json"`      // machine-readable output
	LogLevel string `koanf:"log_level"` // debug, info, warn, error

	Chunk struct {
		Size    int `koanf:"size"`    // max tokens per chunk
		Overlap int `koanf:"overlap"` // tokens repeated between pieces of a long section
	} `koanf:"chunk"`

	Index struct {
		MaxFileSize int64    `koanf:"max_file_size"` // bytes; larger files are skipped
		Exclude     []string `koanf:"exclude"`       // glob patterns to skip
	} `koanf:"index"`

	Search struct {
		K              int     `koanf:"k"`               // default number of results
		RRFK           float64 `koanf:"rrf_k"`           // reciprocal rank fusion constant
		KeywordWeight  float64 `koanf:"keyword_weight"`  // weight of the BM25 list in hybrid search
		SemanticWeight float64 `koanf:"semantic_weight"` // weight of the vector list in hybrid search
	} `koanf:"search"`

	Embedder EmbedderConfig `koanf:"embedder"`
}

// EmbedderConfig selects an embedding model. Keys are never configured
// here: they come from OPENAI_API_KEY, GEMINI_API_KEY or GOOGLE_API_KEY.
type EmbedderConfig struct {
	Driver string `koanf:"driver" json:"driver"`         // openai, gemini, static; "" for none
	Model  string `koanf:"model" json:"model,omitempty"` // model name
	URL    string `koanf:"url" json:"url,omitempty"`     // base URL of an OpenAI-compatible server
	Path   string `koanf:"path" json:"path,omitempty"`   // static model file or folder
	Dim    int    `koanf:"dim" json:"dim,omitempty"`     // output dimension, 0 for the model's own

	// QueryPrefix and DocumentPrefix go before each query and each document
	// before it is embedded. Nil means unset: the model's known prefixes
	// (embed.KnownPrefixes), or the ones the index was built with. A pin
	// always records both, "" included.
	QueryPrefix    *string `koanf:"query_prefix" json:"query_prefix,omitempty"`
	DocumentPrefix *string `koanf:"document_prefix" json:"document_prefix,omitempty"`

	// BatchSize is how many texts go in one request (0: the driver's
	// default). A small local CPU server needs small batches, or a request
	// queued behind others outlives its timeout. Not pinned.
	BatchSize int `koanf:"batch_size" json:"-"`
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
	c.Search.RRFK = 60
	c.Search.KeywordWeight = 1
	c.Search.SemanticWeight = 1
	return c
}

// DefaultConfigFile is read when it exists and --config is not given.
const DefaultConfigFile = "sagasu.yaml"

// FlagKeys maps command-line flag names to configuration keys; a flag only
// overrides the configuration when the user set it.
var FlagKeys = map[string]string{
	"db":             "db",
	"json":           "json",
	"log-level":      "log_level",
	"chunk-size":     "chunk.size",
	"chunk-overlap":  "chunk.overlap",
	"max-file-size":  "index.max_file_size",
	"exclude":        "index.exclude",
	"k":              "search.k",
	"embedder":       "embedder.driver",
	"embedder-model": "embedder.model",
	"embedder-url":   "embedder.url",
	"embedder-path":  "embedder.path",
	"embedder-dim":   "embedder.dim",

	"embedder-query-prefix":    "embedder.query_prefix",
	"embedder-document-prefix": "embedder.document_prefix",
}

// Load builds the configuration: defaults, then the config file (path, or
// sagasu.yaml when path is "" and it exists), then SAGASU_* variables from
// environ, then the flags the user set.
func Load(path string, environ []string, flags *pflag.FlagSet) (Config, error) {
	k := koanf.New(".")
	def := Defaults()
	if err := k.Load(structProvider{def}, nil); err != nil {
		return def, err
	}
	explicit := path != ""
	if !explicit {
		path = DefaultConfigFile
	}
	if err := k.Load(file.Provider(path), yaml.Parser()); err != nil {
		if explicit || !errors.Is(err, fs.ErrNotExist) {
			return def, fmt.Errorf("read config %q: %w", path, err)
		}
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
	return c, c.Validate()
}

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
	if !slices.Contains([]string{"", "openai", "gemini", "static"}, c.Embedder.Driver) {
		return fmt.Errorf("embedder %q: use openai (and OpenAI-compatible servers such as Ollama), gemini or static", c.Embedder.Driver)
	}
	if c.Embedder.Driver == "static" && c.Embedder.Path == "" {
		return errors.New("the static embedder needs --embedder-path: a word-vector file (GloVe, word2vec, or one written by `sagasu model import`) or a Model2Vec folder")
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
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, c.LogLevel) {
		return fmt.Errorf("log level %q: use debug, info, warn or error", c.LogLevel)
	}
	return nil
}

// structProvider feeds defaults into koanf without a round trip through a file.
type structProvider struct{ c Config }

func (p structProvider) ReadBytes() ([]byte, error) { return nil, errors.New("not supported") }

func (p structProvider) Read() (map[string]any, error) {
	c := p.c
	return map[string]any{
		"db":        c.DB,
		"json":      c.JSON,
		"log_level": c.LogLevel,
		"chunk":     map[string]any{"size": c.Chunk.Size, "overlap": c.Chunk.Overlap},
		"index":     map[string]any{"max_file_size": c.Index.MaxFileSize, "exclude": c.Index.Exclude},
		"search": map[string]any{"k": c.Search.K, "rrf_k": c.Search.RRFK,
			"keyword_weight": c.Search.KeywordWeight, "semantic_weight": c.Search.SemanticWeight},
		"embedder": map[string]any{"driver": c.Embedder.Driver, "model": c.Embedder.Model,
			"url": c.Embedder.URL, "path": c.Embedder.Path, "dim": c.Embedder.Dim,
			"batch_size": c.Embedder.BatchSize},
	}, nil
}

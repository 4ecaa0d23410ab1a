package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func flags(args ...string) *pflag.FlagSet {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.String("db", "", "")
	fs.IntP("k", "k", 10, "")
	fs.Int("chunk-size", 0, "")
	fs.StringSlice("exclude", nil, "")
	fs.String("embedder", "", "")
	fs.Parse(args)
	return fs
}

func TestLoadPrecedence(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "s.yaml")
	os.WriteFile(cfgFile, []byte("db: file.db\nsearch:\n  k: 3\nchunk:\n  size: 300\nindex:\n  exclude: [\"*.lock\"]\n"), 0o644)

	c, err := Load(cfgFile, nil, flags())
	if err != nil {
		t.Fatal(err)
	}
	if c.DB != "file.db" || c.Search.K != 3 || c.Chunk.Size != 300 || c.Chunk.Overlap != 64 || len(c.Index.Exclude) != 1 {
		t.Errorf("file values: %+v", c)
	}
	c, _ = Load(cfgFile, []string{"SAGASU_DB=env.db", "SAGASU_SEARCH_K=4", "SAGASU_INDEX_EXCLUDE=a,b", "SAGASU_TEST_POSTGRES=x", "PATH=/bin"}, flags())
	if c.DB != "env.db" || c.Search.K != 4 || strings.Join(c.Index.Exclude, "|") != "a|b" {
		t.Errorf("environment did not override the file: %+v", c)
	}
	c, _ = Load(cfgFile, []string{"SAGASU_DB=env.db"}, flags("--db", "flag.db", "-k", "7", "--exclude", "x", "--exclude", "y"))
	if c.DB != "flag.db" || c.Search.K != 7 || strings.Join(c.Index.Exclude, "|") != "x|y" {
		t.Errorf("flags did not win: %+v", c)
	}
	// Flags the user did not set do not override: -k default 10 is not applied over the file's 3.
	c, _ = Load(cfgFile, nil, flags("--db", "flag.db"))
	if c.Search.K != 3 {
		t.Errorf("an unset flag's default overrode the file: k = %d", c.Search.K)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(filepath.Join(dir, "missing.yaml"), nil, nil); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("explicit missing config: %v", err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("chunk: [unclosed"), 0o644)
	if _, err := Load(bad, nil, nil); err == nil || !strings.Contains(err.Error(), "bad.yaml") {
		t.Errorf("malformed config: %v", err)
	}
	for env, want := range map[string]string{
		"SAGASU_CHUNK_SIZE=8":       "chunk size",
		"SAGASU_CHUNK_OVERLAP=400":  "overlap",
		"SAGASU_LOG_LEVEL=loud":     "log level",
		"SAGASU_EMBEDDER_DRIVER=hf": "embedder",
	} {
		if _, err := Load("", []string{env}, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error about %s", env, err, want)
		}
	}
	if _, err := Load("", nil, flags("--embedder", "static")); err == nil || !strings.Contains(err.Error(), "--embedder-path") {
		t.Errorf("static without a path: %v", err)
	}
}

func TestEmbedderPinning(t *testing.T) {
	ctx := context.Background()
	model := filepath.Join("..", "embed", "static", "testdata", "glove-subset.bin")
	if _, err := os.Stat(model); err != nil {
		t.Fatal(err)
	}
	st, err := OpenStore(ctx, filepath.Join(t.TempDir(), "p.db"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	// One user (one HOME) pins the index with a flag, then searches without it.
	home := t.TempDir()
	none := &App{Config: Defaults(), Getenv: func(k string) string { return map[string]string{"HOME": home}[k] }}
	if e, err := none.Embedder(ctx, st, false); e != nil || err != nil {
		t.Errorf("no embedder configured or pinned: %v, %v", e, err)
	}

	withStatic := &App{Config: Defaults(), Getenv: none.Getenv}
	withStatic.Config.Embedder = EmbedderConfig{Driver: "static", Path: model}
	if _, err := withStatic.Embedder(ctx, st, false); err == nil || !strings.Contains(err.Error(), "no embeddings") {
		t.Errorf("query with an embedder on an unpinned index: %v", err)
	}
	e, err := withStatic.Embedder(ctx, st, true)
	if err != nil || e == nil {
		t.Fatalf("pin: %v", err)
	}
	pin, err := Pinned(ctx, st)
	if err != nil || pin.Driver != "static" || pin.Model != "glove-subset" || pin.Dim != 100 || !filepath.IsAbs(pin.Path) {
		t.Errorf("pinned = %+v, %v", pin, err)
	}
	// Without flags, queries use the pinned embedder.
	if e, err := none.Embedder(ctx, st, false); err != nil || e == nil || e.Info().Model != "glove-subset" {
		t.Errorf("pinned embedder not used: %v, %v", e, err)
	}
	// A different embedder is refused with the way out.
	other := &App{Config: Defaults(), Getenv: func(k string) string { return map[string]string{"OPENAI_API_KEY": "sk-test"}[k] }}
	other.Config.Embedder = EmbedderConfig{Driver: "openai", Model: "text-embedding-3-small"}
	_, err = other.Embedder(ctx, st, true)
	if err == nil || !strings.Contains(err.Error(), "sagasu reindex") || !strings.Contains(err.Error(), "static/glove-subset") {
		t.Errorf("mismatched embedder: %v", err)
	}
	if strings.Contains(err.Error(), "sk-test") {
		t.Errorf("error leaks the API key: %v", err)
	}
	// Static models stay keyword-first: measured hybrid with GloVe is worse on SciFact.
	if m := withStatic.Engine(st, e).DefaultMode(); m != "keyword" {
		t.Errorf("default mode with a static embedder = %q, want keyword", m)
	}
}

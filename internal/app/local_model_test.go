package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/embed/embedtest"
)

// TestLocalEmbedder: the in-process model (the real all-MiniLM-L6-v2) is
// found by name in the model folder, pinned under its name, used by later
// runs without flags, makes hybrid the default mode, and an int8 request
// against a float pin is refused with the way out.
func TestLocalEmbedder(t *testing.T) {
	folder := embedtest.LocalModel(t)
	ctx := context.Background()
	models := t.TempDir()
	env := map[string]string{"SAGASU_MODELS_DIR": models}
	getenv := func(k string) string { return env[k] }

	// Not in the model folder yet: the error says how to get it.
	a := &App{Config: Defaults(), Getenv: getenv}
	a.Config.Embedder = EmbedderConfig{Driver: "local", Model: "all-MiniLM-L6-v2"}
	st, err := OpenStore(ctx, filepath.Join(t.TempDir(), "l.db"), true)
	require.NoError(t, err)
	defer st.Close()
	_, err = a.Embedder(ctx, st, true)
	require.ErrorContains(t, err, "sagasu model pull all-MiniLM-L6-v2")

	path, err := ImportModel(folder, "all-MiniLM-L6-v2", getenv)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(models, "all-MiniLM-L6-v2"), path)
	_, list, err := ListModels(getenv)
	require.NoError(t, err)
	assert.Equal(t, ModelInfo{Name: "all-MiniLM-L6-v2", Known: true, Installed: true, About: list[0].About, Path: path}, list[0])

	e, err := a.Embedder(ctx, st, true)
	require.NoError(t, err)
	assert.Equal(t, "local", e.Info().Driver)
	assert.Equal(t, 384, e.Info().Dim)
	pin, err := Pinned(ctx, st)
	require.NoError(t, err)
	assert.Equal(t, "all-MiniLM-L6-v2", pin.Model)
	assert.Empty(t, pin.Path, "a model from the model folder is pinned by name")
	assert.Equal(t, "hybrid", string(a.Engine(st, e).DefaultMode()), "an index with a neural model searches hybrid by default")

	// Later runs without flags use the pin; a query embeds.
	none := &App{Config: Defaults(), Getenv: getenv}
	e2, err := none.Embedder(ctx, st, false)
	require.NoError(t, err)
	v, err := e2.EmbedQuery(ctx, "how do pages get their URLs")
	require.NoError(t, err)
	assert.Len(t, v, 384)

	// The folder given by path, under the same name, is the same model.
	byPath := &App{Config: Defaults(), Getenv: getenv}
	byPath.Config.Embedder = EmbedderConfig{Driver: "local", Path: path}
	_, err = byPath.Embedder(ctx, st, false)
	require.NoError(t, err)

	// int8 weights are another model.
	q := &App{Config: Defaults(), Getenv: getenv}
	q.Config.Embedder = EmbedderConfig{Driver: "local", Model: "all-MiniLM-L6-v2", Int8: true}
	_, err = q.Embedder(ctx, st, true)
	require.ErrorContains(t, err, "local/all-MiniLM-L6-v2+int8")
	require.ErrorContains(t, err, "sagasu reindex")

	// An int8 index keeps int8 when later runs give no flags.
	st2, err := OpenStore(ctx, filepath.Join(t.TempDir(), "q.db"), true)
	require.NoError(t, err)
	defer st2.Close()
	eq, err := q.Embedder(ctx, st2, true)
	require.NoError(t, err)
	assert.Equal(t, "all-MiniLM-L6-v2+int8", eq.Info().Model)
	eq2, err := none.Embedder(ctx, st2, false)
	require.NoError(t, err)
	assert.Equal(t, "all-MiniLM-L6-v2+int8", eq2.Info().Model)
}

func TestLocalEmbedderConfig(t *testing.T) {
	_, err := Load("", nil, flags("--embedder", "local"))
	require.ErrorContains(t, err, "--embedder-model NAME")
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.String("embedder", "", "")
	fs.String("embedder-path", "", "")
	fs.Bool("embedder-int8", false, "")
	require.NoError(t, fs.Parse([]string{"--embedder", "local", "--embedder-path", "/m/x", "--embedder-int8"}))
	c, err := Load("", nil, fs)
	require.NoError(t, err)
	assert.True(t, c.Embedder.Int8)

	_, err = ImportModel(t.TempDir(), "x", func(string) string { return t.TempDir() })
	assert.ErrorContains(t, err, "config.json")
	_, err = PullModel(context.Background(), "gpt-4", func(string) string { return "" }, nil)
	assert.ErrorContains(t, err, "all-MiniLM-L6-v2, multilingual-e5-small")
	assert.False(t, IsModelFolder(filepath.Join(t.TempDir(), "none")))
	f := filepath.Join(t.TempDir(), "vectors.txt")
	require.NoError(t, os.WriteFile(f, []byte("a 1 2\n"), 0o644))
	assert.False(t, IsModelFolder(f))
	assert.True(t, strings.Contains(strings.Join(EmbedderDrivers, ","), "local"))
}

// TestLocalEmbedderPrefixes: a local model gets the query and passage
// prefixes its name calls for (here an E5-style name), pinned with it, and
// a query is embedded with the prefix in front.
func TestLocalEmbedderPrefixes(t *testing.T) {
	folder := embedtest.LocalModel(t)
	ctx := context.Background()
	env := map[string]string{"SAGASU_MODELS_DIR": t.TempDir()}
	getenv := func(k string) string { return env[k] }
	path, err := ImportModel(folder, "my-e5-copy", getenv)
	require.NoError(t, err)

	a := &App{Config: Defaults(), Getenv: getenv}
	a.Config.Embedder = EmbedderConfig{Driver: "local", Model: "my-e5-copy"}
	st, err := OpenStore(ctx, filepath.Join(t.TempDir(), "p.db"), true)
	require.NoError(t, err)
	defer st.Close()
	e, err := a.Embedder(ctx, st, true)
	require.NoError(t, err)
	pin, err := Pinned(ctx, st)
	require.NoError(t, err)
	require.NotNil(t, pin.QueryPrefix)
	require.NotNil(t, pin.DocumentPrefix)
	assert.Equal(t, "query: ", *pin.QueryPrefix)
	assert.Equal(t, "passage: ", *pin.DocumentPrefix)

	bare, err := BuildEmbedder(ctx, EmbedderConfig{Driver: "local", Path: path, QueryPrefix: new(string), DocumentPrefix: new(string)}, getenv)
	require.NoError(t, err)
	got, err := e.EmbedQuery(ctx, "how do pages get their URLs")
	require.NoError(t, err)
	want, err := bare.EmbedQuery(ctx, "query: how do pages get their URLs")
	require.NoError(t, err)
	assert.Equal(t, want, got)
	plain, err := bare.EmbedQuery(ctx, "how do pages get their URLs")
	require.NoError(t, err)
	assert.NotEqual(t, plain, got)
}

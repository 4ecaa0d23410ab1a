package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/embed/embedtest"
)

// TestLocalModelCommands: a sentence-transformers folder imported with
// `sagasu model import DIR NAME` indexes and answers queries in process,
// hybrid by default, with `--embedder local --embedder-model NAME`; the
// pin makes later queries need no flags.
func TestLocalModelCommands(t *testing.T) {
	folder := embedtest.LocalModel(t)
	dir := t.TempDir()
	env := []string{"SAGASU_MODELS_DIR=" + filepath.Join(dir, "models")}
	run := func(args ...string) string {
		t.Helper()
		code, out, errs := sagasuEnv(t, dir, env, args...)
		require.Equal(t, 0, code, "sagasu %s\nstdout: %s\nstderr: %s", strings.Join(args, " "), out, errs)
		return out
	}

	out := run("model", "import", folder, "minilm")
	assert.Equal(t, filepath.Join(dir, "models", "minilm")+"\n", out)
	out = run("model", "list")
	assert.Contains(t, out, "all-MiniLM-L6-v2         imported as minilm", "the files are the known model's")
	assert.NotRegexp(t, `(?m)^minilm\s`, out, "listed once, as the model it is")
	assert.Contains(t, out, "multilingual-e5-small    not pulled")
	assert.Contains(t, out, "recommended for Japanese and other non-English documents")

	write(t, filepath.Join(dir, "docs", "cats.md"), "# Cats\n\nA kitten is a young cat that sleeps most of the day.\n")
	write(t, filepath.Join(dir, "docs", "tax.md"), "# Taxes\n\nThe quarterly revenue report lists the tax owed to the state.\n")
	run("index", "docs", "--embedder", "local", "--embedder-model", "minilm")
	out = run("query", "--json", "where does a little feline nap")
	var res struct {
		Mode    string `json:"mode"`
		Results []struct {
			Source struct {
				URI string `json:"uri"`
			} `json:"source"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	assert.Equal(t, "hybrid", res.Mode)
	require.NotEmpty(t, res.Results)
	assert.Equal(t, "docs/cats.md", res.Results[0].Source.URI, "the meaning finds the page no word of the query is on")
	out = run("query", "--json", "--mode", "semantic", "money owed to the government")
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	assert.Equal(t, "docs/tax.md", res.Results[0].Source.URI)
	out = run("info")
	assert.Contains(t, out, "local, model minilm, 384 dimensions")
}

// TestModelImportNamesByFiles: a model folder imported without a name is
// named by what its files are (all-MiniLM-L6-v2 here, from a folder called
// "model"), and `model list` shows it as there.
func TestModelImportNamesByFiles(t *testing.T) {
	folder := embedtest.LocalModel(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "model")
	require.NoError(t, os.Symlink(folder, src))
	env := []string{"SAGASU_MODELS_DIR=" + filepath.Join(dir, "models")}
	code, out, errs := sagasuEnv(t, dir, env, "model", "import", src+"/")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, filepath.Join(dir, "models", "all-MiniLM-L6-v2")+"\n", out)
	_, out, _ = sagasuEnv(t, dir, env, "model", "list")
	assert.Contains(t, out, "all-MiniLM-L6-v2         installed")
}

// TestKnownNameOnOtherFilesFailsBeforeLoading: a folder that is not the
// known model its name says is refused by the sizes of its files, before
// its weights are read (here they could not be: they are not weights).
func TestKnownNameOnOtherFilesFailsBeforeLoading(t *testing.T) {
	dir := t.TempDir()
	models := filepath.Join(dir, "models")
	env := []string{"SAGASU_MODELS_DIR=" + models}
	fake := filepath.Join(models, "multilingual-e5-small")
	write(t, filepath.Join(fake, "config.json"), `{"hidden_size": 384}`)
	write(t, filepath.Join(fake, "tokenizer.json"), `{}`)
	write(t, filepath.Join(fake, "model.safetensors"), "not weights")
	write(t, filepath.Join(dir, "docs", "a.md"), "# A\n\ntext\n")
	code, _, errs := sagasuEnv(t, dir, env, "index", "docs", "--embedder", "local", "--embedder-model", "multilingual-e5-small")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "is not the model multilingual-e5-small: its config.json is 20 bytes, multilingual-e5-small's is 655")
	assert.Contains(t, errs, "sagasu model pull multilingual-e5-small")
}

func TestModelCommandErrors(t *testing.T) {
	dir := t.TempDir()
	env := []string{"SAGASU_MODELS_DIR=" + filepath.Join(dir, "models")}
	write(t, filepath.Join(dir, "vectors.txt"), "cat 0.1 0.2\ndog 0.2 0.1\n")
	code, _, errs := sagasuEnv(t, dir, env, "model", "import", "vectors.txt")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "a word-vector file needs DST")
	code, out, _ := sagasuEnv(t, dir, env, "model", "import", "vectors.txt", "v.bin")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "wrote v.bin")

	require.NoError(t, os.MkdirAll(filepath.Join(dir, "notamodel"), 0o755))
	code, _, errs = sagasuEnv(t, dir, env, "model", "import", "notamodel")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "config.json")

	code, _, errs = sagasuEnv(t, dir, env, "model", "pull", "gpt-4")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, `no known model "gpt-4"`)

	code, _, errs = sagasuEnv(t, dir, env, "index", ".", "--embedder", "local", "--embedder-model", "multilingual-e5-small")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "sagasu model pull multilingual-e5-small")
}

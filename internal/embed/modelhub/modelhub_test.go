package modelhub

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/embed/embedtest"
)

// hub serves folder the way the Hugging Face hub serves a repository at a
// revision, over TLS on loopback: a file over 1 MB (an LFS file) as a
// redirect that carries its SHA-256 in X-Linked-Etag to a "CDN" path that
// serves the bytes, a smaller one directly with its git blob SHA-1 as its
// ETag. tamper may change a file's bytes (after the hashes are published);
// publish, when set, replaces the published hash of a file.
func hub(t *testing.T, m Model, folder string, tamper func(path string, data []byte) []byte, publish ...func(path, hash string) string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	prefix := "/" + m.Repo + "/resolve/" + m.Revision + "/"
	var requests atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		cdn := strings.HasPrefix(r.URL.Path, "/cdn/")
		rel, ok := strings.CutPrefix(r.URL.Path, prefix)
		if cdn {
			rel, ok = strings.CutPrefix(r.URL.Path, "/cdn/")
		}
		if !ok {
			http.NotFound(w, r)
			return
		}
		data, err := os.ReadFile(filepath.Join(folder, filepath.FromSlash(rel)))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		lfs := len(data) > 1<<20
		if !cdn {
			var hash string
			if lfs {
				sum := sha256.Sum256(data)
				hash = hex.EncodeToString(sum[:])
			} else {
				h := sha1.New()
				fmt.Fprintf(h, "blob %d\x00", len(data))
				h.Write(data)
				hash = hex.EncodeToString(h.Sum(nil))
			}
			for _, p := range publish {
				hash = p(rel, hash)
			}
			if lfs {
				w.Header().Set("X-Linked-Etag", `"`+hash+`"`)
				w.Header().Set("Location", "/cdn/"+rel)
				w.WriteHeader(http.StatusFound)
				return
			}
			w.Header().Set("ETag", `"`+hash+`"`)
		}
		if tamper != nil {
			data = tamper(rel, data)
		}
		w.Write(data)
	}))
	t.Cleanup(srv.Close)
	return srv, &requests
}

func minilm(t *testing.T) Model {
	m, ok := Lookup("All-MiniLM-L6-v2")
	require.True(t, ok)
	return m
}

// TestPull: all-MiniLM-L6-v2 pulled from a loopback hub serving the real
// folder arrives complete and verified; a second pull downloads nothing.
func TestPull(t *testing.T) {
	folder := embedtest.LocalModel(t)
	m := minilm(t)
	srv, requests := hub(t, m, folder, nil)
	dir := t.TempDir()
	var progress strings.Builder
	got, err := Pull(context.Background(), m, dir, PullOptions{Endpoint: srv.URL, Client: srv.Client(), Progress: &progress})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "all-MiniLM-L6-v2"), got)
	require.NoError(t, Verify(got, m))
	assert.Contains(t, progress.String(), "[10/10] model.safetensors (90.9 MB)")
	assert.EqualValues(t, len(m.Files)+1, requests.Load(), "one request a file, and the redirect of model.safetensors")
	names, err := Installed(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"all-MiniLM-L6-v2"}, names, "no temporary folder is left")

	_, err = Pull(context.Background(), m, dir, PullOptions{Endpoint: srv.URL, Client: srv.Client()})
	require.NoError(t, err)
	assert.EqualValues(t, len(m.Files)+1, requests.Load(), "a verified folder is not fetched again")
}

// TestPullRefusesBadFiles: a changed byte, a short file or a missing file
// fails the pull, names the file, and leaves no model folder.
func TestPullRefusesBadFiles(t *testing.T) {
	folder := embedtest.LocalModel(t)
	m := minilm(t)
	cases := []struct {
		name   string
		tamper func(string, []byte) []byte
		want   string
	}{
		{"changed byte", func(p string, b []byte) []byte {
			if p == "model.safetensors" {
				b = append([]byte(nil), b...)
				b[len(b)/2] ^= 1
			}
			return b
		}, "model.safetensors: SHA-256"},
		{"short", func(p string, b []byte) []byte {
			if p == "tokenizer.json" {
				return b[:len(b)-1]
			}
			return b
		}, "tokenizer.json: got 466246 bytes, want 466247"},
		{"long", func(p string, b []byte) []byte {
			if p == "config.json" {
				return append(append([]byte(nil), b...), ' ')
			}
			return b
		}, "config.json: got 613 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, _ := hub(t, m, folder, c.tamper)
			dir := t.TempDir()
			_, err := Pull(context.Background(), m, dir, PullOptions{Endpoint: srv.URL, Client: srv.Client()})
			require.ErrorContains(t, err, c.want)
			entries, _ := os.ReadDir(dir)
			assert.Empty(t, entries, "nothing is left behind")
		})
	}

	missing := m
	missing.Files = append(append([]File(nil), m.Files...), File{Path: "absent.json", Size: 1, SHA256: strings.Repeat("0", 64)})
	srv, _ := hub(t, m, folder, nil)
	_, err := Pull(context.Background(), missing, t.TempDir(), PullOptions{Endpoint: srv.URL, Client: srv.Client()})
	assert.ErrorContains(t, err, "absent.json: GET")
	assert.ErrorContains(t, err, "404")
}

// TestPullChecksWhatTheHubPublishes: a pin that disagrees with the hash the
// hub publishes for a file fails the pull with both values, before an LFS
// file is downloaded; for a small file, with the git blob the hub names.
func TestPullChecksWhatTheHubPublishes(t *testing.T) {
	folder := embedtest.LocalModel(t)
	m := minilm(t)
	other := strings.Repeat("ab", 32)
	srv, requests := hub(t, m, folder, nil, func(p, hash string) string {
		if p == "model.safetensors" {
			return other
		}
		return hash
	})
	dir := t.TempDir()
	_, err := Pull(context.Background(), m, dir, PullOptions{Endpoint: srv.URL, Client: srv.Client()})
	require.ErrorContains(t, err, "model.safetensors: the hub publishes SHA-256 "+other+" for this file and this sagasu pins 53aa5117")
	assert.EqualValues(t, len(m.Files), requests.Load(), "the weights were not downloaded")
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries, "nothing is left behind")

	srv, _ = hub(t, m, folder, nil, func(p, hash string) string {
		if p == "config.json" {
			return strings.Repeat("cd", 20)
		}
		return hash
	})
	_, err = Pull(context.Background(), m, t.TempDir(), PullOptions{Endpoint: srv.URL, Client: srv.Client()})
	require.ErrorContains(t, err, "config.json: the hub publishes git blob cdcdcd")
}

func TestPullEndpoints(t *testing.T) {
	m := minilm(t)
	_, err := Pull(context.Background(), m, t.TempDir(), PullOptions{Endpoint: "http://example.com"})
	assert.ErrorContains(t, err, "over https only")
	_, err = Pull(context.Background(), m, t.TempDir(), PullOptions{Endpoint: "::"})
	assert.ErrorContains(t, err, "is not a URL")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	_, err = Pull(ctx, m, t.TempDir(), PullOptions{Endpoint: srv.URL, Client: srv.Client()})
	assert.ErrorIs(t, err, context.Canceled)
}

// TestKnown: every known model is pinned to a commit and each file to a
// size and a SHA-256.
func TestKnown(t *testing.T) {
	hex := regexp.MustCompile(`^[0-9a-f]{64}$`)
	commit := regexp.MustCompile(`^[0-9a-f]{40}$`)
	for _, m := range Known {
		require.NoError(t, CheckName(m.Name))
		assert.Regexp(t, commit, m.Revision, m.Name)
		paths := map[string]bool{}
		for _, f := range m.Files {
			assert.Regexp(t, hex, f.SHA256, "%s %s", m.Name, f.Path)
			assert.Positive(t, f.Size)
			paths[f.Path] = true
		}
		for _, need := range []string{"config.json", "tokenizer.json", "model.safetensors"} {
			assert.True(t, paths[need], "%s lacks %s", m.Name, need)
		}
	}
	_, ok := Lookup("gpt-4")
	assert.False(t, ok)
	assert.Contains(t, Names(), "multilingual-e5-small")
	for _, m := range Known {
		assert.NotEmpty(t, m.Checked, "%s: say where its checksums came from", m.Name)
	}
}

func TestImport(t *testing.T) {
	src := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(src, "1_Pooling"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(src, ".git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(src, "config.json"), []byte("{}"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, "1_Pooling", "config.json"), []byte(`{"a":1}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, ".git", "HEAD"), []byte("x"), 0o644))
	blob := filepath.Join(t.TempDir(), "blob")
	require.NoError(t, os.WriteFile(blob, []byte("weights"), 0o644))
	require.NoError(t, os.Symlink(blob, filepath.Join(src, "model.safetensors")))

	dir := t.TempDir()
	got, err := Import(src, dir, "mine", false)
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(got, "1_Pooling", "config.json"))
	require.NoError(t, err)
	assert.Equal(t, `{"a":1}`, string(data))
	data, err = os.ReadFile(filepath.Join(got, "model.safetensors"))
	require.NoError(t, err)
	assert.Equal(t, "weights", string(data), "a linked file is copied, as a Hugging Face cache snapshot has them")
	_, err = os.Stat(filepath.Join(got, ".git"))
	assert.True(t, os.IsNotExist(err))

	_, err = Import(src, dir, "mine", false)
	assert.ErrorContains(t, err, "already in")
	_, err = Import(src, dir, "mine", true)
	assert.NoError(t, err)
	_, err = Import(src, dir, "../escape", false)
	assert.ErrorContains(t, err, "not a path")
	names, _ := Installed(dir)
	assert.Equal(t, []string{"mine"}, names)
}

func TestDir(t *testing.T) {
	d, err := Dir(func(k string) string {
		if k == "SAGASU_MODELS_DIR" {
			return "/x/models"
		}
		return ""
	})
	require.NoError(t, err)
	assert.Equal(t, "/x/models", d)
}

// TestNameFromFiles: a folder is named by its files: a known model's by
// their sizes, a Hugging Face cache snapshot by its repository, else by its
// model card's title, else by the folder.
func TestNameFromFiles(t *testing.T) {
	base := t.TempDir()
	snap := filepath.Join(base, "models--BAAI--bge-small-en-v1.5", "snapshots", "5c38ec7c405ec4b44b94cc5a9bb96e735b38267a")
	require.NoError(t, os.MkdirAll(snap, 0o755))
	assert.Equal(t, "bge-small-en-v1.5", NameFromFiles(snap))

	card := filepath.Join(base, "model")
	require.NoError(t, os.MkdirAll(card, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(card, "README.md"), []byte("---\nlicense: mit\ntags:\n- x\n---\n\n# intfloat/e5-base-v2\n\nText.\n"), 0o644))
	assert.Equal(t, "e5-base-v2", NameFromFiles(card))
	require.NoError(t, os.WriteFile(filepath.Join(card, "README.md"), []byte("# My own model\n"), 0o644))
	assert.Equal(t, "model", NameFromFiles(card), "a title that is not a name")

	known := filepath.Join(base, "weights")
	require.NoError(t, os.MkdirAll(known, 0o755))
	for _, f := range minilm(t).Files {
		p := filepath.Join(known, filepath.FromSlash(f.Path))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, nil, 0o644))
		require.NoError(t, os.Truncate(p, f.Size))
	}
	assert.Equal(t, "all-MiniLM-L6-v2", NameFromFiles(known))
	assert.NoError(t, CheckKnown(known, "all-MiniLM-L6-v2"))
	assert.ErrorContains(t, CheckKnown(known, "multilingual-e5-small"), "is not the model multilingual-e5-small")
	assert.NoError(t, CheckKnown(card, "my-own-model"), "a name no known model has passes")
}

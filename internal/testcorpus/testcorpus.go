// Package testcorpus gives tests the real corpora beside the repository
// (../shared/data): the VitePress documentation, indexed once per test
// binary into a temporary SQLite index. A test that needs a corpus which is
// not there skips with a message, or fails when CI=true (CI runs with
// ../shared beside the repository).
package testcorpus

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/source"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

var (
	mu      sync.Mutex
	engines = map[string]*search.Engine{}
)

// VitePress returns a search engine over the VitePress documentation —
// the language folders given ("en", "ja"; none means both) — with URIs
// relative to the corpus ("en/guide/…"). It is built once per test binary
// and set of folders; Close releases them.
func VitePress(t testing.TB, langs ...string) *search.Engine {
	t.Helper()
	docs := testenv.Shared(t, "vitepress-docs")
	if len(langs) == 0 {
		langs = []string{"en", "ja"}
	}
	key := strings.Join(langs, "+")
	mu.Lock()
	defer mu.Unlock()
	if e, ok := engines[key]; ok {
		return e
	}
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "sagasu-vitepress-")
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(dir, "vp.db"), sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	var docsIn []doc.Document
	for _, l := range langs {
		// With the corpus as the root, URIs are relative to it.
		err := source.Walk(ctx, []string{filepath.Join(docs, l)}, source.Options{Root: docs}, func(d doc.Document) error {
			docsIn = append(docsIn, d)
			return nil
		}, nil)
		if err != nil {
			st.Close()
			t.Fatal(err)
		}
	}
	if _, err := index.New(st, index.Options{}).Documents(ctx, docsIn); err != nil {
		st.Close()
		t.Fatal(err)
	}
	e := search.New(st)
	engines[key] = e
	return e
}

// Close releases the corpora a test binary opened (call it from TestMain).
func Close() {
	mu.Lock()
	defer mu.Unlock()
	for k, e := range engines {
		e.Store().Close()
		delete(engines, k)
	}
}

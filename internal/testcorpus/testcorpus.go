// Package testcorpus gives tests corpora indexed into a temporary SQLite
// index: Kumo, a small made-up documentation site in this repository
// (English and Japanese Markdown) for the tests of sagasu's own logic,
// which run on every clone; and the real VitePress documentation beside
// the repository (../shared/data) for measurements, which skip without it
// (and fail when CI=true: CI runs with ../shared beside the repository).
package testcorpus

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/source"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

var (
	mu      sync.Mutex
	engines = map[string]*search.Engine{}
	temps   []string // the folders of their indexes
)

// KumoDocs is the folder of the Kumo corpus: the documentation of a
// made-up static site generator, a dozen English pages (guides and a
// reference: deploy, sitemap, search, i18n, frontmatter, sidebar, a 404
// page, the last-updated timestamp) and six Japanese ones, under en/ and
// ja/.
func KumoDocs() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata", "kumo")
}

// Kumo returns a search engine over the Kumo corpus — the language
// folders given ("en", "ja"; none means both) — with URIs relative to the
// corpus ("en/guide/deploy.md"). Each call indexes it afresh (in a
// fraction of a second) into the test's temporary folder, closed when the
// test ends.
func Kumo(t testing.TB, langs ...string) *search.Engine {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "kumo.db"), sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := indexLangs(st, KumoDocs(), langs); err != nil {
		t.Fatal(err)
	}
	return search.New(st)
}

// VitePress returns a search engine over the VitePress documentation in
// the shared data, like Kumo, but built once per test binary and set of
// folders (Close releases them); it skips the test (fails it under
// CI=true) when the documentation is not there.
func VitePress(t testing.TB, langs ...string) *search.Engine {
	t.Helper()
	root := testenv.Shared(t, "vitepress-docs")
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
	temps = append(temps, dir)
	st, err := sqlite.Open(ctx, filepath.Join(dir, "vp.db"), sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := indexLangs(st, root, langs); err != nil {
		st.Close()
		t.Fatal(err)
	}
	e := search.New(st)
	engines[key] = e
	return e
}

// indexLangs indexes the language folders of the corpus at root ("en",
// "ja"; none means both) into st, with URIs relative to root.
func indexLangs(st store.Store, root string, langs []string) error {
	if len(langs) == 0 {
		langs = []string{"en", "ja"}
	}
	ctx := context.Background()
	var docsIn []doc.Document
	for _, l := range langs {
		err := source.Walk(ctx, []string{filepath.Join(root, l)}, source.Options{Root: root}, func(d doc.Document) error {
			docsIn = append(docsIn, d)
			return nil
		}, nil)
		if err != nil {
			return err
		}
	}
	_, err := index.New(st, index.Options{}).Documents(ctx, docsIn)
	return err
}

// Close releases the corpora a test binary opened (call it from TestMain).
func Close() {
	mu.Lock()
	defer mu.Unlock()
	for k, e := range engines {
		e.Store().Close()
		delete(engines, k)
	}
	for _, dir := range temps {
		os.RemoveAll(dir)
	}
	temps = nil
}

package testcorpus

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store"
)

func TestMain(m *testing.M) {
	defer Close()
	m.Run()
}

// TestKumoIsIndexedWhole: every page of the fixture is in its index under
// its path in the corpus, and each language finds its own pages.
func TestKumoIsIndexedWhole(t *testing.T) {
	ctx := context.Background()
	var pages []string
	err := filepath.WalkDir(KumoDocs(), func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".md") {
			rel, _ := filepath.Rel(KumoDocs(), path)
			pages = append(pages, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil || len(pages) < 15 {
		t.Fatalf("%d pages in %s: %v", len(pages), KumoDocs(), err)
	}
	e := Kumo(t)
	h, err := e.Store().Hashes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		if _, ok := h[p]; !ok {
			t.Errorf("page %s is not indexed (index has %d sources)", p, len(h))
		}
	}
	for q, want := range map[string]string{
		"sitemap hostname":  "en/guide/sitemap-generation.md",
		"サイドバーの折りたたみ":       "ja/reference/sidebar.md",
		"custom 404 page":   "en/guide/not-found.md",
		"ローカル検索":            "ja/guide/search.md",
		"last updated time": "en/guide/last-updated.md",
	} {
		res, err := e.Search(ctx, search.Request{Query: q, K: 1})
		if err != nil || len(res.Hits) == 0 || res.Hits[0].Source.URI != want {
			t.Errorf("%q: %+v, %v; want %s first", q, res, err, want)
		}
	}
	en, err := Kumo(t, "en").Store().Sources(ctx, store.ListOptions{PathGlob: "ja/**"})
	if err != nil || len(en) != 0 {
		t.Errorf("the English corpus holds Japanese pages: %v, %v", en, err)
	}
}

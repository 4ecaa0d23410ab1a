package app

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/embed/embedtest"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// TestLocalEmbedderFindsVitePressPagesByMeaning indexes the VitePress docs
// (English and Japanese) with the real local embedding model
// (multilingual-e5-small) and finds pages in semantic mode (vectors only),
// with queries in the user's words rather than the page's.
func TestLocalEmbedderFindsVitePressPagesByMeaning(t *testing.T) {
	url, model := embedtest.LocalEmbedder(t)
	docs := testenv.Shared(t, "vitepress-docs")
	ctx := context.Background()
	c := Defaults()
	c.DB = filepath.Join(t.TempDir(), "vp.db")
	// A small CPU server: small requests, so none waits past its timeout.
	c.Embedder = EmbedderConfig{Driver: "openai", URL: url, Model: model, BatchSize: 8}
	a := &App{Config: c, Log: nopLogger(), Getenv: func(string) string { return "" }}
	st, err := a.OpenStore(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	emb, err := a.Embedder(ctx, st, true)
	if err != nil {
		t.Fatal(err)
	}
	opt := a.IndexOptions()
	opt.Embedder = emb
	start := time.Now()
	// The guides, in both languages: enough pages to choose among, few
	// enough chunks for a CPU embedder.
	rep, err := index.New(st, opt).Run(ctx, []string{docs + "/en/guide", docs + "/ja/guide"})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	t.Logf("indexed %d sources, embedded %d chunks in %s (%.0f chunks/s)", rep.Added, rep.Embedded, took.Round(time.Millisecond), float64(rep.Embedded)/took.Seconds())
	e := a.Engine(st, emb)
	for _, tc := range []struct{ query, page string }{
		{"produce a sitemap.xml file that search engines read", "en/guide/sitemap-generation.md"},
		{"pages that ship without any client-side scripts", "en/guide/mpa-mode.md"},
		{"検索エンジン向けに sitemap.xml を出力したい", "ja/guide/sitemap-generation.md"},
		{"サイトを複数の言語で提供したい", "ja/guide/i18n.md"},
	} {
		resp, err := e.Search(ctx, search.Request{Query: tc.query, K: 5, Mode: search.ModeSemantic})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		var got []string
		for _, h := range resp.Hits {
			got = append(got, h.Source.URI)
			if strings.HasSuffix(h.Source.URI, tc.page) {
				found = true
			}
		}
		if !found {
			t.Errorf("%q: %s is not in the top 5 by meaning: %v", tc.query, tc.page, got)
		}
	}
}

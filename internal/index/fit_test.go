package index_test

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/embed"
	"github.com/sagasu-dev/sagasu/internal/embed/embedtest"
	"github.com/sagasu-dev/sagasu/internal/embed/local"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/search"
)

// Indexing Japanese with an English model (all-MiniLM-L6-v2, the real
// one) warns, names the model to use instead, and leaves hybrid off for
// Japanese questions; English questions stay hybrid.
func TestEnglishModelOnJapaneseWarns(t *testing.T) {
	ctx := context.Background()
	c, err := local.Open(embedtest.LocalModel(t), local.Options{})
	if err != nil {
		t.Fatal(err)
	}
	emb := embed.New(c, local.EmbedOptions(0))
	dir := t.TempDir()
	write(t, filepath.Join(dir, "ja", "config.md"), "# サイトの設定\n\n設定ファイルを作成して、サイトのタイトルと説明を書きます。テーマの色やナビゲーションのリンクは、あとからいつでも変えられます。"+
		"ページごとの設定は、各ページの先頭に書くフロントマターで上書きできます。\n\n## デプロイ\n\nビルドしたサイトを GitHub Pages や Netlify に公開する手順を説明します。静的ファイルを置くだけで動きます。")
	write(t, filepath.Join(dir, "ja", "routing.md"), "# ルーティング\n\nファイルの置き場所がそのままページの URL になります。動的ルートを使うと、ひとつのテンプレートから多くのページを生成できます。"+
		"リンクは相対パスで書くのが安全です。")
	write(t, filepath.Join(dir, "en", "config.md"), "# Site config\n\nCreate the config file and write the title and the description of the site. The theme colours and the navigation links can be changed at any time.\n\n"+
		"## Deploy\n\nPublish the built site to GitHub Pages or Netlify: it is static files only.")
	s := open(t)
	if err := s.InitVectors(ctx, c.Info().Dim); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	ix := index.New(s, index.Options{Embedder: emb, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	rep, err := ix.Run(ctx, []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.PoorFit) != 1 || rep.PoorFit[0].Lang != "ja" {
		t.Fatalf("poor fit %+v, want Japanese only", rep.PoorFit)
	}
	warning := log.String()
	for _, want := range []string{"reads Japanese poorly", "% of its tokens are unknown", "hybrid search stays off for Japanese questions", "sagasu model pull multilingual-e5-small"} {
		if !strings.Contains(warning, want) {
			t.Errorf("the warning does not say %q:\n%s", want, warning)
		}
	}
	t.Logf("as a user sees it: %s", rep.PoorFit[0].Warning())

	e := search.New(s, search.WithEmbedder(emb))
	for q, want := range map[string]search.Mode{"サイトの設定を変える": search.ModeKeyword, "change the site config": search.ModeHybrid} {
		res, err := e.Search(ctx, search.Request{Query: q, K: 3})
		if err != nil {
			t.Fatal(err)
		}
		if res.Mode != want {
			t.Errorf("%q searched by %s, want %s", q, res.Mode, want)
		}
	}
	// Asked for, hybrid still runs.
	if res, err := e.Search(ctx, search.Request{Query: "サイトの設定", Mode: search.ModeHybrid}); err != nil || res.Mode != search.ModeHybrid {
		t.Errorf("hybrid asked for: %v, %v", res.Mode, err)
	}
}

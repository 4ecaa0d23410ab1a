package loop

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
	"github.com/sagasu-dev/sagasu/internal/testcorpus"
)

// fixedStats is a fixed table of document frequencies: the words given are
// analysed, every term of a word gets the word's frequency, and terms not in
// the table are in no chunk at all.
type fixedStats struct {
	df map[string]int
	n  int
}

func newFixedStats(n int, words map[string]int) fixedStats {
	an := analyze.New(analyze.Options{})
	s := fixedStats{df: map[string]int{}, n: n}
	for w, df := range words {
		for _, t := range an.QueryTerms(w) {
			s.df[t] = df
		}
	}
	return s
}

func (s fixedStats) DocFreq(_ context.Context, terms []string) (map[string]int, int, error) {
	out := map[string]int{}
	for _, t := range terms {
		out[t] = s.df[t]
	}
	return out, s.n, nil
}

// result builds a hit from a heading path written as users read it.
func result(id int64, uri, heading, text string) doc.Hit {
	path := strings.Split(heading, " > ")
	return doc.Hit{Chunk: doc.Chunk{ID: id, Heading: path, Text: text}, Source: doc.Source{URI: uri, Title: path[0]}}
}

// corpus is a small documentation set: a deploy guide with several
// platform sections, a sitemap page, a routing page and unrelated pages that
// share the common words.
var corpus = map[string]string{
	"guide/deploy.md": `# Deploy Your Site

Build the site with the build command and upload the dist folder.

## Build and Test Locally

Run the build, then preview it locally with the preview command.

## HTTP Cache Headers

Assets under /assets/ have hashed names, so serve them with Cache-Control: max-age=31536000, immutable.

## Platform Guides

### Netlify

Connect the repository and set the build command.

### GitHub Pages

Create a workflow file that builds the site and publishes it with the pages action.
`,
	"guide/sitemap-generation.md": `# Sitemap Generation

Set sitemap.hostname in the config to generate a sitemap.xml file when the site is built.

## Options

The sitemap options are passed to the sitemap generator.
`,
	"guide/routing.md": `# Routing

Pages map to files. The site uses file-based routing.

## Generating Clean URLs

Set cleanUrls to serve pages without the .html extension.
`,
	"reference/site-config.md": `# Site Config

The config file of the site sets its title and description.

## Build

Options for the build of the site: outDir, cacheDir, assetsDir.
`,
	"guide/theme.md": `# Theme

The theme decides how pages of the site look. Build a layout from components.
`,
	"ja/guide/sitemap.md": `# サイトマップ生成

設定ファイルで sitemap.hostname を指定すると、ビルド時に sitemap.xml を生成します。
`,
	"ja/guide/last-updated.md": `# 最終更新日時

各ページの最終更新日時を表示するには lastUpdated を有効にします。
`,
}

// testEngine indexes docs into a fresh SQLite index and returns an engine
// over it.
func testEngine(t *testing.T, docs map[string]string, opt Options) *Engine {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "test.db"), sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var ds []doc.Document
	for uri, content := range docs {
		ds = append(ds, doc.Document{URI: uri, Type: doc.TypeFile, Format: doc.FormatMarkdown, Title: strings.TrimPrefix(strings.SplitN(content, "\n", 2)[0], "# "), Content: content})
	}
	if _, err := index.New(st, index.Options{}).Documents(ctx, ds); err != nil {
		t.Fatal(err)
	}
	return New(search.New(st), opt)
}

// vitepressLoop indexes the VitePress documentation with URIs relative to
// the corpus, or skips the test when it is not there.
func vitepressLoop(t *testing.T) *Engine {
	t.Helper()
	return New(testcorpus.VitePress(t), Options{})
}

// TestSeedGoalAspects: the seed's goal and its English twin yield the
// configuration references the index has (in any order), not a single
// vague aspect.
func TestSeedGoalAspects(t *testing.T) {
	e := vitepressLoop(t)
	ctx := context.Background()
	for goal, want := range map[string][]string{
		"VitePressの設定方法を理解する":                   {"サイト設定", "フロントマター設定", "デフォルトテーマの設定"},
		"Understand how to configure VitePress": {"Site Config", "Frontmatter Config", "Default Theme Config"},
	} {
		got, err := e.Aspects(ctx, goal, nil)
		if err != nil || !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
			t.Errorf("Aspects(%q) = %q, %v; want %q", goal, got, err, want)
		}
	}
	// Explicit aspects win; a goal with several aspects is not expanded.
	got, _ := e.Aspects(ctx, "VitePressの設定方法を理解する", []string{"プラグイン", " "})
	if !slices.Equal(got, []string{"プラグイン"}) {
		t.Errorf("explicit aspects: %q", got)
	}
	got, _ = e.Aspects(ctx, "サイドバーとフッターの設定", nil)
	if !slices.Equal(got, []string{"サイドバー", "フッターの設定"}) {
		t.Errorf("two aspects: %q", got)
	}
}

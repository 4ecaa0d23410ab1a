package search_test

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
	"github.com/sagasu-dev/sagasu/internal/testcorpus"
)

// pageRank is the 1-based rank of the first hit from a source whose URI
// ends with page, among distinct pages; 0 when it is not in the top k hits.
func pageRank(t *testing.T, e *search.Engine, query, page string, k int) (int, []string) {
	t.Helper()
	resp, err := e.Search(context.Background(), search.Request{Query: query, K: k, Mode: search.ModeKeyword})
	if err != nil {
		t.Fatal(err)
	}
	var pages []string
	for _, h := range resp.Hits {
		if len(pages) > 0 && pages[len(pages)-1] == h.Source.URI {
			continue
		}
		seen := false
		for _, p := range pages {
			seen = seen || p == h.Source.URI
		}
		if seen {
			continue
		}
		pages = append(pages, h.Source.URI)
		if strings.HasSuffix(h.Source.URI, page) {
			return len(pages), pages
		}
	}
	return 0, pages
}

// The two queries of issue 17. "how do I search Japanese text" over
// sagasu's own README and docs (the README's demo) must find the section
// that answers it first.
func TestIssueQuerySearchJapaneseTextOverOwnDocs(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "self.db"), sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	md, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(md) == 0 {
		t.Fatalf("docs/*.md of the repository: %v, %v", md, err)
	}
	if _, err := index.New(st, index.Options{}).Run(ctx, append(md, filepath.Join(root, "README.md"))); err != nil {
		t.Fatal(err)
	}
	e := search.New(st)
	resp, err := e.Search(ctx, search.Request{Query: "how do I search Japanese text", K: 3, Mode: search.ModeKeyword})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Hits) == 0 || !strings.HasSuffix(resp.Hits[0].Source.URI, "docs/usage.md") ||
		!strings.Contains(resp.Hits[0].Chunk.HeadingPath(), "Japanese") {
		var got []string
		for _, h := range resp.Hits {
			got = append(got, h.Source.URI+" "+h.Chunk.HeadingPath())
		}
		t.Errorf("top hits %q, want the Japanese section of docs/usage.md first", got)
	}
}

// "how do I add a custom theme" over the VitePress docs: the page that
// answers came 5th with plain BM25; it must come first.
func TestIssueQueryCustomThemeOverVitePress(t *testing.T) {
	e := testcorpus.VitePress(t, "en")
	if rank, pages := pageRank(t, e, "how do I add a custom theme", "en/guide/custom-theme.md", 50); rank != 1 {
		t.Errorf("guide/custom-theme.md ranks %d among pages %v, want 1st", rank, pages)
	}
	// Without the question frame the content words rank the same page.
	if rank, pages := pageRank(t, e, "add a custom theme", "en/guide/custom-theme.md", 50); rank != 1 {
		t.Errorf("\"add a custom theme\": guide/custom-theme.md ranks %d among %v, want 1st", rank, pages)
	}
}

package search_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/chunk"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
)

// cookiePage has many sections about cookies, and one long one that the
// chunker cuts into pieces; the other pages mention cookies once each.
func cookiePage() string {
	var b strings.Builder
	b.WriteString("# Cookies\n\nCookies in responses and requests.\n\n")
	for i := range 6 {
		fmt.Fprintf(&b, "## Cookie case %d\n\nSet a cookie %d: the response cookie carries the cookie value, cookie path and cookie expiry.\n\n", i, i)
		if i%2 == 1 {
			fmt.Fprintf(&b, "## Unrelated %d\n\n%s\n\n", i, strings.Repeat("Other words about templates and forms. ", 40))
		}
	}
	b.WriteString("## Long cookie section\n\n")
	for i := range 8 {
		fmt.Fprintf(&b, "Paragraph %d: a response cookie with a long value, and again the response cookie.\n\n", i)
	}
	return b.String()
}

func varied(t *testing.T) *search.Engine {
	t.Helper()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "v.db"), sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	docs := []doc.Document{{URI: "cookies.md", Type: doc.TypeFile, Format: doc.FormatMarkdown, Title: "Cookies", Content: cookiePage()}}
	for i := range 4 {
		docs = append(docs, doc.Document{URI: fmt.Sprintf("other%d.md", i), Type: doc.TypeFile, Format: doc.FormatMarkdown, Title: fmt.Sprintf("Other %d", i),
			Content: fmt.Sprintf("# Other %d\n\nThis page sets a response cookie once, among much else about page %d: %s\n", i, i, strings.Repeat("tables, lists and links. ", 6))})
	}
	// Small chunks: one section a chunk.
	if _, err := index.New(s, index.Options{Chunk: chunk.Options{MaxTokens: 40, Overlap: 0}}).Documents(ctx, docs); err != nil {
		t.Fatal(err)
	}
	return search.New(s)
}

// One page does not fill the top of the results: at most DefaultPerSource
// hits of it come before the other pages' hits, and its sections that
// touch are one hit with the text of both.
func TestVariedResults(t *testing.T) {
	e := varied(t)
	ctx := context.Background()
	raw, err := e.Search(ctx, search.Request{Query: "response cookie", K: 5, PerSource: -1})
	if err != nil {
		t.Fatal(err)
	}
	if n := countSource(raw.Hits[:3], "cookies.md"); n != 3 {
		t.Fatalf("without the limit the top 3 should be the cookie page's (the case this guards against), got %d of 3", n)
	}
	res, err := e.Search(ctx, search.Request{Query: "response cookie", K: 5})
	if err != nil {
		t.Fatal(err)
	}
	if n := countSource(res.Hits, "cookies.md"); n > search.DefaultPerSource || res.Hits[0].Source.URI != "cookies.md" {
		t.Errorf("top 5: %s; want the cookie page first and at most %d of its hits", uris(res.Hits), search.DefaultPerSource)
	}
	// The pieces of the long section, next to each other, are one hit; two
	// sections are never one.
	merged := false
	for _, h := range res.Hits {
		if h.Source.URI != "cookies.md" {
			continue
		}
		if strings.Count(h.Chunk.Text, "## ") > 1 {
			t.Errorf("a hit spans two sections: %q", h.Chunk.Text)
		}
		if strings.Count(h.Chunk.Text, "Paragraph ") > 3 {
			merged = true
			if !strings.Contains(cookiePage(), h.Chunk.Text) || h.Chunk.HeadingPath() != "Cookies > Long cookie section" {
				t.Errorf("a merged hit is not a span of its section: %q under %q", h.Chunk.Text, h.Chunk.HeadingPath())
			}
		}
	}
	if !merged {
		t.Errorf("no hit merges the pieces of the long cookie section: %s", uris(res.Hits))
	}
	// The first k of a longer ranking are the ranking of k, so pages agree
	// (a deeper ranking may merge more into a hit).
	more, err := e.Search(ctx, search.Request{Query: "response cookie", K: 8})
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range res.Hits {
		if more.Hits[i].Chunk.ID != h.Chunk.ID || !strings.Contains(more.Hits[i].Chunk.Text, h.Chunk.Text) {
			t.Errorf("hit %d of 8 is chunk %d, of 5 chunk %d", i, more.Hits[i].Chunk.ID, h.Chunk.ID)
		}
	}
}

func countSource(hits []doc.Hit, uri string) int {
	n := 0
	for _, h := range hits {
		if h.Source.URI == uri {
			n++
		}
	}
	return n
}

func uris(hits []doc.Hit) string {
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s:%d-%d", h.Source.URI, h.Chunk.StartLine, h.Chunk.EndLine))
	}
	return strings.Join(out, ", ")
}

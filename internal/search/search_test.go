package search_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
)

const guide = `# Guide

Intro to the guide.

## Routing

Routes map URLs to pages.

` + "```md\n# Not a heading inside a fence\n```" + `

### Dynamic Routes

Use [param] in file names to make dynamic routes.

## Deploying

Build the site and upload the dist folder.
`

func engine(t *testing.T) *search.Engine {
	t.Helper()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "s.db"), sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	docs := []doc.Document{
		{URI: "docs/guide/routing.md", Type: doc.TypeFile, Format: doc.FormatMarkdown, Title: "Guide", Content: guide},
		{URI: "docs/api/routing.md", Type: doc.TypeFile, Format: doc.FormatMarkdown, Title: "API", Content: "# API\n\nrouter API\n"},
		{URI: "notes.txt", Type: doc.TypeFile, Format: doc.FormatText, Title: "notes", Content: "plain notes"},
	}
	if _, err := index.New(s, index.Options{}).Documents(ctx, docs); err != nil {
		t.Fatal(err)
	}
	return search.New(s)
}

func TestGetSection(t *testing.T) {
	e := engine(t)
	ctx := context.Background()
	tests := []struct {
		section, wantPath, wantStart string
		wantContains, wantNot        string
	}{
		{"routing", "Guide > Routing", "## Routing", "### Dynamic Routes", "## Deploying"},
		{"Dynamic Routes", "Guide > Routing > Dynamic Routes", "### Dynamic Routes", "[param]", "Routes map"},
		{"Routing > dynamic routes", "Guide > Routing > Dynamic Routes", "### Dynamic Routes", "[param]", "Deploying"},
		{"Guide", "Guide", "# Guide", "## Deploying", ""},
	}
	for _, tc := range tests {
		o, err := e.Get(ctx, "docs/guide/routing.md", tc.section)
		if err != nil {
			t.Errorf("Get(section %q): %v", tc.section, err)
			continue
		}
		if o.Section != tc.wantPath || !strings.HasPrefix(o.Content, tc.wantStart) || !strings.Contains(o.Content, tc.wantContains) ||
			(tc.wantNot != "" && strings.Contains(o.Content, tc.wantNot)) {
			t.Errorf("Get(section %q) = %q %q", tc.section, o.Section, o.Content)
		}
		lines := strings.Split(guide, "\n")
		if !strings.HasPrefix(lines[o.StartLine-1], tc.wantStart) {
			t.Errorf("section %q starts at line %d (%q)", tc.section, o.StartLine, lines[o.StartLine-1])
		}
	}
	if _, err := e.Get(ctx, "docs/guide/routing.md", "Not a heading inside a fence"); err == nil {
		t.Errorf("a # line inside a code fence was taken for a section")
	}
	_, err := e.Get(ctx, "docs/guide/routing.md", "Nope")
	if err == nil || !strings.Contains(err.Error(), "Guide > Routing > Dynamic Routes") {
		t.Errorf("missing section error does not list the sections: %v", err)
	}
	if _, err := e.Get(ctx, "notes.txt", "x"); err == nil || !strings.Contains(err.Error(), "no sections") {
		t.Errorf("section of a text source: %v", err)
	}
	whole, err := e.Get(ctx, "notes.txt", "")
	if err != nil || whole.Content != "plain notes" || whole.StartLine != 1 || whole.EndLine != 1 {
		t.Errorf("whole source: %+v, %v", whole, err)
	}
}

func TestResolve(t *testing.T) {
	e := engine(t)
	ctx := context.Background()
	for ref, want := range map[string]string{
		"docs/guide/routing.md":             "docs/guide/routing.md",
		"./docs/guide/routing.md":           "docs/guide/routing.md",
		"guide/routing.md":                  "docs/guide/routing.md",
		doc.SourceID("docs/api/routing.md"): "docs/api/routing.md",
		"notes.txt":                         "notes.txt",
	} {
		src, err := e.Resolve(ctx, ref)
		if err != nil || src.URI != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", ref, src.URI, err, want)
		}
	}
	if _, err := e.Resolve(ctx, "routing.md"); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("Resolve of an ambiguous suffix: %v", err)
	}
	if _, err := e.Resolve(ctx, "missing.md"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Resolve(missing) = %v, want ErrNotFound", err)
	}
}

func TestSearchValidatesRequests(t *testing.T) {
	e := engine(t)
	ctx := context.Background()
	if _, err := e.Search(ctx, search.Request{Query: "  "}); !errors.Is(err, search.ErrEmptyQuery) {
		t.Errorf("empty query: %v", err)
	}
	for _, k := range []int{-1, search.MaxK + 1} {
		if _, err := e.Search(ctx, search.Request{Query: "routes", K: k}); err == nil {
			t.Errorf("k=%d accepted", k)
		}
	}
	if _, err := e.Search(ctx, search.Request{Query: "routes", Mode: "semantic"}); err == nil || !strings.Contains(err.Error(), "embedder") {
		t.Errorf("semantic without an embedder: %v", err)
	}
	if _, err := e.Search(ctx, search.Request{Query: "routes", Mode: "fuzzy"}); err == nil {
		t.Errorf("unknown mode accepted")
	}
	resp, err := e.Search(ctx, search.Request{Query: "dynamic routes param"})
	if err != nil || resp.Mode != search.ModeKeyword || len(resp.Hits) == 0 {
		t.Fatalf("search: %+v, %v", resp, err)
	}
	top := resp.Hits[0]
	if top.Source.URI != "docs/guide/routing.md" || !strings.Contains(top.Chunk.Text, "[param]") || top.Score <= 0 {
		t.Errorf("top hit = %+v", top)
	}
	v := resp.View()
	if v.Results[0].Heading != top.Chunk.HeadingPath() || v.Results[0].Lines != [2]int{top.Chunk.StartLine, top.Chunk.EndLine} {
		t.Errorf("view = %+v", v.Results[0])
	}
}

func TestFuseIsReciprocalRankFusion(t *testing.T) {
	f := search.Fusion{K: 60, KeywordWeight: 1, SemanticWeight: 0.5}
	kw := []store.Scored{{ChunkID: 1, Score: 9}, {ChunkID: 2, Score: 5}}
	sem := []store.Scored{{ChunkID: 2, Score: 0.9}, {ChunkID: 3, Score: 0.8}}
	got := f.Fuse(kw, sem)
	want := map[int64]float64{1: 1.0 / 61, 2: 1.0/62 + 0.5/61, 3: 0.5 / 62}
	if len(got) != 3 || got[0].ChunkID != 2 || got[1].ChunkID != 1 || got[2].ChunkID != 3 {
		t.Fatalf("Fuse order = %v", got)
	}
	for _, g := range got {
		if d := g.Score - want[g.ChunkID]; d > 1e-12 || d < -1e-12 {
			t.Errorf("chunk %d fused score %v, want %v", g.ChunkID, g.Score, want[g.ChunkID])
		}
	}
}

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/index"
)

// siblings lays out <parent>/proj (the docs fixture) and an empty
// <parent>/other.
func siblings(t *testing.T) (proj, other string) {
	parent := t.TempDir()
	proj = filepath.Join(parent, "proj")
	write(t, filepath.Join(proj, "docs", "guide.md"), guide)
	write(t, filepath.Join(proj, "docs", "ja", "config.md"), jaGuide)
	write(t, filepath.Join(proj, "docs", "notes.txt"), "Plain notes about deploying on Fridays.\n\nSecond paragraph.")
	other = filepath.Join(parent, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	return proj, other
}

func listURIs(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	var list struct {
		Sources []struct{ URI string } `json:"sources"`
	}
	out := mustRun(t, dir, append(args, "list", "--json")...)
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	var uris []string
	for _, s := range list.Sources {
		uris = append(uris, s.URI)
	}
	return uris
}

var fixtureURIs = []string{"docs/guide.md", "docs/ja/config.md", "docs/notes.txt"}

// TestIndexThreeSpellingsOneCopy: "docs", its absolute path and
// "../proj/docs" from a sibling folder index one copy of each file; search
// finds each once; get and delete take any spelling.
func TestIndexThreeSpellingsOneCopy(t *testing.T) {
	proj, other := siblings(t)
	db := filepath.Join(proj, ".sagasu", "sagasu.db")
	if out := mustRun(t, proj, "index", "docs"); !strings.Contains(out, "3 added") {
		t.Fatalf("index docs: %q, want 3 added", out)
	}
	if out := mustRun(t, proj, "index", filepath.Join(proj, "docs")); !strings.Contains(out, "0 added") || !strings.Contains(out, "3 unchanged") {
		t.Errorf("index by the absolute path: %q, want 3 unchanged", out)
	}
	if out := mustRun(t, other, "--db", db, "index", "../proj/docs"); !strings.Contains(out, "0 added") || !strings.Contains(out, "3 unchanged") {
		t.Errorf("index ../proj/docs from a sibling: %q, want 3 unchanged", out)
	}
	if got := listURIs(t, proj); !slices.Equal(got, fixtureURIs) {
		t.Errorf("list = %q, want each file once: %q", got, fixtureURIs)
	}
	q := query(t, proj, "-k", "20", "deploying routes guide notes")
	var got []string
	for _, r := range q.Results {
		if !slices.Contains(got, r.Source.URI) {
			got = append(got, r.Source.URI)
		}
		if strings.HasPrefix(r.Source.URI, "/") || strings.HasPrefix(r.Source.URI, "..") {
			t.Errorf("result from a second copy: %s", r.Source.URI)
		}
	}
	if len(got) != 2 {
		t.Errorf("query found sources %q, want docs/guide.md and docs/notes.txt", got)
	}

	if out := mustRun(t, other, "--db", db, "get", "../proj/docs/guide.md"); out != guide {
		t.Errorf("get ../proj/docs/guide.md from a sibling = %q, want the file", out)
	}
	if out := mustRun(t, proj, "get", filepath.Join(proj, "docs", "guide.md")); out != guide {
		t.Errorf("get by the absolute path = %q, want the file", out)
	}
	if out := mustRun(t, other, "--db", db, "delete", "../proj/docs/notes.txt"); !strings.Contains(out, "deleted docs/notes.txt") {
		t.Errorf("delete ../proj/docs/notes.txt: %q", out)
	}
	if got := listURIs(t, proj); !slices.Equal(got, []string{"docs/guide.md", "docs/ja/config.md"}) {
		t.Errorf("after delete list = %q", got)
	}
}

// TestIndexExplicitDBPinsItsRoot: an index outside the default layout
// keeps the working directory of its first run as its root, so a later run
// from elsewhere names files alike.
func TestIndexExplicitDBPinsItsRoot(t *testing.T) {
	proj, other := siblings(t)
	db := filepath.Join(filepath.Dir(proj), "index.db")
	mustRun(t, proj, "--db", db, "index", "docs")
	if out := mustRun(t, other, "--db", db, "index", "../proj/docs"); !strings.Contains(out, "3 unchanged") {
		t.Errorf("second run from a sibling: %q, want 3 unchanged", out)
	}
	if got := listURIs(t, other, "--db", db); !slices.Equal(got, fixtureURIs) {
		t.Errorf("list = %q, want %q", got, fixtureURIs)
	}
	if out := mustRun(t, other, "--db", db, "get", "docs/guide.md"); out != guide {
		t.Errorf("get docs/guide.md from a sibling = %q", out)
	}
	if q := query(t, other, "--db", db, "--glob", "docs/*.md", "routes"); len(q.Results) == 0 || q.Results[0].Source.URI != "docs/guide.md" {
		t.Errorf("query --glob docs/*.md from a sibling = %+v, want docs/guide.md", q.Results)
	}
}

// TestIndexMigratesAnOldIndex: an index written by an older sagasu, which
// stored paths as typed, is re-keyed by the next index run: duplicates are
// merged and reported, search and get still work, and the next run is
// quiet.
func TestIndexMigratesAnOldIndex(t *testing.T) {
	proj, _ := siblings(t)
	ctx := context.Background()
	st, err := app.OpenStore(ctx, filepath.Join(proj, ".sagasu", "sagasu.db"), true)
	if err != nil {
		t.Fatal(err)
	}
	abs := filepath.ToSlash(filepath.Join(proj, "docs", "guide.md"))
	if err := st.SetMeta(ctx, index.MetaSourceIdentity, "1"); err != nil { // write as typed
		t.Fatal(err)
	}
	// guide.md under two spellings, notes.txt as typed from proj/ by
	// "sagasu index ../proj/docs".
	var old []doc.Document
	for uri, file := range map[string]string{"docs/guide.md": "guide.md", abs: "guide.md", "../proj/docs/notes.txt": "notes.txt"} {
		content, err := os.ReadFile(filepath.Join(proj, "docs", file))
		if err != nil {
			t.Fatal(err)
		}
		old = append(old, doc.Document{URI: uri, Type: doc.TypeFile, Format: doc.FormatMarkdown, Title: file, Content: string(content)})
	}
	if _, err := index.New(st, index.Options{}).Documents(ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := st.SetMeta(ctx, index.MetaSourceIdentity, ""); err != nil {
		t.Fatal(err)
	}
	st.Close()

	out := mustRun(t, proj, "index", "docs")
	if !strings.Contains(out, "merged 1 duplicate sources") || !strings.Contains(out, "renamed 1 sources") {
		t.Errorf("migrating run printed %q, want 1 renamed and 1 merged", out)
	}
	got := listURIs(t, proj)
	sort.Strings(got)
	if !slices.Equal(got, fixtureURIs) {
		t.Errorf("after migration list = %q, want %q", got, fixtureURIs)
	}
	if q := query(t, proj, "Fridays"); len(q.Results) != 1 || q.Results[0].Source.URI != "docs/notes.txt" {
		t.Errorf("query after migration = %+v", q.Results)
	}
	if out := mustRun(t, proj, "get", "docs/guide.md"); out != guide {
		t.Errorf("get after migration = %q", out)
	}
	if out := mustRun(t, proj, "index", "docs"); strings.Contains(out, "merged") || !strings.Contains(out, "3 unchanged") {
		t.Errorf("second run printed %q, want 3 unchanged and no migration", out)
	}
}

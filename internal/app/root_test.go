package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// TestSourceRoot: an index at <dir>/.sagasu/sagasu.db is rooted at <dir>
// from anywhere; any other index is rooted where it was first written,
// pinned in it, and the MCP index tool names files from that root.
func TestSourceRoot(t *testing.T) {
	ctx := context.Background()
	parent := t.TempDir()
	proj, other := filepath.Join(parent, "proj"), filepath.Join(parent, "other")
	for _, d := range []string{filepath.Join(proj, "docs"), other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(proj, "docs", "a.md"), []byte("# Routing\n\nPages map to files.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	open := func(db string, opt OpenOptions) *Runtime {
		t.Helper()
		cfg := Defaults()
		cfg.DB = db
		a := &App{Config: cfg, Getenv: func(string) string { return "" }}
		opt.NoCache = true
		rt, err := a.Open(ctx, opt)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rt.Close() })
		return rt
	}

	t.Chdir(other)
	layout := open(filepath.Join("..", "proj", ".sagasu", "sagasu.db"), OpenOptions{Create: true})
	if layout.Root != proj {
		t.Errorf("default layout: root %q, want %q (the folder holding .sagasu)", layout.Root, proj)
	}

	db := filepath.Join(parent, "index.db")
	t.Chdir(proj)
	first := open(db, OpenOptions{Create: true, Roots: []string{parent}})
	if first.Root != proj {
		t.Errorf("explicit --db: root %q, want the first run's working directory %q", first.Root, proj)
	}
	t.Chdir(other)
	later := open(db, OpenOptions{Roots: []string{parent}})
	if later.Root != proj {
		t.Errorf("explicit --db from elsewhere: root %q, want the pinned %q", later.Root, proj)
	}
	if _, err := later.Tools.Index(ctx, tools.IndexInput{Files: []string{"proj/docs"}}, nil); err != nil {
		t.Fatal(err)
	}
	res, err := later.Tools.Query(ctx, tools.QueryInput{Query: "routing"})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].Source.URI != "docs/a.md" {
		t.Fatalf("the MCP index tool from another folder stored %+v (%v), want docs/a.md", res.Hits, err)
	}
	for _, ref := range []string{"../proj/docs/a.md", filepath.Join(proj, "docs", "a.md"), "docs/a.md", "a.md"} {
		want := "docs/a.md"
		if ref == "a.md" {
			want = "a.md" // not a path to an indexed file from here: left for the engine
		}
		if got := later.SourceRef(ctx, ref); got != want {
			t.Errorf("SourceRef(%q) = %q, want %q", ref, got, want)
		}
	}
}

// TestCarrySourceNames: an index copied out of the default layout keeps
// the root its relative URIs are relative to, and its re-keyed mark.
func TestCarrySourceNames(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	from := filepath.Join(dir, "proj", ".sagasu", "sagasu.db")
	to := filepath.Join(dir, "copy.db")
	src, err := OpenStore(ctx, from, true)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if err := src.SetMeta(ctx, index.MetaSourceIdentity, "1"); err != nil {
		t.Fatal(err)
	}
	dst, err := OpenStore(ctx, to, true)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	t.Chdir(t.TempDir()) // not where the copy's files are
	if err := CarrySourceNames(ctx, from, src, to, dst); err != nil {
		t.Fatal(err)
	}
	root, err := SourceRootOf(ctx, to, dst, false)
	if want := filepath.Join(dir, "proj"); err != nil || root != want {
		t.Errorf("the copy's root = %q, %v; want the original's %q", root, err, want)
	}
	if v, _ := dst.Meta(ctx, index.MetaSourceIdentity); v != "1" {
		t.Errorf("the copy's %s = %q, want 1", index.MetaSourceIdentity, v)
	}
}

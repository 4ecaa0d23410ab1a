package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/tools"
)

// TestOpenWiresTheRuntime: one call gives a face the index, the toolset
// over it and the agent cache beside it; the options leave out what a
// command does not need.
func TestOpenWiresTheRuntime(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := Defaults()
	cfg.DB = filepath.Join(dir, ".sagasu", "sagasu.db")
	a := &App{Config: cfg, Getenv: func(string) string { return "" }}

	if _, err := a.Open(ctx, OpenOptions{}); err == nil {
		t.Fatal("Open without Create made an index that did not exist")
	}
	docs := filepath.Join(dir, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(docs, "a.md"), []byte("# Routing\n\nPages map to files.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rt, err := a.Open(ctx, OpenOptions{Create: true, Roots: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	if rt.Tools == nil || rt.Engine == nil || rt.Cache == nil || rt.Tools.Store() != rt.Store {
		t.Fatalf("runtime %+v: want tools, engine and cache over its store", rt)
	}
	if want := filepath.Join(dir, ".sagasu", "cache", "agent"); rt.Cache.Dir() != want {
		t.Errorf("agent cache in %s, want %s beside the index", rt.Cache.Dir(), want)
	}
	if _, err := rt.Tools.Index(ctx, tools.IndexInput{File: docs}, nil); err != nil {
		t.Fatal(err)
	}
	res, err := rt.Tools.Query(ctx, tools.QueryInput{Query: "routing"})
	if err != nil || len(res.Hits) != 1 || !strings.HasSuffix(res.Hits[0].Source.URI, "a.md") {
		t.Fatalf("query through the runtime: %+v %v", res.Hits, err)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}

	lean, err := a.Open(ctx, OpenOptions{NoEmbedder: true, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer lean.Close()
	if lean.Cache != nil || lean.Embedder != nil {
		t.Errorf("NoCache and NoEmbedder still opened a cache (%v) or an embedder (%v)", lean.Cache, lean.Embedder)
	}
	if _, err := lean.Tools.ReadCache(ctx, tools.ReadCacheInput{}); err == nil {
		t.Error("reading the cache of a runtime without one succeeded")
	}
}

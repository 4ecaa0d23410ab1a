package index_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/embed"
	"github.com/sagasu-dev/sagasu/internal/embed/embedtest"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
)

// relURIs lists the stored sources' URIs relative to dir.
func relURIs(t *testing.T, s store.Store, dir string) []string {
	t.Helper()
	srcs, err := s.Sources(context.Background(), store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	canon, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, src := range srcs {
		rel, err := filepath.Rel(canon, filepath.FromSlash(src.URI))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, filepath.ToSlash(rel))
	}
	slices.Sort(out)
	return out
}

func TestSyncFollowsEditsAddsRenamesAndDeletes(t *testing.T) {
	ctx := context.Background()
	dir := fixture(t)
	write(t, filepath.Join(dir, "old", "x.md"), "# X\n\nIn a folder that goes away.\n")
	s := open(t)
	if err := s.InitVectors(ctx, 32); err != nil {
		t.Fatal(err)
	}
	counter := embed.NewCounter(embedtest.New(32))
	ix := index.New(s, index.Options{Embedder: counter})
	if _, err := ix.Run(ctx, []string{dir}); err != nil {
		t.Fatal(err)
	}
	p := func(rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }

	// One section of a.md changes; d.md is new; b.md moves to sub/b2.md;
	// sub/c.txt and the folder old/ are deleted; new/e.md comes with a new
	// folder; dist/ is ignored.
	write(t, p("a.md"), "# Alpha\n\nAlpha text about routing.\n\n## Details\n\nRewritten details on middleware.\n")
	write(t, p("d.md"), "# Delta\n\nDelta covers caching.\n")
	if err := os.Rename(p("b.md"), p("sub/b2.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p("sub/c.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(p("old")); err != nil {
		t.Fatal(err)
	}
	write(t, p("new/e.md"), "# Epsilon\n\nEpsilon is new.\n")
	write(t, p(".gitignore"), "dist/\n")
	write(t, p("dist/bundle.md"), "# Bundle\n\nGenerated.\n")
	counter.Reset()
	rep, err := ix.Sync(ctx, dir, []string{p("a.md"), p("d.md"), p("b.md"), p("sub/b2.md"), p("sub/c.txt"), p("old"), p("new"), p("dist"), p(".gitignore")})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a.md", "d.md", "new/e.md", "sub/b2.md"}
	if got := relURIs(t, s, dir); !slices.Equal(got, want) {
		t.Errorf("after the sync the index holds %v, want %v", got, want)
	}
	if rep.Added != 3 || rep.Updated != 1 || rep.Removed != 3 {
		t.Errorf("report %+v, want 3 added (d, e, b2), 1 updated (a), 3 removed (b, c, x)", rep)
	}
	// Only the changed section of a.md and the new files' chunks are
	// embedded: the moved file keeps its vectors (same title, same text).
	if got := counter.Counts().Documents; got != 3 || rep.Embedded != 3 {
		t.Errorf("embedded %d texts (report %d), want 3: a.md's changed section, d.md and e.md", got, rep.Embedded)
	}

	// Changes made with nobody watching are caught up by a sync of the
	// whole folder, by content hash.
	write(t, p("a.md"), "# Alpha\n\nAll new.\n")
	if err := os.Remove(p("d.md")); err != nil {
		t.Fatal(err)
	}
	write(t, p("f.md"), "# Phi\n\nAdded while stopped.\n")
	rep, err = ix.Sync(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"a.md", "f.md", "new/e.md", "sub/b2.md"}
	if got := relURIs(t, s, dir); !slices.Equal(got, want) {
		t.Errorf("after catching up the index holds %v, want %v", got, want)
	}
	if rep.Added != 1 || rep.Updated != 1 || rep.Removed != 1 || rep.Unchanged != 2 {
		t.Errorf("catch-up report %+v, want 1 added, 1 updated, 1 removed, 2 unchanged", rep)
	}
}

func TestSyncKeepsANamedIgnoredFile(t *testing.T) {
	ctx := context.Background()
	dir := fixture(t)
	write(t, filepath.Join(dir, ".gitignore"), "notes.log\n")
	write(t, filepath.Join(dir, "notes.log"), "named by the user\n")
	s := open(t)
	ix := index.New(s, index.Options{})
	if _, err := ix.Run(ctx, []string{dir, filepath.Join(dir, "notes.log")}); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sync(ctx, dir, nil); err != nil {
		t.Fatal(err)
	}
	if got := relURIs(t, s, dir); !slices.Contains(got, "notes.log") {
		t.Errorf("a rescan removed the ignored file the user named: %v", got)
	}
}

// TestQueryDuringSyncSeesOneState races readers against syncs that rewrite
// every file from one generation to the next: no query may see the files
// of two generations at once, whether it scores the stored postings (a
// command) or a long-lived process's keyword cache (the MCP server, the
// page).
func TestQueryDuringSyncSeesOneState(t *testing.T) {
	for _, longLived := range []bool{false, true} {
		t.Run(fmt.Sprintf("long-lived=%v", longLived), func(t *testing.T) { raceSyncs(t, longLived) })
	}
}

func raceSyncs(t *testing.T, longLived bool) {
	ctx := context.Background()
	dir := t.TempDir()
	const files, rounds = 40, 15
	gen := func(g int) {
		for i := range files {
			write(t, filepath.Join(dir, fmt.Sprintf("f%02d.md", i)), fmt.Sprintf("# File %d\n\ncommon words and gen%d marker\n", i, g))
		}
	}
	gen(0)
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "i.db"), sqlite.Options{Create: true, CacheKeyword: longLived, CacheVectors: longLived})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ix := index.New(s, index.Options{})
	if _, err := ix.Run(ctx, []string{dir}); err != nil {
		t.Fatal(err)
	}
	terms := analyze.New(analyze.Options{}).QueryTerms("common")
	var wg sync.WaitGroup
	done := make(chan struct{})
	var mixed, queries, seen int
	var mu sync.Mutex
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				res, err := s.KeywordSearch(ctx, terms, 2*files, store.Filter{})
				if err != nil {
					t.Error(err)
					return
				}
				ids := make([]int64, len(res))
				for i, r := range res {
					ids[i] = r.ChunkID
				}
				hits, err := s.Hits(ctx, ids)
				if err != nil {
					t.Error(err)
					return
				}
				gens := map[string]bool{}
				for _, h := range hits {
					for _, w := range strings.Fields(h.Chunk.Text) {
						if strings.HasPrefix(w, "gen") {
							gens[w] = true
						}
					}
				}
				mu.Lock()
				queries++
				if len(gens) > 1 {
					mixed++
				}
				if len(hits) == files {
					seen++
				}
				mu.Unlock()
			}
		})
	}
	for g := 1; g <= rounds; g++ {
		gen(g)
		if _, err := ix.Sync(ctx, dir, nil); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	wg.Wait()
	t.Logf("%d queries during %d syncs of %d files; %d saw every file", queries, rounds, files, seen)
	if mixed > 0 {
		t.Errorf("%d of %d queries saw files of two generations: a sync was seen half applied", mixed, queries)
	}
	if seen == 0 {
		t.Error("no query saw the index whole: the readers did not run against the writer")
	}
}

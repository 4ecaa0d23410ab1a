package index_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/source"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// project lays out <parent>/proj/docs and an empty sibling <parent>/other,
// and returns the parent and the project folder.
func project(t *testing.T) (parent, proj string) {
	parent = t.TempDir()
	proj = filepath.Join(parent, "proj")
	write(t, filepath.Join(proj, "docs", "a.md"), "# Alpha\n\nAlpha explains routing.\n")
	write(t, filepath.Join(proj, "docs", "guide", "b.md"), "# Beta\n\nBeta explains routing and themes.\n")
	write(t, filepath.Join(proj, "docs", "c.txt"), "Gamma notes on routing.\n")
	if err := os.MkdirAll(filepath.Join(parent, "other"), 0o755); err != nil {
		t.Fatal(err)
	}
	return parent, proj
}

func storedURIs(t *testing.T, s store.Store) []string {
	t.Helper()
	srcs, err := s.Sources(context.Background(), store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, src := range srcs {
		out = append(out, src.URI)
	}
	return out
}

// searchURIs returns the source URI of every keyword hit for q, in rank
// order.
func searchURIs(t *testing.T, s store.Store, q string) []string {
	t.Helper()
	ctx := context.Background()
	res, err := s.KeywordSearch(ctx, analyze.New(analyze.Options{}).QueryTerms(q), 50, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, len(res))
	for i, r := range res {
		ids[i] = r.ChunkID
	}
	hits, err := s.Hits(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range hits {
		out = append(out, h.Source.URI)
	}
	return out
}

func run(t *testing.T, s store.Store, root string, prune bool, inputs ...string) index.Report {
	t.Helper()
	rep, err := index.New(s, index.Options{Source: source.Options{Root: root}, Prune: prune}).Run(context.Background(), inputs)
	if err != nil {
		t.Fatalf("index %q: %v", inputs, err)
	}
	return rep
}

var projectURIs = []string{"docs/a.md", "docs/c.txt", "docs/guide/b.md"}

// TestOneCopyWhateverTheSpelling: the same folder indexed as "docs", by
// its absolute path, as "../proj/docs" from a sibling folder and through
// a symlinked folder is stored once; a search finds each file once.
func TestOneCopyWhateverTheSpelling(t *testing.T) {
	parent, proj := project(t)
	s := open(t)

	t.Chdir(proj)
	rep := run(t, s, proj, false, "docs")
	if rep.Added != 3 {
		t.Fatalf("first run added %d, want 3", rep.Added)
	}
	rep = run(t, s, proj, false, filepath.Join(proj, "docs"))
	if rep.Added != 0 || rep.Unchanged != 3 {
		t.Errorf("the absolute spelling: %+v, want 3 unchanged", rep)
	}
	t.Chdir(filepath.Join(parent, "other"))
	rep = run(t, s, proj, false, "../proj/docs", "../proj/docs/a.md", filepath.Join("..", "proj", "docs", "**", "*.md"))
	if rep.Added != 0 || rep.Unchanged != 3 {
		t.Errorf(`"../proj/docs" from a sibling folder: %+v, want 3 unchanged`, rep)
	}
	err := os.Symlink(filepath.Join(proj, "docs"), filepath.Join(parent, "other", "linked"))
	testenv.Platform(t, err == nil, fmt.Sprintf("symlinks not supported: %v", err))
	rep = run(t, s, proj, false, "linked")
	if rep.Added != 0 || rep.Unchanged != 3 {
		t.Errorf("a symlinked folder: %+v, want 3 unchanged", rep)
	}

	if got := storedURIs(t, s); !slices.Equal(got, projectURIs) {
		t.Errorf("stored %q, want each file once: %q", got, projectURIs)
	}
	got := searchURIs(t, s, "routing")
	sort.Strings(got)
	if !slices.Equal(got, projectURIs) {
		t.Errorf(`search "routing" found %q, want each file once`, got)
	}
}

// TestFilesOutsideTheRootAreAbsolute: a file outside the root is named by
// its absolute canonical path, however it was typed.
func TestFilesOutsideTheRootAreAbsolute(t *testing.T) {
	parent, proj := project(t)
	write(t, filepath.Join(parent, "other", "x.md"), "# X\n\nrouting elsewhere\n")
	s := open(t)
	t.Chdir(proj)
	run(t, s, proj, false, "../other/x.md")
	t.Chdir(filepath.Join(parent, "other"))
	run(t, s, proj, false, "x.md", "./x.md")
	want := filepath.ToSlash(filepath.Join(parent, "other", "x.md"))
	if got := storedURIs(t, s); !slices.Equal(got, []string{want}) {
		t.Errorf("stored %q, want only %q", got, want)
	}
}

// oldIndex writes sources the way sagasu did before sources had one
// identity (URIs as typed), and clears the marker as such an index lacks
// it.
func oldIndex(t *testing.T, s store.Store, docs ...doc.Document) {
	t.Helper()
	ctx := context.Background()
	// The marker keeps the indexer from re-keying what this writes.
	if err := s.SetMeta(ctx, index.MetaSourceIdentity, "1"); err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if _, err := index.New(s, index.Options{}).Documents(ctx, []doc.Document{d}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetMeta(ctx, index.MetaSourceIdentity, ""); err != nil {
		t.Fatal(err)
	}
}

func fileDoc(uri, content string) doc.Document {
	return doc.Document{URI: uri, Type: doc.TypeFile, Format: doc.FormatMarkdown, Title: filepath.Base(uri), Content: content}
}

// TestMigrateAnOldIndex: an index holding one file under three spellings,
// a file that is gone and a text source is re-keyed on the next run: one
// copy of the file remains (the most recently indexed, renamed in place),
// the gone file and the text are left alone, the counts are reported, and
// a second run changes nothing.
func TestMigrateAnOldIndex(t *testing.T) {
	ctx := context.Background()
	parent, proj := project(t)
	s := open(t)
	a, err := os.ReadFile(filepath.Join(proj, "docs", "a.md"))
	if err != nil {
		t.Fatal(err)
	}
	absA := filepath.ToSlash(filepath.Join(proj, "docs", "a.md"))
	// The older copies hold an earlier version of a.md; the newest copy,
	// written a second later under the absolute spelling, the current one.
	oldIndex(t, s,
		fileDoc("docs/a.md", "# Alpha\n\nAn old draft.\n"),
		fileDoc("../proj/docs/a.md", "# Alpha\n\nAn old draft.\n"),
		fileDoc("docs/gone.md", "# Gone\n\nrouting of a deleted file\n"),
		doc.Document{URI: "text:1234", Type: doc.TypeText, Format: doc.FormatText, Title: "note", Content: "a routing note"},
	)
	time.Sleep(1100 * time.Millisecond) // IndexedAt counts seconds
	oldIndex(t, s, fileDoc(absA, string(a)))
	newest, err := s.SourceByURI(ctx, absA)
	if err != nil {
		t.Fatal(err)
	}
	newestChunks, err := s.Chunks(ctx, newest.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(storedURIs(t, s)); n != 5 {
		t.Fatalf("old index holds %d sources, want 5", n)
	}

	t.Chdir(filepath.Join(parent, "other")) // the root decides, not the working directory
	rep := run(t, s, proj, false, "../proj/docs")
	if rep.Merged != 2 || rep.Rekeyed != 1 {
		t.Errorf("migration merged %d and re-keyed %d, want 2 and 1", rep.Merged, rep.Rekeyed)
	}
	if rep.Added != 2 || rep.Unchanged != 1 || rep.Updated != 0 {
		t.Errorf("after migration the run added %d, updated %d, kept %d; want a.md unchanged and 2 new", rep.Added, rep.Updated, rep.Unchanged)
	}
	want := []string{"docs/a.md", "docs/c.txt", "docs/gone.md", "docs/guide/b.md", "text:1234"}
	if got := storedURIs(t, s); !slices.Equal(got, want) {
		t.Errorf("after migration %q, want %q", got, want)
	}
	kept, err := s.SourceByURI(ctx, "docs/a.md")
	if err != nil {
		t.Fatal(err)
	}
	if content, err := s.Content(ctx, kept.ID); err != nil || content != string(a) {
		t.Errorf("docs/a.md holds %q (%v), want the newest copy %q", content, err, a)
	}
	chunks, err := s.Chunks(ctx, kept.ID)
	if err != nil || len(chunks) != len(newestChunks) || chunks[0].ID != newestChunks[0].ID {
		t.Errorf("the newest copy was not renamed in place: chunks %v, were %v", chunks, newestChunks)
	}
	if got := searchURIs(t, s, "alpha"); !slices.Equal(got, []string{"docs/a.md"}) {
		t.Errorf(`search "alpha" after migration = %q, want docs/a.md once`, got)
	}
	if got := searchURIs(t, s, "draft"); len(got) != 0 {
		t.Errorf(`the merged old drafts are still searched: %q`, got)
	}
	if v, _ := s.Meta(ctx, index.MetaSourceIdentity); v != "1" {
		t.Errorf("marker %s = %q, want 1", index.MetaSourceIdentity, v)
	}

	// A second run changes nothing.
	before := storedURIs(t, s)
	rep = run(t, s, proj, false, "../proj/docs")
	if rep.Merged != 0 || rep.Rekeyed != 0 || rep.Added != 0 || rep.Unchanged != 3 {
		t.Errorf("second run: %+v, want nothing merged, re-keyed or added", rep)
	}
	if after := storedURIs(t, s); !slices.Equal(after, before) {
		t.Errorf("second run changed the sources: %q, was %q", after, before)
	}
}

// TestMigrationRunsOnce: once the marker is set, spellings written later
// (by a tool that bypasses the loader) are not touched by the migration.
func TestMigrationRunsOnce(t *testing.T) {
	_, proj := project(t)
	s := open(t)
	t.Chdir(proj)
	run(t, s, proj, false, "docs")
	abs := filepath.ToSlash(filepath.Join(proj, "docs", "c.txt"))
	if _, err := index.New(s, index.Options{}).Documents(context.Background(), []doc.Document{fileDoc(abs, "x")}); err != nil {
		t.Fatal(err)
	}
	rep := run(t, s, proj, false, "docs")
	if rep.Merged != 0 || rep.Rekeyed != 0 {
		t.Errorf("the migration ran again: %+v", rep)
	}
	if got := storedURIs(t, s); !slices.Contains(got, abs) {
		t.Errorf("a marked index was re-keyed: %q", got)
	}
}

// TestPruneUnderIdentities: --prune removes sources whose files are gone,
// named relative to the root, from any working directory.
func TestPruneUnderIdentities(t *testing.T) {
	parent, proj := project(t)
	s := open(t)
	t.Chdir(proj)
	run(t, s, proj, false, "docs")
	if err := os.Remove(filepath.Join(proj, "docs", "c.txt")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(parent, "other"))
	rep := run(t, s, proj, true, "../proj/docs/a.md")
	if rep.Removed != 1 {
		t.Errorf("prune removed %d, want 1 (docs/c.txt)", rep.Removed)
	}
	if got, want := storedURIs(t, s), []string{"docs/a.md", "docs/guide/b.md"}; !slices.Equal(got, want) {
		t.Errorf("after prune %q, want %q", got, want)
	}
}

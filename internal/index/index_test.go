package index_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf16"

	"github.com/sagasu-dev/sagasu/internal/embed"
	"github.com/sagasu-dev/sagasu/internal/embed/embedtest"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func open(t *testing.T) store.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "i.db"), sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func fixture(t *testing.T) string {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.md"), "# Alpha\n\nAlpha text about routing.\n\n## Details\n\nMore details on dynamic routes and params.\n")
	write(t, filepath.Join(dir, "b.md"), "# Beta\n\nBeta text about themes and the sidebar.\n")
	write(t, filepath.Join(dir, "sub", "c.txt"), "Plain text notes.\n\nSecond paragraph about deploys.")
	return dir
}

func TestUnchangedReindexMakesNoEmbeddingCalls(t *testing.T) {
	ctx := context.Background()
	dir := fixture(t)
	s := open(t)
	if err := s.InitVectors(ctx, 32); err != nil {
		t.Fatal(err)
	}
	counter := embed.NewCounter(embedtest.New(32))
	ix := index.New(s, index.Options{Embedder: counter})

	rep, err := ix.Run(ctx, []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	first := counter.Counts()
	if rep.Added != 3 || first.Documents == 0 || first.Documents != rep.Chunks || rep.Embedded != rep.Chunks {
		t.Fatalf("first run: %+v, counts %+v; want every chunk embedded once", rep, first)
	}

	counter.Reset()
	rep, err = ix.Run(ctx, []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if c := counter.Counts(); c.DocumentCalls != 0 || c.Documents != 0 {
		t.Errorf("re-index of an unchanged folder made %d embedding calls for %d texts, want 0", c.DocumentCalls, c.Documents)
	}
	if rep.Unchanged != 3 || rep.Chunks != 0 {
		t.Errorf("second run: %+v, want 3 unchanged and nothing written", rep)
	}

	// Forcing a rewrite re-reads every source but reuses every vector.
	counter.Reset()
	ix = index.New(s, index.Options{Embedder: counter, Force: true})
	rep, err = ix.Run(ctx, []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if c := counter.Counts(); c.Documents != 0 || rep.Reused != rep.Chunks {
		t.Errorf("forced re-index embedded %d texts (reused %d of %d), want all reused", c.Documents, rep.Reused, rep.Chunks)
	}

	// Editing one section embeds only the chunk that changed.
	write(t, filepath.Join(dir, "a.md"), "# Alpha\n\nAlpha text about routing.\n\n## Details\n\nEntirely new words about caching headers.\n")
	counter.Reset()
	ix = index.New(s, index.Options{Embedder: counter})
	rep, err = ix.Run(ctx, []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if c := counter.Counts(); rep.Updated != 1 || c.Documents < 1 || c.Documents >= rep.Chunks+1 || c.Documents != rep.Embedded {
		t.Errorf("after editing one section: report %+v, embedded %d texts", rep, c.Documents)
	}
	st, _ := s.Stats(ctx)
	if st.Vectors != st.Chunks {
		t.Errorf("%d vectors for %d chunks", st.Vectors, st.Chunks)
	}
}

func TestReembedReplacesEveryVector(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	if _, err := index.New(s, index.Options{}).Run(ctx, []string{fixture(t)}); err != nil {
		t.Fatal(err)
	}
	if err := s.InitVectors(ctx, 16); err != nil {
		t.Fatal(err)
	}
	counter := embed.NewCounter(embedtest.New(16))
	n, err := index.New(s, index.Options{Embedder: counter}).Reembed(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := s.Stats(ctx)
	if n != st.Chunks || st.Vectors != st.Chunks || counter.Counts().Documents != st.Chunks {
		t.Errorf("re-embedded %d, stats %+v, embedder saw %d texts", n, st, counter.Counts().Documents)
	}
}

func TestPruneRemovesVanishedFiles(t *testing.T) {
	ctx := context.Background()
	dir := fixture(t)
	s := open(t)
	ix := index.New(s, index.Options{})
	if _, err := ix.Run(ctx, []string{dir}); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "b.md"))
	rep, err := index.New(s, index.Options{Prune: true}).Run(ctx, []string{dir})
	if err != nil || rep.Removed != 1 {
		t.Fatalf("prune: %+v, %v", rep, err)
	}
	if _, err := s.SourceByURI(ctx, filepath.ToSlash(filepath.Join(dir, "b.md"))); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("pruned source still stored: %v", err)
	}
}

func TestWriteErrorStopsTheRunAndKeepsCommittedBatches(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for i := 0; i < 20; i++ {
		write(t, filepath.Join(dir, string(rune('a'+i))+".md"), "# T\n\n"+strings.Repeat("word"+string(rune('a'+i))+" ", 200))
	}
	s := open(t)
	if err := s.InitVectors(ctx, 8); err != nil {
		t.Fatal(err)
	}
	// An embedder that fails after a few calls, with tiny batches.
	failing := &failAfter{Embedder: embedtest.New(8), left: 3}
	rep, err := index.New(s, index.Options{Embedder: failing, BatchBytes: 1}).Run(ctx, []string{dir})
	if err == nil {
		t.Fatal("a failing embedder did not fail the run")
	}
	st, _ := s.Stats(ctx)
	if st.Sources < 1 || st.Sources > 3 || rep.Added != st.Sources || st.Vectors != st.Chunks {
		t.Errorf("after failure: %d sources and %d vectors for %d chunks stored, report %+v; want the batches embedded before the failure, whole",
			st.Sources, st.Vectors, st.Chunks, rep)
	}
	// A second run finishes the job.
	kept := st.Sources
	rep, err = index.New(s, index.Options{Embedder: embedtest.New(8)}).Run(ctx, []string{dir})
	if err != nil || rep.Added != 20-kept || rep.Unchanged != kept {
		t.Errorf("re-run: %+v, %v; want %d added and %d unchanged", rep, err, 20-kept, kept)
	}
}

type failAfter struct {
	embed.Embedder
	mu   sync.Mutex
	left int
}

func (f *failAfter) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	if f.left == 0 {
		f.mu.Unlock()
		return nil, errors.New("embedding server went away")
	}
	f.left--
	f.mu.Unlock()
	return f.Embedder.EmbedDocuments(ctx, texts)
}

// A text file saved as UTF-16 with a byte order mark (little- or
// big-endian, as Windows editors save it) is read as text: a Japanese
// query finds what it says.
func TestUTF16FilesAreFound(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	le := []byte{0xFF, 0xFE}
	be := []byte{0xFE, 0xFF}
	for _, u := range utf16.Encode([]rune("こんにちは、世界。UTF-16 で保存した文書です。\n")) {
		le = append(le, byte(u), byte(u>>8))
	}
	for _, u := range utf16.Encode([]rune("ありがとう、またね。\n")) {
		be = append(be, byte(u>>8), byte(u))
	}
	write(t, filepath.Join(dir, "le.txt"), string(le))
	write(t, filepath.Join(dir, "be.txt"), string(be))
	s := open(t)
	if _, err := index.New(s, index.Options{}).Run(ctx, []string{dir}); err != nil {
		t.Fatal(err)
	}
	e := search.New(s)
	for q, want := range map[string]string{"こんにちは": "le.txt", "ありがとう": "be.txt", "保存した文書": "le.txt"} {
		res, err := e.Search(ctx, search.Request{Query: q, K: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) == 0 || !strings.HasSuffix(res.Hits[0].Source.URI, want) {
			t.Errorf("%s finds %v, want %s", q, res.Hits, want)
		}
	}
}

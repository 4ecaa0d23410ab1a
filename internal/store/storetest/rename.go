package storetest

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// renameTests check store.Renamer.
var renameTests = []struct {
	name string
	fn   func(*testing.T, store.Store)
}{
	{"RenameSource", testRenameSource},
	{"RenameSourceRefused", testRenameRefused},
}

func chunkIDs(t *testing.T, s store.Store, sourceID string) []int64 {
	t.Helper()
	cs, err := s.Chunks(context.Background(), sourceID)
	if err != nil {
		t.Fatalf("Chunks(%s): %v", sourceID, err)
	}
	var ids []int64
	for _, c := range cs {
		ids = append(ids, c.ID)
	}
	return ids
}

// testRenameSource renames an embedded source: it is found under its new
// URI and ID by every read and every search, keeps its chunks, scores as
// before, and a later delete removes all of it.
func testRenameSource(t *testing.T, s store.Store) {
	ctx := context.Background()
	initVectors(t, s)
	c := withVectors(t, corpus())
	mustReplace(t, s, c...)
	const from, to = "docs/cats.md", "/home/user/project/docs/cats.md"
	before, err := s.SourceByURI(ctx, from)
	if err != nil {
		t.Fatal(err)
	}
	ids := chunkIDs(t, s, before.ID)

	got, err := s.RenameSource(ctx, before.ID, to)
	if err != nil {
		t.Fatalf("RenameSource: %v", err)
	}
	if got.ID != doc.SourceID(to) || got.URI != to || got.ContentHash != before.ContentHash || got.Chunks != before.Chunks || got.Title != before.Title {
		t.Errorf("renamed source = %+v, from %+v", got, before)
	}
	if _, err := s.SourceByURI(ctx, from); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("old URI still there: %v", err)
	}
	if _, err := s.Source(ctx, before.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("old ID still there: %v", err)
	}
	if content, err := s.Content(ctx, got.ID); err != nil || content != c[0].Content {
		t.Errorf("content under the new ID = %q, %v", content, err)
	}
	if after := chunkIDs(t, s, got.ID); !slices.Equal(after, ids) || len(ids) == 0 {
		t.Errorf("chunk IDs %v after rename, %v before", after, ids)
	}
	if h, err := s.Hashes(ctx); err != nil || h[to] != before.ContentHash || h[from] != "" {
		t.Errorf("Hashes after rename: %v, %v", h, err)
	}

	// Keyword and vector search, with and without filters, name the new URI.
	if u := uris(t, s, kwSearch(t, s, "mice", 10, store.Filter{})); !slices.Equal(u, []string{to}) {
		t.Errorf("keyword search after rename = %v", u)
	}
	for _, f := range []store.Filter{{SourceIDs: []string{got.ID}}, {PathGlob: "/home/**/cats.md"}} {
		if u := uris(t, s, kwSearch(t, s, "cat", 10, f)); len(u) == 0 || slices.ContainsFunc(u, func(x string) bool { return x != to }) {
			t.Errorf("keyword search with %+v = %v", f, u)
		}
		res, err := s.VectorSearch(ctx, queryVector(t, "cat sleeps hunts mice"), 10, f)
		if u := uris(t, s, res); err != nil || len(u) == 0 || slices.ContainsFunc(u, func(x string) bool { return x != to }) {
			t.Errorf("vector search with %+v = %v, %v", f, u, err)
		}
	}
	renamed := slices.Clone(c)
	renamed[0] = Source(to, doc.TypeFile, "Cats", c[0].Content)
	matchReference(t, s, renamed, "cat mice", "after rename")
	list, err := s.Sources(ctx, store.ListOptions{})
	if err != nil || len(list) != len(c) || list[0].URI != to {
		t.Errorf("Sources after rename = %v, %v (want %d, ordered by URI)", list, err, len(c))
	}

	// Deleting by the new ID removes chunks, postings and vectors.
	if n, err := s.Delete(ctx, []string{got.ID}); err != nil || n != 1 {
		t.Fatalf("Delete renamed = %d, %v", n, err)
	}
	matchReference(t, s, c[1:], "cat mice", "after deleting the renamed source")
	st, err := s.Stats(ctx)
	if err != nil || st.Sources != len(c)-1 || st.Vectors != st.Chunks {
		t.Errorf("after delete: %+v, %v", st, err)
	}
	res, _ := s.VectorSearch(ctx, queryVector(t, "cat sleeps hunts mice"), 100, store.Filter{})
	if slices.Contains(uris(t, s, res), to) {
		t.Error("the deleted renamed source's vectors are still searched")
	}
}

// testRenameRefused: unknown sources and taken URIs are refused and change
// nothing; renaming to the same URI is a no-op.
func testRenameRefused(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustReplace(t, s, corpus()...)
	before := snapshot(t, s)
	if _, err := s.RenameSource(ctx, "no-such-id", "docs/x.md"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RenameSource(unknown) = %v, want ErrNotFound", err)
	}
	if _, err := s.RenameSource(ctx, doc.SourceID("docs/cats.md"), "docs/dogs.md"); !errors.Is(err, store.ErrExists) {
		t.Errorf("RenameSource onto a taken URI = %v, want ErrExists", err)
	}
	same, err := s.RenameSource(ctx, doc.SourceID("docs/cats.md"), "docs/cats.md")
	if err != nil || same.URI != "docs/cats.md" {
		t.Errorf("RenameSource to its own URI = %+v, %v", same, err)
	}
	if after := snapshot(t, s); !reflect.DeepEqual(after, before) {
		t.Errorf("refused renames changed the index:\n%s\nwas\n%s", after, before)
	}
}

package main

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
)

// build indexes the same 40 documents into a new index, batchBytes of
// content per write (1: every document its own batch and segment, merged
// eight at a time), and returns its path.
func build(t *testing.T, batchBytes int) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "i.db")
	st, err := sqlite.Open(ctx, path, sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var docs []doc.Document
	for i := range 40 {
		text := fmt.Sprintf("# Part %d\n\nIndexing writes postings of terms such as alpha%d and shared words.\n\n## More\n\nSegments merge eight at a time.\n", i, i%7)
		docs = append(docs, doc.Document{URI: fmt.Sprintf("mem:%02d.md", i), Title: fmt.Sprint("Doc ", i), Format: doc.FormatMarkdown, Content: text})
	}
	if _, err := index.New(st, index.Options{BatchBytes: batchBytes}).Documents(ctx, docs); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCompareIgnoresBatchingButNotContent(t *testing.T) {
	ctx := context.Background()
	one, many := build(t, 0), build(t, 1)
	diffs, err := compare(ctx, one, many)
	if err != nil || len(diffs) != 0 {
		t.Fatalf("one batch and one batch per document compare as %q, %v; want the same content", diffs, err)
	}
	db, err := sql.Open("sqlite", "file:"+many)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var segs int
	if err := db.QueryRow(`SELECT COUNT(*) FROM segments`).Scan(&segs); err != nil || segs < 2 {
		t.Fatalf("%d segments (%v): the per-document index should have several", segs, err)
	}
	for _, tc := range []struct{ change, want string }{
		{`UPDATE chunks SET text = 'x' WHERE id = (SELECT MIN(id) FROM chunks)`, "chunks:"},
		{`UPDATE content_blocks SET data = x'00' WHERE rowid = (SELECT MIN(rowid) FROM content_blocks)`, "contents:"},
		{`DELETE FROM postings WHERE term = 'alpha3'`, `postings: "alpha3" only in A`},
		{`UPDATE sources SET title = 'other' WHERE uri = 'mem:05.md'`, "sources:"},
	} {
		if _, err := db.Exec(tc.change); err != nil {
			t.Fatal(err)
		}
		diffs, err := compare(ctx, one, many)
		if err != nil || !strings.Contains(strings.Join(diffs, "\n"), tc.want) {
			t.Errorf("after %s: %q, %v; want a line with %q", tc.change, diffs, err, tc.want)
		}
	}
}

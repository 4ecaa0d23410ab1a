package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/chunk"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/internal/sqlrows"
	"github.com/sagasu-dev/sagasu/internal/store/storetest"
)

// openTemp opens a new index in a temporary folder, closed when t ends.
func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := openDriver(context.Background(), filepath.Join(t.TempDir(), "s.db"), Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// chunkedDocs are documents of every format the chunkers know, each split
// by its chunker: small files from the chunker's testdata and large ones
// of several content blocks (with multi-byte text across block edges).
func chunkedDocs(t *testing.T) []store.SourceData {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", "chunk", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	var bigText, bigMD, bigGo, bigPy strings.Builder
	for i := range 400 {
		fmt.Fprintf(&bigText, "%d. %s\n日本語の段落 %d です。検索の索引は本文を一度だけ保存します。\n\n", i, read("essay.txt"), i)
		fmt.Fprintf(&bigMD, "## Part %d\n\n%s\n\n| a | b |\n|---|---|\n| %d | 表 |\n\n```go\nx := %d\n```\n\n", i, read("guide.md"), i, i)
		fmt.Fprintf(&bigPy, "# block %d\n%s\n", i, read("tasks.py"))
	}
	bigGo.WriteString("// Package big is generated.\npackage big\n\n")
	for i := range 3000 {
		fmt.Fprintf(&bigGo, "// F%d returns its number; 番号 %d.\nfunc F%d() int {\n\tx := %d\n\treturn x\n}\n\n", i, i, i, i)
	}
	docs := []doc.Document{
		{URI: "essay.txt", Format: doc.FormatText, Content: read("essay.txt")},
		{URI: "guide.md", Format: doc.FormatMarkdown, Content: read("guide.md")},
		{URI: "store.go", Format: doc.FormatGo, Content: read("store.go")},
		{URI: "tasks.py", Format: doc.FormatCode, Lang: "python", Content: read("tasks.py")},
		{URI: "big.txt", Format: doc.FormatText, Content: bigText.String()},
		{URI: "big.md", Format: doc.FormatMarkdown, Content: bigMD.String()},
		{URI: "big.go", Format: doc.FormatGo, Content: bigGo.String()},
		{URI: "big.py", Format: doc.FormatCode, Lang: "python", Content: bigPy.String()},
	}
	var out []store.SourceData
	for _, d := range docs {
		d.Type, d.Title = doc.TypeFile, d.URI
		cs, err := chunk.Split(d, chunk.Options{MaxTokens: 200})
		if err != nil {
			t.Fatalf("split %s: %v", d.URI, err)
		}
		out = append(out, store.SourceData{
			Source: doc.Source{ID: doc.SourceID(d.URI), URI: d.URI, Type: d.Type, Format: d.Format,
				Title: d.Title, ContentHash: doc.ContentHash(d.Content)},
			Content: d.Content,
			Chunks:  cs,
		})
	}
	return out
}

// checkStored asserts that the store gives back every content and chunk text
// of sds exactly, by Content, Chunks, Hits and EachChunk.
func checkStored(t *testing.T, s *Store, sds []store.SourceData) {
	t.Helper()
	ctx := context.Background()
	byID := map[int64]doc.Chunk{}
	var ids []int64
	for _, sd := range sds {
		got, err := s.Content(ctx, sd.Source.ID)
		if err != nil || got != sd.Content {
			t.Errorf("Content(%s): %d bytes, %v; want the %d bytes stored", sd.Source.URI, len(got), err, len(sd.Content))
		}
		cs, err := s.Chunks(ctx, sd.Source.ID)
		if err != nil || len(cs) != len(sd.Chunks) {
			t.Fatalf("Chunks(%s): %d, %v; want %d", sd.Source.URI, len(cs), err, len(sd.Chunks))
		}
		for i, c := range cs {
			if c.Text != sd.Chunks[i].Text {
				t.Errorf("%s chunk %d [%d,%d): text %q, want %q", sd.Source.URI, i, c.StartByte, c.EndByte, c.Text, sd.Chunks[i].Text)
			}
			byID[c.ID] = sd.Chunks[i]
			ids = append(ids, c.ID)
		}
	}
	hits, err := s.Hits(ctx, ids)
	if err != nil || len(hits) != len(ids) {
		t.Fatalf("Hits(all %d chunks): %d, %v", len(ids), len(hits), err)
	}
	for i, h := range hits {
		if h.Chunk.ID != ids[i] || h.Chunk.Text != byID[ids[i]].Text {
			t.Errorf("hit %d (chunk %d): text %q, want %q", i, h.Chunk.ID, h.Chunk.Text, byID[ids[i]].Text)
		}
	}
	seen := 0
	err = s.EachChunk(ctx, func(c doc.Chunk, _ string) error {
		seen++
		if want, ok := byID[c.ID]; !ok || c.Text != want.Text {
			t.Errorf("EachChunk: chunk %d text %q, want %q", c.ID, c.Text, want.Text)
		}
		return nil
	})
	if err != nil || seen != len(ids) {
		t.Errorf("EachChunk saw %d chunks, %v; want %d", seen, err, len(ids))
	}
}

// TestChunkersStoreSpans checks that every chunker's chunks are stored as
// spans of the content (no second copy of the text), and that every read
// path returns the chunker's text exactly, across block edges too.
func TestChunkersStoreSpans(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	sds := chunkedDocs(t)
	if err := s.Replace(ctx, sds); err != nil {
		t.Fatal(err)
	}
	for _, sd := range sds {
		var chunks, texts, blocks, biggest int
		s.db.QueryRow(`SELECT COUNT(*), COUNT(text) FROM chunks WHERE source_id = ?`, sd.Source.ID).Scan(&chunks, &texts)
		s.db.QueryRow(`SELECT COUNT(*), COALESCE(MAX(length(data)), 0) FROM content_blocks WHERE source_id = ?`, sd.Source.ID).Scan(&blocks, &biggest)
		if chunks != len(sd.Chunks) || texts != 0 {
			t.Errorf("%s: %d chunks of which %d keep their own text; want %d, none (every chunker's text is its span)", sd.Source.URI, chunks, texts, len(sd.Chunks))
		}
		if want := (len(sd.Content) + blockSize - 1) / blockSize; blocks != want || biggest > blockSize {
			t.Errorf("%s (%d bytes): %d blocks, largest %d bytes; want %d of at most %d", sd.Source.URI, len(sd.Content), blocks, biggest, want, blockSize)
		}
	}
	var big store.SourceData
	for _, sd := range sds {
		if sd.Source.URI == "big.md" {
			big = sd
		}
	}
	if len(big.Content) < 3*blockSize {
		t.Fatalf("big.md is %d bytes: the test needs several blocks", len(big.Content))
	}
	checkStored(t, s, sds)

	// Deleting a source finds its chunks' terms from the spans: nothing of
	// it stays searchable, the rest still is.
	if n, err := s.Delete(ctx, []string{big.Source.ID}); err != nil || n != 1 {
		t.Fatalf("Delete(big.md) = %d, %v", n, err)
	}
	var blocks int
	s.db.QueryRow(`SELECT COUNT(*) FROM content_blocks WHERE source_id = ?`, big.Source.ID).Scan(&blocks)
	if blocks != 0 {
		t.Errorf("%d content blocks of a deleted source remain", blocks)
	}
	res, err := s.KeywordSearch(ctx, storetest.Terms("guide"), 100, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if h, _ := s.Hits(ctx, []int64{r.ChunkID}); len(h) != 1 || h[0].Source.URI == "big.md" {
			t.Errorf("after deleting big.md, search finds %+v", h)
		}
	}
	if len(res) == 0 {
		t.Errorf("after deleting big.md, guide.md is no longer found")
	}
}

// TestChunkTextNotASpan covers chunks a caller made whose text is not the
// span of the content they name: they keep their own text.
func TestChunkTextNotASpan(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	sd := storetest.Source("a.md", "file", "A", "first part\n\nsecond part\n\nthird part")
	sd.Chunks[0].Text = "rewritten first"                                         // not the span
	sd.Chunks[1].StartByte, sd.Chunks[1].EndByte = 1000, 1011                     // beyond the content
	sd.Chunks[2].StartByte, sd.Chunks[2].EndByte = 5, 2                           // reversed
	empty := storetest.Source("e.md", "file", "E", "")                            // no content at all
	empty.Chunks = []doc.Chunk{{Text: "orphan words", StartByte: 0, EndByte: 12}} // span outside ""
	sds := []store.SourceData{sd, empty}
	if err := s.Replace(ctx, sds); err != nil {
		t.Fatal(err)
	}
	var own int
	s.db.QueryRow(`SELECT COUNT(text) FROM chunks`).Scan(&own)
	if own != 4 {
		t.Errorf("%d chunks keep their own text; want 4", own)
	}
	checkStored(t, s, sds)
	if res, err := s.KeywordSearch(ctx, storetest.Terms("rewritten"), 5, store.Filter{}); err != nil || len(res) != 1 {
		t.Errorf("search for a chunk's own text = %v, %v", res, err)
	}
	if n, err := s.Delete(ctx, []string{sd.Source.ID, empty.Source.ID}); err != nil || n != 2 {
		t.Errorf("Delete = %d, %v", n, err)
	}
	if res, err := s.KeywordSearch(ctx, storetest.Terms("orphan"), 5, store.Filter{}); err != nil || len(res) != 0 {
		t.Errorf("search after delete = %v, %v; want nothing", res, err)
	}
}

// TestUpgradeFromSchema4 writes an index as schema 4 stored it (content
// whole, every chunk's text copied; postings from a current index, whose
// format did not change), upgrades it, and compares every content and
// chunk text with what was stored, and every search with the fresh index.
func TestUpgradeFromSchema4(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sds := chunkedDocs(t)
	odd := storetest.Source("odd.md", "file", "Odd", "alpha beta\n\ngamma delta")
	odd.Chunks[1].Text = "not the span"
	sds = append(sds, odd, storetest.Source("empty.md", "file", "Empty", ""))

	fresh, err := openDriver(ctx, filepath.Join(dir, "fresh.db"), Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if err := fresh.Replace(ctx, sds); err != nil {
		t.Fatal(err)
	}

	terms := map[int]int{}
	rows, err := fresh.db.Query(`SELECT id, terms FROM chunks`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, n int
		rows.Scan(&id, &n)
		terms[id] = n
	}
	rows.Close()

	path := filepath.Join(dir, "old.db")
	old, err := openDriver(ctx, path, Options{Create: true, schema: 4})
	if err != nil {
		t.Fatal(err)
	}
	id := 0
	for _, sd := range sds {
		src := sd.Source
		mustExec(t, old, `INSERT INTO sources(id, uri, type, format, title, hash, size, chunks, indexed_at) VALUES(?,?,?,?,?,?,?,?,?)`,
			src.ID, src.URI, string(src.Type), string(src.Format), src.Title, src.ContentHash, len(sd.Content), len(sd.Chunks), 1)
		mustExec(t, old, `INSERT INTO contents(source_id, content) VALUES(?,?)`, src.ID, sd.Content)
		for j, c := range sd.Chunks {
			id++
			mustExec(t, old, `INSERT INTO chunks(id, source_id, idx, text, heading, start_line, end_line, start_byte, end_byte, tokens, terms, chash) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)`,
				id, src.ID, j, c.Text, sqlrows.HeadingJSON(c.Heading), c.StartLine, c.EndLine, c.StartByte, c.EndByte, c.Tokens, terms[id], fmt.Sprintf("h%d", id))
		}
	}
	// Chunks deleted before the upgrade had higher IDs: new ones must not
	// reuse them.
	mustExec(t, old, `UPDATE sqlite_sequence SET seq = ? WHERE name = 'chunks'`, id+50)
	copyRows(t, fresh, old, "postings", "term, seg, n, data")
	copyRows(t, fresh, old, "segments", "seg, docs, ttokens, htokens, tokens")
	copyRows(t, fresh, old, "termless_chunks", "id, seg")
	old.Close()

	s, err := openDriver(ctx, path, Options{})
	if err != nil {
		t.Fatalf("open an index of schema 4: %v", err)
	}
	defer s.Close()
	var v, own, leftover int
	s.db.QueryRow(`PRAGMA user_version`).Scan(&v)
	s.db.QueryRow(`SELECT COUNT(text) FROM chunks`).Scan(&own)
	s.db.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE name IN ('contents', 'chunks_v5', 'postings_v5')`).Scan(&leftover)
	if v != SchemaVersion || own != 1 || leftover != 0 {
		t.Errorf("after upgrade: schema %d, %d chunks with own text, %d old tables; want %d, 1, 0", v, own, leftover, SchemaVersion)
	}
	checkStored(t, s, sds)
	var chash string
	s.db.QueryRow(`SELECT chash FROM chunks WHERE id = 3`).Scan(&chash)
	if chash != "h3" {
		t.Errorf("chunk 3's hash after upgrade = %q, want h3", chash)
	}
	for _, q := range []string{"guide", "番号", "gamma", "span", "return", "段落"} {
		want, err1 := fresh.KeywordSearch(ctx, storetest.Terms(q), 20, store.Filter{})
		got, err2 := s.KeywordSearch(ctx, storetest.Terms(q), 20, store.Filter{})
		if err1 != nil || err2 != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("search %q after upgrade = %v, %v; the fresh index gives %v, %v", q, got, err2, want, err1)
		}
	}
	if err := s.Replace(ctx, []store.SourceData{storetest.Source("new.md", "file", "New", "after the upgrade")}); err != nil {
		t.Fatal(err)
	}
	var newID int64
	s.db.QueryRow(`SELECT MIN(id) FROM chunks WHERE source_id = ?`, doc.SourceID("new.md")).Scan(&newID)
	if newID <= int64(id+50) {
		t.Errorf("a chunk written after the upgrade got ID %d, at or below the old sequence %d", newID, id+50)
	}
}

// copyRows copies a table's rows from one store's file to another's.
func copyRows(t *testing.T, from, to *Store, table, cols string) {
	t.Helper()
	rows, err := from.db.Query(`SELECT ` + cols + ` FROM ` + table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := len(strings.Split(cols, ","))
	for rows.Next() {
		vals := make([]any, n)
		ptrs := make([]any, n)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		mustExec(t, to, `INSERT INTO `+table+`(`+cols+`) VALUES(`+placeholders(n)+`)`, vals...)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestLargeWriteLeavesSmallWAL writes a source larger than the WAL limit
// and checks the WAL beside the index is cut back while the store is open.
func TestLargeWriteLeavesSmallWAL(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	// Hex digits of a simple generator: text that compresses only about 2x.
	var b strings.Builder
	b.WriteString("hello words\n")
	x := uint64(1)
	for b.Len() < 3*walLimit {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		fmt.Fprintf(&b, "%016x\n", x)
	}
	content := b.String()
	sd := store.SourceData{
		Source:  doc.Source{ID: doc.SourceID("big.txt"), URI: "big.txt", Type: doc.TypeFile, Format: doc.FormatText, ContentHash: doc.ContentHash(content)},
		Content: content,
		Chunks:  []doc.Chunk{{Text: "hello words", StartByte: 0, EndByte: 11, StartLine: 1, EndLine: 1}},
	}
	if err := s.Replace(ctx, []store.SourceData{sd}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(s.Path() + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > walLimit {
		t.Errorf("WAL after writing %d MB: %d MB, want at most %d MB", len(content)>>20, fi.Size()>>20, walLimit>>20)
	}
	if got, err := s.Content(ctx, sd.Source.ID); err != nil || got != content {
		t.Errorf("Content of the large source: %d bytes, %v; want %d", len(got), err, len(content))
	}
}

// TestConcurrentSpanReads reads chunk texts and contents from several
// goroutines while another writes: the store's one compressor and
// decompressor serve them all.
func TestConcurrentSpanReads(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	sds := chunkedDocs(t)
	if err := s.Replace(ctx, sds[:4]); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, sd := range sds[4:] {
			if err := s.Replace(ctx, []store.SourceData{sd}); err != nil {
				errs <- err
				return
			}
		}
	})
	for range 3 {
		wg.Go(func() {
			for range 20 {
				for _, sd := range sds[:4] {
					cs, err := s.Chunks(ctx, sd.Source.ID)
					if err != nil || len(cs) != len(sd.Chunks) {
						errs <- fmt.Errorf("Chunks(%s) = %d, %v", sd.Source.URI, len(cs), err)
						return
					}
					for i, c := range cs {
						if c.Text != sd.Chunks[i].Text {
							errs <- fmt.Errorf("%s chunk %d: %q, want %q", sd.Source.URI, i, c.Text, sd.Chunks[i].Text)
							return
						}
					}
					if got, err := s.Content(ctx, sd.Source.ID); err != nil || got != sd.Content {
						errs <- fmt.Errorf("Content(%s): %d bytes, %v", sd.Source.URI, len(got), err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	checkStored(t, s, sds)
}

// TestFailedUpgradeLeavesOldIndex makes the upgrade to schema 5 fail at its
// last step, after all content is copied (a view on the old chunks table
// stops the rename), and checks the index is left exactly as it was, then
// upgrades once the obstacle is gone: one transaction, old state or new.
func TestFailedUpgradeLeavesOldIndex(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	old, err := openDriver(ctx, path, Options{Create: true, schema: 4})
	if err != nil {
		t.Fatal(err)
	}
	sd := storetest.Source("a.md", "file", "A", "kept words\n\nmore words")
	mustExec(t, old, `INSERT INTO sources(id, uri, type, format, title, hash, size, chunks, indexed_at) VALUES(?,?,?,?,?,?,?,?,?)`,
		sd.Source.ID, sd.Source.URI, "file", "text", "A", sd.Source.ContentHash, len(sd.Content), len(sd.Chunks), 1)
	mustExec(t, old, `INSERT INTO contents(source_id, content) VALUES(?,?)`, sd.Source.ID, sd.Content)
	for j, c := range sd.Chunks {
		mustExec(t, old, `INSERT INTO chunks(id, source_id, idx, text, heading, start_line, end_line, start_byte, end_byte, tokens, terms, chash) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)`,
			j+1, sd.Source.ID, j, c.Text, "[]", c.StartLine, c.EndLine, c.StartByte, c.EndByte, c.Tokens, 2, "h")
	}
	mustExec(t, old, `CREATE VIEW chunk_texts AS SELECT text FROM chunks`)
	old.Close()

	s, err := openDriver(ctx, path, Options{})
	if err == nil {
		s.Close()
		t.Fatal("the upgrade succeeded despite the view; the test needs it to fail")
	}
	if !strings.Contains(err.Error(), "RENAME") {
		t.Fatalf("the upgrade failed with %v; the test needs it to fail at the rename, its last step", err)
	}
	old, err = openDriver(ctx, path, Options{schema: 4})
	if err != nil {
		t.Fatal(err)
	}
	var v, tables int
	var content, text string
	old.db.QueryRow(`PRAGMA user_version`).Scan(&v)
	old.db.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE name IN ('content_blocks', 'chunks_v5', 'postings_v5')`).Scan(&tables)
	old.db.QueryRow(`SELECT content FROM contents`).Scan(&content)
	old.db.QueryRow(`SELECT group_concat(text, '|') FROM (SELECT text FROM chunks ORDER BY id)`).Scan(&text)
	if v != 4 || tables != 0 || content != sd.Content || text != "kept words|more words" {
		t.Errorf("after a failed upgrade: schema %d, %d new tables, content %q, chunk texts %q; want schema 4 as it was", v, tables, content, text)
	}
	mustExec(t, old, `DROP VIEW chunk_texts`)
	old.Close()

	s, err = openDriver(ctx, path, Options{})
	if err != nil {
		t.Fatalf("upgrade once the view is gone: %v", err)
	}
	defer s.Close()
	checkStored(t, s, []store.SourceData{sd})
}

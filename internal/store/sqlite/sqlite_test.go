package sqlite

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/bm25"
	"github.com/sagasu-dev/sagasu/internal/store/internal/sqlrows"
	"github.com/sagasu-dev/sagasu/internal/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := openDriver(context.Background(), filepath.Join(t.TempDir(), "idx", "sagasu.db"), Options{Create: true})
		if err != nil {
			t.Fatal(err)
		}
		return store.New(s)
	})
}

func TestConformanceWithVectorCache(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := openDriver(context.Background(), filepath.Join(t.TempDir(), "sagasu.db"), Options{Create: true, CacheVectors: true})
		if err != nil {
			t.Fatal(err)
		}
		return store.New(s)
	})
}

func TestVectorCacheSeesOtherWriters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v.db")
	reader, err := openDriver(ctx, path, Options{Create: true, CacheVectors: true})
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	writer, err := openDriver(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	if err := writer.InitVectors(ctx, 2); err != nil {
		t.Fatal(err)
	}
	put := func(uri string, v []float32) {
		sd := storetest.Source(uri, "file", "", "text of "+uri)
		sd.Vectors = [][]float32{v}
		if err := writer.Replace(ctx, []store.SourceData{sd}); err != nil {
			t.Fatal(err)
		}
	}
	put("a.md", []float32{1, 0})
	res, err := reader.VectorSearch(ctx, []float32{0, 1}, 1, store.Filter{})
	if err != nil || len(res) != 1 {
		t.Fatalf("first search: %v, %v", res, err)
	}
	first := res[0].ChunkID
	put("b.md", []float32{0, 1}) // written by another connection after the cache was built
	res, err = reader.VectorSearch(ctx, []float32{0, 1}, 1, store.Filter{})
	if err != nil || len(res) != 1 || res[0].ChunkID == first || res[0].Score < 0.999 {
		t.Errorf("cache did not see the other writer's vector: %v, %v", res, err)
	}
	if _, err := writer.Delete(ctx, []string{doc.SourceID("b.md")}); err != nil {
		t.Fatal(err)
	}
	res, err = reader.VectorSearch(ctx, []float32{0, 1}, 1, store.Filter{})
	if err != nil || len(res) != 1 || res[0].ChunkID != first {
		t.Errorf("cache did not see the other writer's delete: %v, %v", res, err)
	}
}

func TestOpenRefusesWhatIsNotAnIndex(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()

	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("just some notes, not a database at all"), 0o644)
	_, err := openDriver(ctx, text, Options{Create: true})
	if !errors.Is(err, store.ErrForeign) || !strings.Contains(err.Error(), "not a SQLite database") {
		t.Errorf("openDriver(text file) = %v, want ErrForeign naming the problem", err)
	}
	if b, _ := os.ReadFile(text); string(b) != "just some notes, not a database at all" {
		t.Errorf("Open modified a foreign file")
	}

	other := filepath.Join(dir, "other.db")
	db, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers(name) VALUES('ada')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = openDriver(ctx, other, Options{Create: true})
	if !errors.Is(err, store.ErrForeign) || !strings.Contains(err.Error(), "another program") {
		t.Errorf("openDriver(another program's SQLite db) = %v, want ErrForeign", err)
	}
	db, _ = sql.Open("sqlite", other)
	var name string
	if err := db.QueryRow(`SELECT name FROM customers`).Scan(&name); err != nil || name != "ada" {
		t.Errorf("foreign database damaged: %q, %v", name, err)
	}
	db.Close()

	corrupt := filepath.Join(dir, "corrupt.db")
	junk := append([]byte("SQLite format 3\x00"), []byte(strings.Repeat("\xff\x13garbage", 600))...)
	os.WriteFile(corrupt, junk, 0o644)
	if _, err := openDriver(ctx, corrupt, Options{Create: true}); err == nil {
		t.Errorf("openDriver(corrupt file) succeeded")
	}

	if _, err := openDriver(ctx, filepath.Join(dir, "missing.db"), Options{}); !errors.Is(err, ErrNoIndex) || !strings.Contains(err.Error(), "sagasu index") {
		t.Errorf("openDriver(missing, no create) = %v, want ErrNoIndex telling to run sagasu index", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open without Create created a file")
	}
	if _, err := openDriver(ctx, dir, Options{Create: true}); err == nil || !strings.Contains(err.Error(), "folder") {
		t.Errorf("openDriver(folder) = %v, want an error saying it is a folder", err)
	}
}

func TestOpenRefusesNewerSchemaAndOtherAnalyzer(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := openDriver(ctx, path, Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetMeta(ctx, metaAnalyzer, "0-old"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := openDriver(ctx, path, Options{}); err == nil || !strings.Contains(err.Error(), "built by analyzer") {
		t.Errorf("openDriver(index of another analyzer) = %v", err)
	}

	path2 := filepath.Join(t.TempDir(), "s.db")
	s, _ = openDriver(ctx, path2, Options{Create: true})
	s.db.Exec(`PRAGMA user_version = 999`)
	s.Close()
	if _, err := openDriver(ctx, path2, Options{}); !errors.Is(err, store.ErrTooNew) {
		t.Errorf("openDriver(newer schema) = %v, want ErrTooNew", err)
	}
}

func TestUpgradeFromSchema1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	old, err := openDriver(ctx, path, Options{Create: true, schema: 1})
	if err != nil {
		t.Fatal(err)
	}
	old.Close()
	s, err := openDriver(ctx, path, Options{})
	if err != nil {
		t.Fatalf("open an index of schema 1: %v", err)
	}
	defer s.Close()
	var v int
	if err := s.db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil || v != SchemaVersion {
		t.Errorf("schema after upgrade = %d, %v; want %d", v, err, SchemaVersion)
	}
	if err := s.Replace(ctx, []store.SourceData{storetest.Source("a.md", "file", "A", "upgraded words")}); err != nil {
		t.Fatal(err)
	}
	if res, err := s.KeywordSearch(ctx, storetest.Terms("upgraded"), 5, store.Filter{}); err != nil || len(res) != 1 {
		t.Errorf("search of an index upgraded from schema 1 = %v, %v", res, err)
	}
}

// TestUpgradeRebuildsKeywordIndex opens an index whose keyword index is in
// the format before BM25F (schema 3, written here as that sagasu wrote it)
// and checks the upgrade rebuilt it to rank as a new index does.
func TestUpgradeRebuildsKeywordIndex(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	old, err := openDriver(ctx, path, Options{Create: true, schema: 3})
	if err != nil {
		t.Fatal(err)
	}
	li := storetest.Legacy()
	id := 0
	for _, sd := range li.Sources {
		src := sd.Source
		mustExec(t, old, `INSERT INTO sources(id, uri, type, format, title, hash, size, chunks, indexed_at) VALUES(?,?,?,?,?,?,?,?,?)`,
			src.ID, src.URI, string(src.Type), string(src.Format), src.Title, src.ContentHash, len(sd.Content), len(sd.Chunks), 1)
		mustExec(t, old, `INSERT INTO contents(source_id, content) VALUES(?,?)`, src.ID, sd.Content)
		for j, c := range sd.Chunks {
			id++
			mustExec(t, old, `INSERT INTO chunks(id, source_id, idx, text, heading, start_line, end_line, start_byte, end_byte, tokens, terms, chash) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)`,
				id, src.ID, j, c.Text, sqlrows.HeadingJSON(c.Heading), c.StartLine, c.EndLine, c.StartByte, c.EndByte, c.Tokens, li.Lengths[id-1], "h")
		}
	}
	for term, data := range li.Postings {
		mustExec(t, old, `INSERT INTO postings(term, seg, n, data) VALUES(?,1,?,?)`, term, li.Counts[term], data)
	}
	mustExec(t, old, `INSERT INTO segments(seg, docs, tokens) VALUES(1,?,?)`, li.Docs, li.Tokens)
	old.Close()
	storetest.UpgradeRebuilt(t, func(t *testing.T) store.Store {
		s, err := openDriver(ctx, path, Options{})
		if err != nil {
			t.Fatalf("open an index of schema 3: %v", err)
		}
		if p, err := s.Meta(ctx, bm25.MetaKey); err != nil || p != bm25.DefaultParams().String() {
			t.Errorf("scoring pinned by the upgrade = %q, %v; want %q", p, err, bm25.DefaultParams().String())
		}
		return store.New(s)
	})
}

func mustExec(t *testing.T, s *Store, q string, args ...any) {
	t.Helper()
	if _, err := s.db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func TestReopenKeepsData(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := openDriver(ctx, path, Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Replace(ctx, []store.SourceData{storetest.Source("a.md", "file", "A", "persistent words")}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = openDriver(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.KeywordSearch(ctx, storetest.Terms("persistent"), 5, store.Filter{})
	if err != nil || len(res) != 1 {
		t.Errorf("after reopen: %v, %v", res, err)
	}
}

// TestLargeBatchesAndMerges writes enough distinct terms that multi-row
// statements fill up and segment merges work through many term ranges, then
// checks every term is found exactly where it was written.
func TestLargeBatchesAndMerges(t *testing.T) {
	ctx := context.Background()
	s, err := openDriver(ctx, filepath.Join(t.TempDir(), "big.db"), Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	word := func(i, j int) string { return fmt.Sprintf("w%dx%d", i, j) }
	const sources, words = 40, 90
	for i := 0; i < sources; i++ {
		var b strings.Builder
		for j := 0; j < words; j++ {
			b.WriteString(word(i, j) + " shared ")
		}
		if err := s.Replace(ctx, []store.SourceData{storetest.Source(fmt.Sprintf("s%02d.txt", i), "file", "", b.String())}); err != nil {
			t.Fatal(err)
		}
	}
	var segs int
	s.db.QueryRow(`SELECT COUNT(*) FROM segments`).Scan(&segs)
	if segs >= sources {
		t.Errorf("%d segments after %d writes: nothing was merged", segs, sources)
	}
	for _, i := range []int{0, 7, 39} {
		for _, j := range []int{0, 45, 89} {
			res, err := s.KeywordSearch(ctx, storetest.Terms(word(i, j)), 5, store.Filter{})
			if err != nil || len(res) != 1 {
				t.Fatalf("term %s: %v, %v; want exactly one chunk", word(i, j), res, err)
			}
			hits, _ := s.Hits(ctx, []int64{res[0].ChunkID})
			if len(hits) != 1 || hits[0].Source.URI != fmt.Sprintf("s%02d.txt", i) {
				t.Errorf("term %s found in %+v", word(i, j), hits)
			}
		}
	}
	df, n, err := s.DocFreq(ctx, storetest.Terms("shared"))
	if err != nil || n != sources || df["share"]+df["shared"] != sources {
		t.Errorf("DocFreq(shared) = %v of %d, %v; want %d", df, n, err, sources)
	}
	// Each unique word lives in exactly one row (merged rows were deleted),
	// and every remaining row belongs to a live segment.
	var rows, orphans int
	s.db.QueryRow(`SELECT COUNT(*) FROM postings WHERE term LIKE 'w%x%'`).Scan(&rows)
	s.db.QueryRow(`SELECT COUNT(*) FROM postings WHERE seg NOT IN (SELECT seg FROM segments)`).Scan(&orphans)
	if rows != sources*words || orphans != 0 {
		t.Errorf("%d rows for %d unique words, %d rows of merged-away segments", rows, sources*words, orphans)
	}
}

// TestAppendSurvivesKill kills a process right after AppendEvents returned:
// the event must be in the index when it is opened again.
func TestAppendSurvivesKill(t *testing.T) {
	ctx := context.Background()
	if path := os.Getenv("SAGASU_TEST_APPEND_CHILD"); path != "" {
		s, err := Open(ctx, path, Options{Create: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.CreateRun(ctx, store.Run{ID: "killed", Kind: store.RunAgent}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AppendEvents(ctx, "killed", []store.Event{{Type: "step", Data: json.RawMessage(`{"n":1}`)}}); err != nil {
			t.Fatal(err)
		}
		fmt.Println("appended")
		time.Sleep(time.Hour) // killed by the parent
		return
	}
	path := filepath.Join(t.TempDir(), "s.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestAppendSurvivesKill$")
	cmd.Env = append(os.Environ(), "SAGASU_TEST_APPEND_CHILD="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	appended := false
	for !appended && sc.Scan() {
		appended = sc.Text() == "appended"
	}
	cmd.Process.Kill()
	cmd.Wait()
	if !appended {
		t.Fatalf("the child process did not append")
	}
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, err := s.Events(ctx, "killed", 0)
	if err != nil || len(evs) != 1 || evs[0].Seq != 1 || string(evs[0].Data) != `{"n":1}` {
		t.Errorf("after the writer was killed, Events = %+v, %v; want the appended event", evs, err)
	}
}

// An index scores with the parameters pinned in it, not with this build's
// defaults, and refuses parameters it cannot read.
func TestKeywordScoringUsesPinnedParameters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := openDriver(ctx, path, Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Replace(ctx, []store.SourceData{
		storetest.Source("a.md", "file", "Theme", "one word here"),
		storetest.Source("b.md", "file", "Other", "theme and theme again"),
	})
	if err != nil {
		t.Fatal(err)
	}
	top := func(s *Store) string {
		t.Helper()
		res, err := s.KeywordSearch(ctx, storetest.Terms("theme"), 1, store.Filter{})
		if err != nil || len(res) != 1 {
			t.Fatalf("KeywordSearch = %v, %v", res, err)
		}
		hits, err := s.Hits(ctx, []int64{res[0].ChunkID})
		if err != nil || len(hits) != 1 {
			t.Fatalf("Hits = %v, %v", hits, err)
		}
		return hits[0].Source.URI
	}
	if got := top(s); got != "a.md" {
		t.Errorf("with the default weights the title match should win, got %s", got)
	}
	flat := "bm25f/1 k1=1.2 w=1,1,1 b=0,0,0 prox=0 hprox=0 top=20"
	if err := s.SetMeta(ctx, bm25.MetaKey, flat); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = openDriver(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := top(s); got != "b.md" {
		t.Errorf("with pinned equal weights two body mentions should beat one title mention, got %s", got)
	}
	if err := s.SetMeta(ctx, bm25.MetaKey, "bm25f/9 k1=2"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := openDriver(ctx, path, Options{}); err == nil || !strings.Contains(err.Error(), "keyword scoring") || !strings.Contains(err.Error(), "upgrade sagasu") {
		t.Errorf("Open with unreadable scoring parameters = %v, want an error naming them and what to do", err)
	}
}

// TestUpgradeAnalyzer: an index of analyzer version 1 is upgraded in place.
func TestUpgradeAnalyzer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	storetest.AnalyzerUpgrade(t, func(t *testing.T, an *analyze.Analyzer, create bool) store.Store {
		s, err := Open(context.Background(), path, Options{Create: create, Analyzer: an})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestOldAnalyzerStaysReadable: an index of analyzer version 1 that cannot
// be written (a read-only file or mount) is read with the analyzer it was
// built with, and finds what it found before.
func TestOldAnalyzerStaysReadable(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	v1 := analyze.New(analyze.Options{Version: 1})
	s, err := Open(ctx, path, Options{Create: true, Analyzer: v1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Replace(ctx, []store.SourceData{storetest.Source("ja/a.md", "file", "設定", "設定ファイルを作成します")}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = Open(ctx, path, Options{queryOnly: true})
	if err != nil {
		t.Fatalf("open a version 1 index read-only: %v", err)
	}
	defer s.Close()
	if got := analyzerOf(s).Signature(); got != "analyze/1" {
		t.Fatalf("a read-only version 1 index is read with %q, want analyze/1", got)
	}
	if p, err := s.Meta(ctx, metaAnalyzer); err != nil || p != "analyze/1" {
		t.Errorf("pinned analyzer = %q, %v; want it untouched", p, err)
	}
	res, err := s.KeywordSearch(ctx, analyzerOf(s).QueryTerms("設定ファイル"), 5, store.Filter{})
	if err != nil || len(res) != 1 {
		t.Errorf("search of the read-only version 1 index = %v, %v", res, err)
	}
}

// analyzerOf is the analyzer s says its keyword index is read with, through
// the Store every caller gets (nil if it does not say).
func analyzerOf(s store.Store) *analyze.Analyzer {
	if a, ok := s.(interface{ Analyzer() *analyze.Analyzer }); ok {
		return a.Analyzer()
	}
	return nil
}

// TestCancelledOpenIsNotCalledCorrupt: an open cut short by its context
// (Ctrl-C) says so, and does not tell the user the index may be corrupt
// and to move it away.
func TestCancelledOpenIsNotCalledCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	s, err := Open(t.Context(), path, Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	s, err = Open(ctx, path, Options{})
	if err == nil {
		s.Close()
		t.Fatal("open with an ended context succeeded")
	}
	if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "corrupt") {
		t.Errorf("open with an ended context: %v; want context.Canceled and no word of corruption", err)
	}
}

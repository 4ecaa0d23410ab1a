package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/migrate"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/bm25"
	"github.com/sagasu-dev/sagasu/internal/store/internal/sqlrows"
	"github.com/sagasu-dev/sagasu/internal/store/postgres/pgtest"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
	"github.com/sagasu-dev/sagasu/internal/store/storetest"
)

func testDSN(t *testing.T) string { return pgtest.ServerDSN(t) }

func freshDSN(t *testing.T) string { return pgtest.FreshDSN(t) }

func withParams(t *testing.T, dsn string, kv ...string) string {
	return pgtest.WithParams(t, dsn, kv...)
}

// rawConn is a plain connection to the server dsn names, for looking
// behind the driver's back.
func rawConn(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgtest.Connect(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func open(t *testing.T, dsn string) *Store {
	t.Helper()
	s, err := openDriver(context.Background(), dsn, Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return store.New(open(t, freshDSN(t))) })
}

func TestUpgradeFromSchema1(t *testing.T) {
	ctx := context.Background()
	dsn := freshDSN(t)
	old, err := openDriver(ctx, dsn, Options{Create: true, schema: 1})
	if err != nil {
		t.Fatal(err)
	}
	old.Close()
	s, err := openDriver(ctx, dsn, Options{})
	if err != nil {
		t.Fatalf("open an index of schema 1: %v", err)
	}
	defer s.Close()
	var v int
	if err := s.row(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&v); err != nil || v != SchemaVersion {
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
// the format before BM25F (schema 2, written here as that sagasu wrote it)
// and checks the upgrade rebuilt it to rank as a new index does.
func TestUpgradeRebuildsKeywordIndex(t *testing.T) {
	ctx := context.Background()
	dsn := freshDSN(t)
	old, err := openDriver(ctx, dsn, Options{Create: true, schema: 2})
	if err != nil {
		t.Fatal(err)
	}
	li := storetest.Legacy()
	err = old.tx(ctx, func(tx pgx.Tx) error {
		id := int64(0)
		for _, sd := range li.Sources {
			src := sd.Source
			if _, err := tx.Exec(ctx, `INSERT INTO sources(id, uri, type, format, title, hash, size, chunks, indexed_at) VALUES($1,$2,$3,$4,$5,$6,$7,$8,1)`,
				src.ID, src.URI, string(src.Type), string(src.Format), src.Title, src.ContentHash, int64(len(sd.Content)), len(sd.Chunks)); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO contents(source_id, content) VALUES($1,$2)`, src.ID, sd.Content); err != nil {
				return err
			}
			for j, c := range sd.Chunks {
				id++
				if _, err := tx.Exec(ctx, `INSERT INTO chunks(id, source_id, idx, text, heading, start_line, end_line, start_byte, end_byte, tokens, terms, chash, tsv)
					VALUES($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,'h',array_to_tsvector($12::text[]))`,
					id, src.ID, j, c.Text, sqlrows.HeadingJSON(c.Heading), c.StartLine, c.EndLine, c.StartByte, c.EndByte, c.Tokens, li.Lengths[id-1], li.Terms[id-1]); err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, `INSERT INTO chunk_segs(id, seg) VALUES($1, 1)`, id); err != nil {
					return err
				}
			}
		}
		if _, err := tx.Exec(ctx, `SELECT setval('chunk_ids', $1)`, id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT setval('segment_ids', 1)`); err != nil {
			return err
		}
		for term, data := range li.Postings {
			if _, err := tx.Exec(ctx, `INSERT INTO postings(term, seg, n, data) VALUES($1, 1, $2, $3)`, term, li.Counts[term], data); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `INSERT INTO segments(seg, docs, tokens) VALUES(1, $1, $2)`, li.Docs, li.Tokens)
		return err
	})
	if err != nil {
		t.Fatalf("write an index of schema 2: %v", err)
	}
	old.Close()
	storetest.UpgradeRebuilt(t, func(t *testing.T) store.Store {
		s, err := openDriver(ctx, dsn, Options{})
		if err != nil {
			t.Fatalf("open an index of schema 2: %v", err)
		}
		if p, err := s.Meta(ctx, bm25.MetaKey); err != nil || p != bm25.DefaultParams().String() {
			t.Errorf("scoring pinned by the upgrade = %q, %v; want %q", p, err, bm25.DefaultParams().String())
		}
		return store.New(s)
	})
}

func TestConformanceWithPagedMerges(t *testing.T) {
	// Merges that read the postings a few rows at a time must give the same index.
	storetest.Run(t, func(t *testing.T) store.Store {
		s := open(t, freshDSN(t))
		s.mergePage = 3
		return store.New(s)
	})
}

// named names hits by source URI, chunk index and score: chunk IDs differ
// between stores, those do not.
func named(t *testing.T, s store.Store, res []store.Scored) []migrate.Result {
	t.Helper()
	out, err := migrate.Named(context.Background(), s, res)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSameRankingsAndScoresAsSQLite(t *testing.T) {
	ctx := context.Background()
	pg := open(t, freshDSN(t))
	defer pg.Close()
	pg.mergePage = 7
	lite, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "s.db"), sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()

	// Many batches (so segments merge), replacements and deletes, the same
	// in both stores.
	words := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda 設定 ファイル テーマ")
	var all []store.SourceData
	for i := range 700 {
		var b strings.Builder
		for j := range 3 + i%5 {
			fmt.Fprintf(&b, "%s %s item %d. ", words[(i*7+j)%len(words)], words[(i+j*3)%len(words)], i%13)
			if j == 2 {
				b.WriteString("\n\n")
			}
		}
		all = append(all, storetest.Source(fmt.Sprintf("gen/%04d.md", i), doc.TypeFile, words[i%len(words)], b.String()))
	}
	for _, s := range []store.Store{store.New(pg), lite} {
		for i := 0; i < len(all); i += 1 + i%9 {
			if err := s.Replace(ctx, all[i:min(len(all), i+1+i%9)]); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < len(all); i += 5 {
			if err := s.Replace(ctx, all[i:i+1]); err != nil {
				t.Fatal(err)
			}
		}
		var del []string
		for i := 3; i < len(all); i += 11 {
			del = append(del, all[i].Source.ID)
		}
		if _, err := s.Delete(ctx, del); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{"alpha", "beta gamma item", "設定ファイル", "theta 7", "kappa lambda iota", "テーマ alpha 3"} {
		want := named(t, lite, kw(t, lite, q, 50))
		got := named(t, store.New(pg), kw(t, store.New(pg), q, 50))
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("%q: postgres and sqlite differ\npostgres: %v\nsqlite:   %v", q, got, want)
		}
	}
	a, _ := pg.Stats(ctx)
	b, _ := lite.Stats(ctx)
	if a.Sources != b.Sources || a.Chunks != b.Chunks || a.Terms != b.Terms || a.Bytes != b.Bytes {
		t.Errorf("stats differ: postgres %+v, sqlite %+v", a, b)
	}
}

func kw(t *testing.T, s store.Store, q string, k int) []store.Scored {
	t.Helper()
	res, err := s.KeywordSearch(context.Background(), storetest.Terms(q), k, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestTSVectorHoldsTheAnalysedTerms(t *testing.T) {
	ctx := context.Background()
	dsn := freshDSN(t)
	s := open(t, dsn)
	defer s.Close()
	if err := s.Replace(ctx, []store.SourceData{
		storetest.Source("ja.md", doc.TypeFile, "設定", "VitePressの設定ファイルを作成します。"),
		storetest.Source("en.md", doc.TypeFile, "Generalization", "Generalizations of the routing tables."),
	}); err != nil {
		t.Fatal(err)
	}
	conn := rawConn(t, dsn)
	defer conn.Close(ctx)
	for q, want := range map[string]string{"設定 & ファイル & 作成": "ja.md", "gener & rout": "en.md"} {
		var uri string
		err := conn.QueryRow(ctx, `SELECT s.uri FROM `+quoteIdent(s.set.Schema)+`.chunks c JOIN `+quoteIdent(s.set.Schema)+`.sources s ON s.id = c.source_id
			WHERE c.tsv @@ $1::tsquery`, q).Scan(&uri)
		if err != nil || uri != want {
			t.Errorf("tsv @@ %q found %q, %v; want %s", q, uri, err, want)
		}
	}
}

func TestOpenRefusesWhatIsNotAnIndex(t *testing.T) {
	ctx := context.Background()
	base := testDSN(t)

	// Another program's tables in the schema: refused, and left alone.
	dsn := freshDSN(t)
	_, set, _ := ParseDSN(dsn)
	conn := rawConn(t, base)
	defer conn.Close(ctx)
	schema := quoteIdent(set.Schema)
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema+`; CREATE TABLE `+schema+`.customers(id int, name text); INSERT INTO `+schema+`.customers VALUES (1, 'ada')`); err != nil {
		t.Fatal(err)
	}
	_, err := openDriver(ctx, dsn, Options{Create: true})
	if !errors.Is(err, store.ErrForeign) || !strings.Contains(err.Error(), "schema=") {
		t.Errorf("openDriver(schema of another program) = %v, want ErrForeign suggesting ?schema=", err)
	}
	var name string
	if err := conn.QueryRow(ctx, `SELECT name FROM `+schema+`.customers`).Scan(&name); err != nil || name != "ada" {
		t.Errorf("foreign schema damaged: %q, %v", name, err)
	}

	// No index and no Create: an error that says to index first, and nothing created.
	missing := freshDSN(t)
	_, err = openDriver(ctx, missing, Options{})
	if !errors.Is(err, ErrNoIndex) || !strings.Contains(err.Error(), "sagasu index") {
		t.Errorf("openDriver(missing, no create) = %v, want ErrNoIndex", err)
	}
	_, mset, _ := ParseDSN(missing)
	var exists bool
	_ = conn.QueryRow(ctx, `SELECT EXISTS(SELECT 1 FROM pg_namespace WHERE nspname = $1)`, mset.Schema).Scan(&exists)
	if exists {
		t.Errorf("Open without Create created the schema")
	}

	// A newer schema, and another analyzer.
	newer := freshDSN(t)
	s := open(t, newer)
	s.Close()
	_, nset, _ := ParseDSN(newer)
	if _, err := conn.Exec(ctx, `INSERT INTO `+quoteIdent(nset.Schema)+`.schema_migrations(version) VALUES (999)`); err != nil {
		t.Fatal(err)
	}
	if _, err := openDriver(ctx, newer, Options{}); !errors.Is(err, store.ErrTooNew) {
		t.Errorf("openDriver(newer schema) = %v, want ErrTooNew", err)
	}
	other := freshDSN(t)
	s = open(t, other)
	if err := s.SetMeta(ctx, metaAnalyzer, "0-old"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := openDriver(ctx, other, Options{}); err == nil || !strings.Contains(err.Error(), "built by analyzer") {
		t.Errorf("openDriver(index of another analyzer) = %v", err)
	}
}

func TestBadDSNs(t *testing.T) {
	ctx := context.Background()
	base := testDSN(t)
	u, _ := url.Parse(base)
	for _, tc := range []struct {
		name, dsn, want string
	}{
		{"not a URL", "postgres://[::1", "want postgres://"},
		{"bad option", withParams(t, base, "hnsw_ef_search", "lots"), "hnsw_ef_search"},
		{"bad iterative scan", withParams(t, base, "hnsw_iterative_scan", "sometimes"), "relaxed_order"},
		{"no database", strings.Replace(base, u.Path, "/no_such_database_here", 1), "createdb"},
		{"nobody listening", "postgres://postgres@127.0.0.1:1/sagasu?connect_timeout=5", "is the server running"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := openDriver(ctx, tc.dsn, Options{Create: true})
			if err == nil {
				s.Close()
				t.Fatalf("openDriver(%s) succeeded", tc.dsn)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("openDriver(%s) = %v, want it to mention %q", tc.dsn, err, tc.want)
			}
		})
	}
	if got := store.Redact("postgres://ann:secret@db:5432/x"); strings.Contains(got, "secret") {
		t.Errorf("redact kept the password: %s", got)
	}
}

func TestTwoProcessesOpenAndWriteAtOnce(t *testing.T) {
	ctx := context.Background()
	dsn := freshDSN(t)
	// Both create the same schema at the same moment: the migration lock
	// makes one wait for the other.
	stores := make([]*Store, 4)
	var wg sync.WaitGroup
	errs := make([]error, len(stores))
	for i := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stores[i], errs[i] = openDriver(ctx, dsn, Options{Create: true})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Open %d: %v", i, err)
		}
		defer stores[i].Close()
	}
	var versions int
	conn := rawConn(t, dsn)
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM `+quoteIdent(stores[0].set.Schema)+`.schema_migrations`).Scan(&versions); err != nil || versions != SchemaVersion {
		t.Errorf("schema_migrations has %d rows, %v; want %d", versions, err, SchemaVersion)
	}
	// Writers in separate stores (as in separate processes) take turns.
	for i, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 30 {
				sd := storetest.Source(fmt.Sprintf("w%d/%02d.txt", i, j), doc.TypeFile, "", fmt.Sprintf("writer %d wrote document %d", i, j))
				if err := s.Replace(ctx, []store.SourceData{sd}); err != nil {
					t.Errorf("writer %d: %v", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	st, _ := stores[0].Stats(ctx)
	if st.Sources != 120 || st.Chunks != 120 {
		t.Errorf("after concurrent writers: %+v, want 120 sources and chunks", st)
	}
	if res := kw(t, store.New(stores[1]), "writer", 500); len(res) != 120 {
		t.Errorf("keyword search finds %d of 120 documents", len(res))
	}
}

func TestLockHeldByAnotherStore(t *testing.T) {
	ctx := context.Background()
	dsn := freshDSN(t)
	a, b := open(t, dsn), open(t, dsn)
	defer a.Close()
	defer b.Close()
	unlock, err := a.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Lock(ctx)
	if !errors.Is(err, store.ErrLocked) || !strings.Contains(err.Error(), "server process") {
		t.Errorf("second writer = %v, want ErrLocked naming the holder", err)
	}
	// Another index in the same database has a lock of its own.
	c := open(t, freshDSN(t))
	defer c.Close()
	unlockC, err := c.Lock(ctx)
	if err != nil {
		t.Errorf("Lock of another schema: %v", err)
	} else {
		unlockC()
	}
	unlock()
	unlock() // twice is harmless
	unlockB, err := b.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock after release: %v", err)
	}
	unlockB()
}

func TestVectorSearchWithSmallEfSearch(t *testing.T) {
	// ef_search below k must not cut the result short.
	ctx := context.Background()
	s := open(t, withParams(t, freshDSN(t), "hnsw_ef_search", "5", "hnsw_iterative_scan", "off"))
	defer s.Close()
	if err := s.InitVectors(ctx, 3); err != nil {
		t.Fatal(err)
	}
	var batch []store.SourceData
	for i := range 60 {
		sd := storetest.Source(fmt.Sprintf("v/%02d", i), doc.TypeText, "", fmt.Sprintf("vector %d", i))
		a := float64(i) / 60 * math.Pi
		sd.Vectors = [][]float32{{float32(math.Cos(a)), float32(math.Sin(a)), 0.5}}
		batch = append(batch, sd)
	}
	if err := s.Replace(ctx, batch); err != nil {
		t.Fatal(err)
	}
	res, err := s.VectorSearch(ctx, []float32{1, 0, 0.5}, 40, store.Filter{})
	if err != nil || len(res) != 40 {
		t.Fatalf("VectorSearch k=40 with ef_search 5: %d hits, %v", len(res), err)
	}
	hits, _ := s.Hits(ctx, []int64{res[0].ChunkID})
	if hits[0].Source.URI != "v/00" || math.Abs(res[0].Score-1) > 1e-6 {
		t.Errorf("nearest = %s %.6f, want v/00 at 1", hits[0].Source.URI, res[0].Score)
	}
	for i := 1; i < len(res); i++ {
		if res[i].Score > res[i-1].Score {
			t.Errorf("hits out of order at %d", i)
		}
	}
}

func TestHighDimensionalVectors(t *testing.T) {
	// 3,072 dimensions (Gemini's and OpenAI's large models) go through a
	// half-precision HNSW index; 5,000 through an exact scan.
	ctx := context.Background()
	for _, dim := range []int{3072, 5000} {
		s := open(t, freshDSN(t))
		if err := s.InitVectors(ctx, dim); err != nil {
			t.Fatalf("InitVectors(%d): %v", dim, err)
		}
		var batch []store.SourceData
		for i := range 5 {
			sd := storetest.Source(fmt.Sprintf("d/%d", i), doc.TypeText, "", fmt.Sprintf("doc %d", i))
			v := make([]float32, dim)
			v[i] = 1
			sd.Vectors = [][]float32{v}
			batch = append(batch, sd)
		}
		if err := s.Replace(ctx, batch); err != nil {
			t.Fatal(err)
		}
		q := make([]float32, dim)
		q[3] = 1
		res, err := s.VectorSearch(ctx, q, 2, store.Filter{})
		if err != nil || len(res) != 2 || math.Abs(res[0].Score-1) > 1e-6 {
			t.Errorf("dim %d: %v, %v", dim, res, err)
		}
		s.Close()
	}
}

func TestNULBytesAreRefusedWhole(t *testing.T) {
	ctx := context.Background()
	s := open(t, freshDSN(t))
	defer s.Close()
	good := storetest.Source("good.txt", doc.TypeFile, "", "fine text")
	bad := storetest.Source("bad.txt", doc.TypeFile, "", "nul \x00 byte")
	err := s.Replace(ctx, []store.SourceData{good, bad})
	if err == nil || !strings.Contains(err.Error(), "NUL") {
		t.Errorf("Replace with a NUL byte = %v", err)
	}
	if _, err := s.Source(ctx, doc.SourceID("good.txt")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("half of a refused batch was written: %v", err)
	}
}

// TestUpgradeAnalyzer: an index of analyzer version 1 is upgraded in place.
func TestUpgradeAnalyzer(t *testing.T) {
	dsn := freshDSN(t)
	storetest.AnalyzerUpgrade(t, func(t *testing.T, an *analyze.Analyzer, create bool) store.Store {
		s, err := Open(context.Background(), dsn, Options{Create: create, Analyzer: an})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestOldAnalyzerStaysReadable: an index of analyzer version 1 opened by a
// role that may only read it is read with the analyzer it was built with.
func TestOldAnalyzerStaysReadable(t *testing.T) {
	ctx := context.Background()
	dsn := freshDSN(t)
	v1 := analyze.New(analyze.Options{Version: 1})
	s, err := Open(ctx, dsn, Options{Create: true, Analyzer: v1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Replace(ctx, []store.SourceData{storetest.Source("ja/a.md", "file", "設定", "設定ファイルを作成します")}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := u.Query().Get("schema")
	role := "sagasu_reader_" + strings.TrimPrefix(schema, "sagasu_test_")
	admin := rawConn(t, dsn)
	for _, q := range []string{
		`CREATE ROLE ` + role + ` LOGIN`,
		`GRANT USAGE ON SCHEMA "` + schema + `" TO ` + role,
		`GRANT SELECT ON ALL TABLES IN SCHEMA "` + schema + `" TO ` + role,
	} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		for _, q := range []string{`DROP OWNED BY ` + role, `DROP ROLE ` + role} {
			if _, err := admin.Exec(context.Background(), q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
	u.User = url.User(role)
	r, err := Open(ctx, u.String(), Options{})
	if err != nil {
		t.Fatalf("open a version 1 index as a reader: %v", err)
	}
	defer r.Close()
	if got := analyzerOf(r).Signature(); got != "analyze/1" {
		t.Fatalf("a version 1 index opened by a reader is read with %q, want analyze/1", got)
	}
	res, err := r.KeywordSearch(ctx, analyzerOf(r).QueryTerms("設定ファイル"), 5, store.Filter{})
	if err != nil || len(res) != 1 {
		t.Errorf("search of the version 1 index as a reader = %v, %v", res, err)
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

// Package sqlite is the embedded store: one SQLite file (pure Go, WAL) that
// holds sources, their original content, chunks and the BM25 postings that
// package bm25 defines. It is sagasu's default and needs no server.
package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/glob"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/bm25"
	"github.com/sagasu-dev/sagasu/internal/store/internal/sqlrows"
	"github.com/sagasu-dev/sagasu/internal/store/segment"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// applicationID marks a SQLite file as a sagasu index ("SGSU").
const applicationID = 0x53475355

// Options configure Open.
type Options struct {
	// Create makes a new index when the file does not exist; without it a
	// missing file is an error that says to run `sagasu index` first.
	Create bool
	// Analyzer turns text into keyword terms; nil uses the default analyzer.
	Analyzer *analyze.Analyzer
	// CacheVectors keeps an in-memory copy of the vectors (up to 256 MB) for
	// processes that answer many queries; it is rebuilt whenever any process
	// changes the vectors. Off, every query goes to sqlite-vec.
	CacheVectors bool
}

// Store is a SQLite-backed store.Store.
type Store struct {
	db   *sql.DB
	path string
	an   *analyze.Analyzer

	cacheVectors bool
	vcache       vecCache

	// writeMu serialises writers inside this process; SQLite serialises
	// processes (BEGIN IMMEDIATE with a busy timeout).
	writeMu sync.Mutex
}

var _ store.Store = (*Store)(nil)

// ErrNoIndex means the index file does not exist and Create was not set.
var ErrNoIndex = errors.New("no index")

// Open opens (or, with Create, creates) the index at path and brings its
// schema up to date.
func Open(ctx context.Context, path string, opt Options) (*Store, error) {
	if err := checkFile(path, opt.Create); err != nil {
		return nil, err
	}
	if opt.Create {
		if dir := filepath.Dir(path); dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, fmt.Errorf("create index folder %q: %w", dir, err)
			}
		}
	}
	dsn := "file:" + path + "?_pragma=busy_timeout(15000)&_pragma=journal_mode(WAL)" +
		"&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_pragma=cache_size(-16384)" +
		"&_pragma=temp_store(MEMORY)&_pragma=wal_autocheckpoint(4096)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open index %q: %w", path, err)
	}
	an := opt.Analyzer
	if an == nil {
		an = analyze.New(analyze.Options{})
	}
	s := &Store{db: db, path: path, an: an, cacheVectors: opt.CacheVectors}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// checkFile refuses files that are not SQLite databases before the driver
// touches them, so a foreign file is never modified.
func checkFile(path string, create bool) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		if create {
			return nil
		}
		return fmt.Errorf("%w at %q: run `sagasu index PATH` first, or pass --db to point at an existing index", ErrNoIndex, path)
	}
	if err != nil {
		return fmt.Errorf("open index %q: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("open index %q: %w", path, err)
	}
	if st.IsDir() {
		return fmt.Errorf("open index %q: it is a folder; --db takes a file path such as .sagasu/sagasu.db", path)
	}
	if st.Size() == 0 {
		return nil
	}
	head := make([]byte, 16)
	if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, []byte("SQLite format 3\x00")) {
		return fmt.Errorf("open index %q: %w: the file is not a SQLite database; pass --db with another path or move the file away", path, store.ErrForeign)
	}
	return nil
}

// Path returns the file the store was opened on.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// tx runs fn in a write transaction.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.wrapBusy(err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return s.wrapBusy(err)
	}
	return s.wrapBusy(tx.Commit())
}

func (s *Store) wrapBusy(err error) error {
	if err != nil && (strings.Contains(err.Error(), "SQLITE_BUSY") || strings.Contains(err.Error(), "database is locked")) {
		return fmt.Errorf("%w (%s): %v", store.ErrLocked, s.path, err)
	}
	return err
}

// chunkRow is the analysed form of a chunk ready to insert.
type chunkRow struct {
	c      doc.Chunk
	counts bm25.Counts
	hash   string // of the context text, to find reusable embeddings
}

// Replace implements store.Store.
func (s *Store) Replace(ctx context.Context, batch []store.SourceData) error {
	if len(batch) == 0 {
		return nil
	}
	// Analyse outside the transaction, on every core, to keep the write
	// lock short.
	rows := make([][]chunkRow, len(batch))
	for i, sd := range batch {
		if sd.Source.ID == "" || sd.Source.URI == "" {
			return fmt.Errorf("replace: source without ID or URI")
		}
		if sd.Vectors != nil && len(sd.Vectors) != len(sd.Chunks) {
			return fmt.Errorf("replace %q: %d vectors for %d chunks", sd.Source.URI, len(sd.Vectors), len(sd.Chunks))
		}
		rows[i] = make([]chunkRow, len(sd.Chunks))
	}
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(batch); i += workers {
				sd := batch[i]
				for j, c := range sd.Chunks {
					ctxText := doc.ContextText(sd.Source.Title, c)
					rows[i][j] = chunkRow{c: c, counts: bm25.Count(s.an.Terms(ctxText)), hash: doc.ContentHash(ctxText)}
				}
			}
		}()
	}
	wg.Wait()
	err := s.tx(ctx, func(tx *sql.Tx) error {
		ids := make([]string, 0, len(batch))
		for _, sd := range batch {
			ids = append(ids, sd.Source.ID)
		}
		if _, err := s.deleteTx(ctx, tx, ids); err != nil {
			return err
		}
		seg, err := segTx{tx}.NewSegment(ctx)
		if err != nil {
			return err
		}
		b := bm25.NewBuilder()
		now := time.Now().Unix()
		// Chunk IDs are assigned here, inside the write transaction, so the
		// chunks can go in with multi-row statements: AUTOINCREMENT's
		// sequence says where the last write stopped.
		var nextID int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'chunks'), 0)`).Scan(&nextID); err != nil {
			return err
		}
		insSrc := newInserter(ctx, tx, `INSERT INTO sources(id, uri, type, format, title, hash, size, chunks, indexed_at)`, 9)
		insContent := newInserter(ctx, tx, `INSERT INTO contents(source_id, content)`, 2)
		insChunk := newInserter(ctx, tx, `INSERT INTO chunks(id, source_id, idx, text, heading, start_line, end_line, start_byte, end_byte, tokens, terms, chash)`, 12)
		insTermless := newInserter(ctx, tx, `INSERT INTO termless_chunks(id, seg)`, 2)
		for i, sd := range batch {
			src := sd.Source
			if err := insSrc.add(src.ID, src.URI, string(src.Type), string(src.Format), src.Title,
				src.ContentHash, len(sd.Content), len(sd.Chunks), now); err != nil {
				return fmt.Errorf("insert source %q: %w", src.URI, err)
			}
			if err := insContent.add(src.ID, sd.Content); err != nil {
				return fmt.Errorf("insert content of %q: %w", src.URI, err)
			}
			for j, r := range rows[i] {
				c := r.c
				nextID++
				id := nextID
				if err := insChunk.add(id, src.ID, j, c.Text, sqlrows.HeadingJSON(c.Heading), c.StartLine, c.EndLine,
					c.StartByte, c.EndByte, c.Tokens, r.counts.Len, r.hash); err != nil {
					return fmt.Errorf("insert chunk %d of %q: %w", j, src.URI, err)
				}
				b.AddCounts(uint64(id), r.counts)
				if r.counts.Len == 0 {
					if err := insTermless.add(id, seg); err != nil {
						return fmt.Errorf("insert chunk %d of %q: %w", j, src.URI, err)
					}
				}
				if sd.Vectors != nil {
					if err := s.putVector(ctx, tx, id, sd.Vectors[j]); err != nil {
						return fmt.Errorf("store vector of chunk %d of %q: %w", j, src.URI, err)
					}
				}
			}
		}
		for _, in := range []*inserter{insSrc, insContent, insChunk, insTermless} {
			if err := in.flush(); err != nil {
				return fmt.Errorf("insert sources: %w", err)
			}
		}
		if hasVectors(batch) {
			if err := bumpVectorVersion(ctx, tx); err != nil {
				return err
			}
		}
		return writeSegment(ctx, tx, seg, b)
	})
	if err != nil {
		return err
	}
	// The batch is committed. Merging segments only speeds up queries: if it
	// is interrupted it rolls back whole and the next write merges instead.
	if err := s.compact(ctx); err != nil && ctx.Err() == nil {
		return fmt.Errorf("sources written; %w", err)
	}
	return nil
}

// Delete implements store.Store.
func (s *Store) Delete(ctx context.Context, ids []string) (int, error) {
	var n int
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		n, err = s.deleteTx(ctx, tx, ids)
		return err
	})
	return n, err
}

// deleteTx removes sources, their chunks, vectors and postings. SQLite
// keeps no term list per chunk: a chunk's terms are those the pinned
// analyzer makes of its context text (exactly what it was indexed under),
// and its segment is learnt from the postings rows it is found in, so
// merges need not rewrite the chunks table. Only chunks without terms,
// which are in no row, have their segment recorded (termless_chunks).
func (s *Store) deleteTx(ctx context.Context, tx *sql.Tx, ids []string) (int, error) {
	var gone []segment.Chunk
	var termless []int // indexes in gone of chunks without terms
	removed := 0
	titles, err := existingTitles(ctx, tx, ids)
	if err != nil {
		return 0, err
	}
	for _, id := range ids {
		title, ok := titles[id]
		if !ok {
			continue
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, text, heading, terms FROM chunks WHERE source_id = ?`, id)
		if err != nil {
			return 0, err
		}
		for rows.Next() {
			var c doc.Chunk
			var heading string
			var n int64
			if err := rows.Scan(&c.ID, &c.Text, &heading, &n); err != nil {
				rows.Close()
				return 0, err
			}
			_ = json.Unmarshal([]byte(heading), &c.Heading)
			g := segment.Chunk{ID: c.ID, Len: n, Terms: s.an.QueryTerms(doc.ContextText(title, c))}
			if len(g.Terms) == 0 {
				termless = append(termless, len(gone))
			}
			gone = append(gone, g)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return 0, err
		}
		for _, i := range termless {
			err := tx.QueryRowContext(ctx, `SELECT seg FROM termless_chunks WHERE id = ?`, gone[i].ID).Scan(&gone[i].Seg)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return 0, err
			}
		}
		termless = termless[:0]
		if err := s.deleteVectors(ctx, tx, id); err != nil {
			return 0, err
		}
		for _, q := range []string{`DELETE FROM termless_chunks WHERE id IN (SELECT id FROM chunks WHERE source_id = ?)`, `DELETE FROM chunks WHERE source_id = ?`, `DELETE FROM contents WHERE source_id = ?`, `DELETE FROM sources WHERE id = ?`} {
			if _, err := tx.ExecContext(ctx, q, id); err != nil {
				return 0, fmt.Errorf("delete source %s: %w", id, err)
			}
		}
		removed++
	}
	if err := segment.Delete(ctx, segTx{tx}, gone); err != nil {
		return 0, err
	}
	return removed, nil
}

func hasVectors(batch []store.SourceData) bool {
	for _, sd := range batch {
		if sd.Vectors != nil {
			return true
		}
	}
	return false
}

// existingTitles returns the titles of those of ids that are stored.
func existingTitles(ctx context.Context, tx *sql.Tx, ids []string) (map[string]string, error) {
	out := map[string]string{}
	for i := 0; i < len(ids); i += 500 {
		part := ids[i:min(i+500, len(ids))]
		args := make([]any, len(part))
		for j, id := range part {
			args[j] = id
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, title FROM sources WHERE id IN (`+placeholders(len(part))+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("look up sources: %w", err)
		}
		for rows.Next() {
			var id, title string
			if err := rows.Scan(&id, &title); err != nil {
				rows.Close()
				return nil, err
			}
			out[id] = title
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// KeywordSearch implements store.Store.
func (s *Store) KeywordSearch(ctx context.Context, terms []string, k int, f store.Filter) ([]store.Scored, error) {
	if len(terms) == 0 || k <= 0 {
		return nil, nil
	}
	var corpus bm25.Corpus
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(docs),0), COALESCE(SUM(tokens),0) FROM segments`).Scan(&corpus.Docs, &corpus.Tokens); err != nil {
		return nil, fmt.Errorf("keyword search: %w", err)
	}
	args := make([]any, len(terms))
	for i, t := range terms {
		args[i] = t
	}
	rows, err := s.db.QueryContext(ctx, `SELECT term, data FROM postings WHERE term IN (`+placeholders(len(terms))+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("keyword search: %w", err)
	}
	var ls bm25.ListSet
	for rows.Next() {
		var term string
		var data []byte
		if err := rows.Scan(&term, &data); err != nil {
			rows.Close()
			return nil, err
		}
		ls.Add(term, data)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	allow, err := s.allowFunc(ctx, f)
	if err != nil {
		return nil, err
	}
	return bm25.Score(corpus, ls.Lists(terms), k, allow)
}

// allowFunc turns a filter into a chunk predicate (nil when it allows all).
func (s *Store) allowFunc(ctx context.Context, f store.Filter) (func(int64) bool, error) {
	return f.Allow(func() (map[int64]bool, error) {
		srcs, err := s.matchSources(ctx, f)
		if err != nil {
			return nil, err
		}
		allowed := map[int64]bool{}
		for i := 0; i < len(srcs); i += 500 {
			part := srcs[i:min(i+500, len(srcs))]
			args := make([]any, len(part))
			for j, id := range part {
				args[j] = id
			}
			rows, err := s.db.QueryContext(ctx, `SELECT id FROM chunks WHERE source_id IN (`+placeholders(len(part))+`)`, args...)
			if err != nil {
				return nil, err
			}
			for rows.Next() {
				var id int64
				if err := rows.Scan(&id); err != nil {
					rows.Close()
					return nil, err
				}
				allowed[id] = true
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return nil, err
			}
		}
		return allowed, nil
	})
}

// matchSources returns the IDs of the sources a filter keeps.
func (s *Store) matchSources(ctx context.Context, f store.Filter) ([]string, error) {
	types := map[doc.SourceType]bool{}
	for _, t := range f.Types {
		types[t] = true
	}
	ids := map[string]bool{}
	for _, id := range f.SourceIDs {
		ids[id] = true
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, uri, type FROM sources`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, uri, typ string
		if err := rows.Scan(&id, &uri, &typ); err != nil {
			return nil, err
		}
		if len(types) > 0 && !types[doc.SourceType(typ)] {
			continue
		}
		if len(ids) > 0 && !ids[id] {
			continue
		}
		if f.PathGlob != "" && !glob.Match(f.PathGlob, uri) {
			continue
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// DocFreq implements store.Store.
func (s *Store) DocFreq(ctx context.Context, terms []string) (map[string]int, int, error) {
	var docs int
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(docs),0) FROM segments`).Scan(&docs); err != nil {
		return nil, 0, err
	}
	out := make(map[string]int, len(terms))
	if len(terms) == 0 {
		return out, docs, nil
	}
	args := make([]any, len(terms))
	for i, t := range terms {
		args[i] = t
		out[t] = 0
	}
	rows, err := s.db.QueryContext(ctx, `SELECT term, SUM(n) FROM postings WHERE term IN (`+placeholders(len(terms))+`) GROUP BY term`, args...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		var n int
		if err := rows.Scan(&t, &n); err != nil {
			return nil, 0, err
		}
		out[t] = n
	}
	return out, docs, rows.Err()
}

const sourceCols = `id, uri, type, format, title, hash, size, chunks, indexed_at`

type scanner interface{ Scan(...any) error }

func scanSource(r scanner) (doc.Source, error) {
	var s doc.Source
	var typ, format string
	err := r.Scan(&s.ID, &s.URI, &typ, &format, &s.Title, &s.ContentHash, &s.Size, &s.Chunks, &s.IndexedAt)
	s.Type, s.Format = doc.SourceType(typ), doc.Format(format)
	return s, err
}

// Source implements store.Store.
func (s *Store) Source(ctx context.Context, id string) (doc.Source, error) {
	return s.oneSource(ctx, `SELECT `+sourceCols+` FROM sources WHERE id = ?`, id)
}

// SourceByURI implements store.Store.
func (s *Store) SourceByURI(ctx context.Context, uri string) (doc.Source, error) {
	return s.oneSource(ctx, `SELECT `+sourceCols+` FROM sources WHERE uri = ?`, uri)
}

func (s *Store) oneSource(ctx context.Context, q, arg string) (doc.Source, error) {
	src, err := scanSource(s.db.QueryRowContext(ctx, q, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return doc.Source{}, fmt.Errorf("source %q: %w", arg, store.ErrNotFound)
	}
	return src, err
}

// Sources implements store.Store.
func (s *Store) Sources(ctx context.Context, opt store.ListOptions) ([]doc.Source, error) {
	q := `SELECT ` + sourceCols + ` FROM sources`
	var args []any
	if opt.Type != "" {
		q += ` WHERE type = ?`
		args = append(args, string(opt.Type))
	}
	q += ` ORDER BY uri`
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []doc.Source
	skipped := 0
	for rows.Next() {
		src, err := scanSource(rows)
		if err != nil {
			return nil, err
		}
		if opt.PathGlob != "" && !glob.Match(opt.PathGlob, src.URI) {
			continue
		}
		if skipped < opt.Offset {
			skipped++
			continue
		}
		out = append(out, src)
		if opt.Limit > 0 && len(out) == opt.Limit {
			break
		}
	}
	return out, rows.Err()
}

// Content implements store.Store.
func (s *Store) Content(ctx context.Context, id string) (string, error) {
	var c string
	err := s.db.QueryRowContext(ctx, `SELECT content FROM contents WHERE source_id = ?`, id).Scan(&c)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("source %q: %w", id, store.ErrNotFound)
	}
	return c, err
}

// Chunks implements store.Store.
func (s *Store) Chunks(ctx context.Context, sourceID string) ([]doc.Chunk, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+sqlrows.ChunkColumns+` FROM chunks c WHERE c.source_id = ? ORDER BY c.idx`, sourceID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []doc.Chunk
	for rows.Next() {
		c, err := sqlrows.ScanChunk(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Hits implements store.Store.
func (s *Store) Hits(ctx context.Context, ids []int64) ([]doc.Hit, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+sqlrows.ChunkColumns+`, s.uri, s.type, s.format, s.title, s.hash, s.size, s.chunks, s.indexed_at
		FROM chunks c JOIN sources s ON s.id = c.source_id WHERE c.id IN (`+placeholders(len(ids))+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byID := map[int64]doc.Hit{}
	for rows.Next() {
		var src doc.Source
		var typ, format string
		c, err := sqlrows.ScanChunk(rows, &src.URI, &typ, &format, &src.Title, &src.ContentHash, &src.Size, &src.Chunks, &src.IndexedAt)
		if err != nil {
			return nil, err
		}
		src.ID, src.Type, src.Format = c.SourceID, doc.SourceType(typ), doc.Format(format)
		byID[c.ID] = doc.Hit{Chunk: c, Source: src}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]doc.Hit, 0, len(ids))
	for _, id := range ids {
		if h, ok := byID[id]; ok {
			out = append(out, h)
		}
	}
	return out, nil
}

// Hashes implements store.Store.
func (s *Store) Hashes(ctx context.Context) (map[string]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT uri, hash FROM sources`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var uri, hash string
		if err := rows.Scan(&uri, &hash); err != nil {
			return nil, err
		}
		out[uri] = hash
	}
	return out, rows.Err()
}

// Meta implements store.Store.
func (s *Store) Meta(ctx context.Context, key string) (string, error) {
	var v string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

// SetMeta implements store.Store.
func (s *Store) SetMeta(ctx context.Context, key, value string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, value)
		return err
	})
}

// Stats implements store.Store.
func (s *Store) Stats(ctx context.Context) (store.Stats, error) {
	var st store.Stats
	err := s.db.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM sources),
		(SELECT COALESCE(SUM(size),0) FROM sources),
		(SELECT COALESCE(SUM(docs),0) FROM segments),
		(SELECT COUNT(DISTINCT term) FROM postings)
		`).Scan(&st.Sources, &st.Bytes, &st.Chunks, &st.Terms)
	if err != nil {
		return st, err
	}
	if dim, err := s.vectorDim(ctx); err == nil && dim > 0 {
		if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM chunk_vectors`).Scan(&st.Vectors); err != nil {
			return st, err
		}
	}
	for _, p := range []string{s.path, s.path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			st.SizeBytes += fi.Size()
		}
	}
	return st, nil
}

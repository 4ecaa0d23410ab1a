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
		seg, err := nextSegment(ctx, tx)
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
				if sd.Vectors != nil {
					if err := s.putVector(ctx, tx, id, sd.Vectors[j]); err != nil {
						return fmt.Errorf("store vector of chunk %d of %q: %w", j, src.URI, err)
					}
				}
			}
		}
		for _, in := range []*inserter{insSrc, insContent, insChunk} {
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

// deleteTx removes sources, their chunks and their postings.
func (s *Store) deleteTx(ctx context.Context, tx *sql.Tx, ids []string) (int, error) {
	type gone struct {
		id    uint64
		terms []string
	}
	var chunks []gone
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
		rows, err := tx.QueryContext(ctx, `SELECT id, text, heading FROM chunks WHERE source_id = ?`, id)
		if err != nil {
			return 0, err
		}
		for rows.Next() {
			var c doc.Chunk
			var heading string
			if err := rows.Scan(&c.ID, &c.Text, &heading); err != nil {
				rows.Close()
				return 0, err
			}
			_ = json.Unmarshal([]byte(heading), &c.Heading)
			chunks = append(chunks, gone{id: uint64(c.ID), terms: s.an.Terms(doc.ContextText(title, c))})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return 0, err
		}
		if err := s.deleteVectors(ctx, tx, id); err != nil {
			return 0, err
		}
		for _, q := range []string{`DELETE FROM chunks WHERE source_id = ?`, `DELETE FROM contents WHERE source_id = ?`, `DELETE FROM sources WHERE id = ?`} {
			if _, err := tx.ExecContext(ctx, q, id); err != nil {
				return 0, fmt.Errorf("delete source %s: %w", id, err)
			}
		}
		removed++
	}
	if len(chunks) == 0 {
		return removed, nil
	}
	// Rewrite each affected postings row once. A chunk's segment is learnt
	// from the rows it is found in, so chunks need not record it (and
	// merges need not rewrite the chunks table).
	drop := map[string]map[uint64]bool{}
	length := map[uint64]int64{}
	for _, c := range chunks {
		length[c.id] = int64(len(c.terms))
		for _, t := range c.terms {
			if drop[t] == nil {
				drop[t] = map[uint64]bool{}
			}
			drop[t][c.id] = true
		}
	}
	get, err := tx.PrepareContext(ctx, `SELECT seg, data FROM postings WHERE term = ?`)
	if err != nil {
		return 0, err
	}
	defer get.Close()
	put, err := tx.PrepareContext(ctx, `UPDATE postings SET n = ?, data = ? WHERE term = ? AND seg = ?`)
	if err != nil {
		return 0, err
	}
	defer put.Close()
	del, err := tx.PrepareContext(ctx, `DELETE FROM postings WHERE term = ? AND seg = ?`)
	if err != nil {
		return 0, err
	}
	defer del.Close()
	segOf := map[uint64]int64{}
	for term, ids := range drop {
		type row struct {
			seg  int64
			data []byte
		}
		var found []row
		rows, err := get.QueryContext(ctx, term)
		if err != nil {
			return 0, err
		}
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.seg, &r.data); err != nil {
				rows.Close()
				return 0, err
			}
			found = append(found, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return 0, err
		}
		for _, r := range found {
			ps, err := bm25.DecodeAll(r.data)
			if err != nil {
				return 0, fmt.Errorf("postings of %q: %w", term, err)
			}
			kept := ps[:0]
			for _, p := range ps {
				if ids[p.ID] {
					segOf[p.ID] = r.seg
				} else {
					kept = append(kept, p)
				}
			}
			switch {
			case len(kept) == len(ps):
				continue
			case len(kept) == 0:
				_, err = del.ExecContext(ctx, term, r.seg)
			default:
				_, err = put.ExecContext(ctx, len(kept), bm25.Encode(nil, kept), term, r.seg)
			}
			if err != nil {
				return 0, err
			}
		}
	}
	segDocs := map[int64]int{}
	segTokens := map[int64]int64{}
	for id, seg := range segOf {
		segDocs[seg]++
		segTokens[seg] += length[id]
	}
	for seg, n := range segDocs {
		if _, err := tx.ExecContext(ctx, `UPDATE segments SET docs = docs - ?, tokens = tokens - ? WHERE seg = ?`, n, segTokens[seg], seg); err != nil {
			return 0, err
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM segments WHERE docs <= 0`); err != nil {
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

func nextSegment(ctx context.Context, tx *sql.Tx) (int64, error) {
	var seg int64
	err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seg), 0) + 1 FROM segments`).Scan(&seg)
	return seg, err
}

// writeSegment stores the postings built for one batch as a new segment.
func writeSegment(ctx context.Context, tx *sql.Tx, seg int64, b *bm25.Builder) error {
	if b.Docs == 0 {
		return nil
	}
	ins := newInserter(ctx, tx, `INSERT INTO postings(term, seg, n, data)`, 4)
	for _, t := range b.Terms() {
		ps := b.Postings(t)
		if err := ins.add(t, seg, len(ps), bm25.Encode(nil, ps)); err != nil {
			return fmt.Errorf("write postings: %w", err)
		}
	}
	if err := ins.flush(); err != nil {
		return fmt.Errorf("write postings: %w", err)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO segments(seg, docs, tokens) VALUES(?,?,?)`, seg, b.Docs, b.Tokens)
	return err
}

// compact merges segments of similar size (bm25.ToMerge) until none are due.
// The choice is made inside the merge's transaction, so concurrent writers
// never merge the same segments twice.
func (s *Store) compact(ctx context.Context) error {
	for {
		merged := false
		err := s.tx(ctx, func(tx *sql.Tx) error {
			segs, err := segmentsToMerge(ctx, tx)
			if err != nil || len(segs) == 0 {
				return err
			}
			merged = true
			return s.mergeSegments(ctx, tx, segs)
		})
		if err != nil {
			return fmt.Errorf("merge index segments: %w", err)
		}
		if !merged {
			return nil
		}
	}
}

func segmentsToMerge(ctx context.Context, tx *sql.Tx) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT seg, docs FROM segments ORDER BY seg`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var segs []bm25.Segment
	for rows.Next() {
		var sg bm25.Segment
		if err := rows.Scan(&sg.ID, &sg.Docs); err != nil {
			return nil, err
		}
		segs = append(segs, sg)
	}
	return bm25.ToMerge(segs), rows.Err()
}

// mergeSegments rewrites the postings of segs as one new segment.
func (s *Store) mergeSegments(ctx context.Context, tx *sql.Tx, segs []int64) error {
	into, err := nextSegment(ctx, tx)
	if err != nil {
		return err
	}
	ph := placeholders(len(segs))
	args := make([]any, len(segs))
	for i, seg := range segs {
		args[i] = seg
	}
	ins := newInserter(ctx, tx, `INSERT INTO postings(term, seg, n, data)`, 4)
	// Old rows are deleted a range of terms at a time, by primary key: one
	// DELETE over all merged segments would have SQLite collect every key
	// in a temporary table first.
	del, err := tx.PrepareContext(ctx, `DELETE FROM postings WHERE term >= ? AND term <= ? AND seg IN (`+ph+`)`)
	if err != nil {
		return err
	}
	defer del.Close()
	// One scan in primary-key order yields each term's rows together; each
	// term is merged as soon as its rows are read, so memory holds one term
	// (and a statement's worth of output) at a time. The new rows carry
	// segment `into`, which the scan's filter excludes.
	rows, err := tx.QueryContext(ctx, `SELECT term, data FROM postings WHERE seg IN (`+ph+`) ORDER BY term`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var cur, rangeStart string
	var lists [][]byte
	pending := 0
	deleteRange := func() error {
		if pending == 0 {
			return nil
		}
		pending = 0
		_, err := del.ExecContext(ctx, append([]any{rangeStart, cur}, args...)...)
		return err
	}
	flush := func() error {
		if len(lists) == 0 {
			return nil
		}
		data, n, err := bm25.Merge(lists...)
		if err != nil {
			return fmt.Errorf("postings of %q: %w", cur, err)
		}
		lists = lists[:0]
		if pending == 0 {
			rangeStart = cur
		}
		pending++
		if err := ins.add(cur, into, n, data); err != nil {
			return err
		}
		if pending == rowsPerStmt {
			return deleteRange()
		}
		return nil
	}
	for rows.Next() {
		var term string
		var data []byte
		if err := rows.Scan(&term, &data); err != nil {
			return err
		}
		if term != cur {
			if err := flush(); err != nil {
				return err
			}
			cur = term
		}
		lists = append(lists, data)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	if err := deleteRange(); err != nil {
		return err
	}
	rows.Close()
	if err := ins.flush(); err != nil {
		return err
	}
	var docs int
	var tokens int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(docs),0), COALESCE(SUM(tokens),0) FROM segments WHERE seg IN (`+ph+`)`, args...).Scan(&docs, &tokens); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM segments WHERE seg IN (`+ph+`)`, args...); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO segments(seg, docs, tokens) VALUES(?,?,?)`, into, docs, tokens)
	return err
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

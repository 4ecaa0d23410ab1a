// Package sqlite is the embedded store: one SQLite file (pure Go, WAL) that
// holds sources, their original content (zstd-compressed blocks), chunks
// (spans of that content) and the BM25 postings that package bm25 defines. It is sagasu's default and needs no server.
package sqlite

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/bm25"
	"github.com/sagasu-dev/sagasu/internal/userfile"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// busyTimeoutMS is how long a connection waits for another process's lock.
const busyTimeoutMS = 15000

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
	// CacheKeyword keeps the postings of recently queried terms decoded in
	// memory (bm25.Cache, up to bm25.DefaultCacheBytes), for processes
	// that answer many queries.
	CacheKeyword bool
	// KeywordCacheBytes bounds that cache (0: bm25.DefaultCacheBytes).
	KeywordCacheBytes int64
	// ApproxVectors, with CacheVectors, is the number of vectors from which
	// an approximate HNSW graph (built in the background, once per change
	// of the vectors) answers vector queries instead of the exact scan; 0
	// means always exact.
	ApproxVectors int

	// schema, when set (by tests), stops migrations at that version to make
	// an index as an older sagasu wrote it.
	schema int
	// queryOnly, when set (by tests), opens the file as a reader that may
	// not write, as a read-only file or mount does.
	queryOnly bool
	// dictMinBatch, when set (by tests), replaces dictMinBatch.
	dictMinBatch int
}

// Store is the SQLite store.Driver.
type Store struct {
	db   *sql.DB
	path string
	an   *analyze.Analyzer
	// params are the keyword scoring parameters pinned in the index.
	params bm25.Params

	cacheVectors  bool
	approxVectors int
	kcache        *bm25.Cache // nil unless Options.CacheKeyword
	vcache        vecCache
	// goneKept is how many entries the vector deletion log keeps.
	goneKept int64

	// codec compresses and decompresses the content blocks.
	codec *codec
	// hits keeps Hits' statements prepared.
	hits idStmts

	// writeMu serialises writers inside this process; SQLite serialises
	// processes (BEGIN IMMEDIATE with a busy timeout).
	writeMu sync.Mutex
	// wconn is the connection every write transaction runs on (under
	// writeMu), opened at the first write and kept, with a page cache of
	// writeCacheKiB: see writeConn.
	wconn *sql.Conn
}

// writeCacheKiB is the page cache of the write connection. Every batch
// inserts into indexes whose keys are random (source IDs, a chunk's source,
// terms), so it touches pages all over them; with the 16 MB every
// connection kept before, SQLite spent a fifth of the write transaction reading
// pages back and spilling them. In profiles of the 300,000-chunk bench the
// transaction's row inserts took about a quarter less CPU (against the
// same analysis) with 32 MB; 64 MB did no better and held 70 MB more while
// indexing. The cache fills only as far as the index has pages.
const writeCacheKiB = 32 << 10

var _ store.Driver = (*Store)(nil)

// ErrNoIndex means the index file does not exist and Create was not set.
var ErrNoIndex = errors.New("no index")

// Open opens (or, with Create, creates) the index at path and brings its
// schema up to date. The Store checks every call before the driver sees it
// (store.New).
func Open(ctx context.Context, path string, opt Options) (store.Store, error) {
	return store.Opened(openDriver(ctx, path, opt))
}

// openDriver opens the driver under Open's Store.
func openDriver(ctx context.Context, path string, opt Options) (*Store, error) {
	if err := checkFile(path, opt.Create); err != nil {
		return nil, err
	}
	if opt.Create && path != ":memory:" {
		// The file is born readable by the user alone, and SQLite gives its
		// WAL and shared-memory files the same mode: an index holds copies
		// of private files.
		if err := userfile.Create(path); err != nil {
			return nil, fmt.Errorf("create index %q: %w", path, err)
		}
	}
	// journal_size_limit: a large write transaction grows the WAL far past
	// the checkpoint interval; without a limit the file stays that size
	// until the last connection closes.
	// cache_size: the readers' page caches are small (2 MB each). A
	// long-lived process answers keyword queries from its own cache of the
	// lists, and the loads that read the whole index once (that cache, the
	// vectors) left 16 MB of pages it never read again in each of them:
	// 224–239 against 265–273 MB resident while serving the 100,000-chunk
	// bench. Writes have their own connection and cache (writeConn).
	dsn := "file:" + path + "?_pragma=busy_timeout(" + strconv.Itoa(busyTimeoutMS) + ")&_pragma=journal_mode(WAL)" +
		"&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_pragma=cache_size(-2048)" +
		"&_pragma=temp_store(MEMORY)&_pragma=wal_autocheckpoint(4096)&_pragma=journal_size_limit(" + strconv.Itoa(walLimit) + ")&_txlock=immediate"
	if opt.queryOnly {
		dsn += "&_pragma=query_only(1)"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open index %q: %w", path, err)
	}
	// database/sql keeps 2 idle connections by default: with more
	// concurrent readers (an MCP server with many clients) every extra
	// query opened a fresh SQLite connection, re-read the schema with a cold
	// page cache and closed it again. Keep one per core and a few more.
	db.SetMaxIdleConns(max(4, 2*runtime.GOMAXPROCS(0)))
	an := opt.Analyzer
	if an == nil {
		an = analyze.New(analyze.Options{})
	}
	cd, err := newCodec()
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open index %q: %w", path, err)
	}
	s := &Store{db: db, path: path, an: an, cacheVectors: opt.CacheVectors, approxVectors: opt.ApproxVectors, codec: cd, goneKept: goneKept}
	cd.dict.load, cd.dict.minBatch = s.dictionaries, cmp.Or(opt.dictMinBatch, dictMinBatch)
	if opt.CacheKeyword {
		s.kcache = bm25.NewCache(opt.KeywordCacheBytes)
	}
	if err := s.migrateRetrying(ctx, cmp.Or(opt.schema, SchemaVersion)); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// migrateRetrying runs migrate, again while another process holds the new
// file (two first runs at once: while one switches the file to WAL, the
// other is told SQLITE_BUSY without its busy timeout applying). migrate is
// idempotent, so a retry is safe.
func (s *Store) migrateRetrying(ctx context.Context, target int) error {
	var err error
	for attempt := range 50 {
		if err = s.migrate(ctx, target); err == nil || !isBusy(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(10*(attempt+1)) * time.Millisecond):
		}
	}
	return err
}

// isBusy reports SQLite's "database is locked".
func isBusy(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "SQLITE_BUSY") || strings.Contains(msg, "database is locked")
}

// companions are the files SQLite and this store keep beside an index.
var companions = []string{"-wal", "-shm", "-journal", ".lock", ".hnsw"}

// checkFile refuses files that are not SQLite databases before the driver
// touches them, so a foreign file is never modified; and an index whose
// companion files (see companions) are links or not plain files, which a
// cloned repository can ship to make a write land in the user's files.
// (SQLite itself refuses a linked -wal or -shm, but only with "unable to
// open database file"; this says which file and what to do.)
//
// The index file itself may not be a link either: a clone's
// ".sagasu/sagasu.db -> ~/work/other/.sagasu/sagasu.db" would have
// `sagasu index` there sync another project's index to the clone's files.
// A folder on the way may be a link.
func checkFile(path string, create bool) error {
	if path != ":memory:" {
		if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(path)
			return fmt.Errorf("open index %q: it is a symbolic link (to %s): %w; sagasu does not open an index through a link, since a cloned repository can ship one that points at another of your indexes: give the real file with --db, or delete the link", path, target, userfile.ErrNotPlain)
		}
		for _, c := range companions {
			if err := userfile.Check(path + c); err != nil {
				return fmt.Errorf("open index %q: %w", path, err)
			}
		}
	}
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

// Analyzer returns the analyzer the keyword index is read and written with:
// the one given to Open, or the older one the index is pinned to when it
// could not be upgraded (see pinAnalyzer). Queries must be analysed with it.
func (s *Store) Analyzer() *analyze.Analyzer { return s.an }

// Path returns the file the store was opened on.
func (s *Store) Path() string { return s.path }

// Close closes the database, first stopping the keyword cache's background
// load.
func (s *Store) Close() error {
	if s.kcache != nil {
		s.kcache.Close()
	}
	s.codec.close()
	s.vcache.close()
	s.hits.close()
	s.closeWriteConn()
	return s.db.Close()
}

// tx runs fn in a write transaction.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	conn, err := s.writeConn(ctx)
	if err != nil {
		return s.wrapBusy(err)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		s.dropWriteConn(err)
		return s.wrapBusy(err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		s.dropWriteConn(err)
		return s.wrapBusy(err)
	}
	err = tx.Commit()
	s.dropWriteConn(err)
	return s.wrapBusy(err)
}

// writeConn returns the write connection, opening it if need be; writeMu
// is held. One connection keeps the index's hot pages in its cache from
// one batch to the next, and the readers' connections keep their smaller
// caches. Settle closes it at the end of a run of writes.
func (s *Store) writeConn(ctx context.Context) (*sql.Conn, error) {
	if s.wconn != nil {
		return s.wconn, nil
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, `PRAGMA cache_size = -`+strconv.Itoa(writeCacheKiB)); err != nil {
		conn.Close()
		return nil, err
	}
	s.wconn = conn
	return conn, nil
}

// closeWriteConn closes the write connection, and so frees its cache.
func (s *Store) closeWriteConn() {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.wconn != nil {
		s.wconn.Close()
		s.wconn = nil
	}
}

// dropWriteConn closes the write connection after an error that may have
// left it unusable (the next write opens another); writeMu is held.
func (s *Store) dropWriteConn(err error) {
	if err == nil || s.wconn == nil {
		return
	}
	s.wconn.Close()
	s.wconn = nil
}

func (s *Store) wrapBusy(err error) error {
	if err != nil && (strings.Contains(err.Error(), "SQLITE_BUSY") || strings.Contains(err.Error(), "database is locked")) {
		return fmt.Errorf("%w (%s): %v", store.ErrLocked, s.path, err)
	}
	return err
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// Package postgres is the scale-out store: PostgreSQL with the pgvector
// extension, behind the same store.Store contract as the embedded SQLite
// driver. It keeps the same BM25 postings (package bm25) in segment rows and
// scores them with the same code, so a query ranks the same chunks with the
// same scores in both stores; vectors live in a pgvector column with an HNSW
// index (cosine).
package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/bm25"
)

// Options configure Open. Settings that belong with the location (schema,
// HNSW parameters) are read from the DSN's query string; see ParseDSN.
type Options struct {
	// Create makes the index (schema, tables, extension) when it does not
	// exist; without it a missing index is an error that says to index first.
	Create bool
	// Analyzer turns text into keyword terms; nil uses the default analyzer.
	Analyzer *analyze.Analyzer

	// CacheKeyword keeps the postings of recently queried terms decoded in
	// memory (bm25.Cache, up to bm25.DefaultCacheBytes), for processes that
	// answer many queries.
	CacheKeyword bool
	// KeywordCacheBytes bounds that cache (0: bm25.DefaultCacheBytes).
	KeywordCacheBytes int64

	// schema, when set (by tests), stops migrations at that version to make
	// an index as an older sagasu wrote it.
	schema int
}

// Settings are the sagasu-specific DSN parameters. They are removed from the
// DSN before it is handed to pgx; everything else (sslmode, pool_max_conns,
// connect_timeout, application_name, ...) keeps its usual libpq/pgx meaning.
type Settings struct {
	// Schema holds the index's tables (DSN "schema", default "sagasu"), so
	// one database can hold several indexes next to other applications' tables.
	Schema string
	// EfSearch is hnsw.ef_search for vector queries (DSN "hnsw_ef_search",
	// default 100). A query asking for more than EfSearch neighbours raises
	// it to k for that query.
	EfSearch int
	// IterativeScan is hnsw.iterative_scan (DSN "hnsw_iterative_scan":
	// off, relaxed_order or strict_order; default relaxed_order). With it, a
	// filtered vector query keeps walking the graph until k rows pass.
	IterativeScan string
	// MaxScanTuples is hnsw.max_scan_tuples (DSN "hnsw_max_scan_tuples",
	// 0 keeps pgvector's default of 20000).
	MaxScanTuples int
	// MaxConns caps the connections the store opens (DSN "pool_max_conns",
	// default 8).
	MaxConns int
	// M and EfConstruction build the HNSW index (DSN "hnsw_m", default 16,
	// and "hnsw_ef_construction", default 64); they apply when the vector
	// table is created.
	M, EfConstruction int
}

// DefaultSettings are used for parameters the DSN does not give.
func DefaultSettings() Settings {
	return Settings{Schema: "sagasu", EfSearch: 100, IterativeScan: "relaxed_order", MaxConns: 8, M: 16, EfConstruction: 64}
}

// ParseDSN splits a postgres:// or postgresql:// URL into the pgx
// connection string and sagasu's Settings.
func ParseDSN(dsn string) (string, Settings, error) {
	set := DefaultSettings()
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", set, fmt.Errorf("PostgreSQL DSN %q: want postgres://user:password@host:port/database?options", store.Redact(dsn))
	}
	q := u.Query()
	intParam := func(name string, dst *int, lo, hi int) error {
		v := q.Get(name)
		q.Del(name)
		if v == "" {
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("PostgreSQL DSN: %s=%q must be a number from %d to %d", name, v, lo, hi)
		}
		*dst = n
		return nil
	}
	if v := q.Get("schema"); v != "" {
		set.Schema = v
	}
	q.Del("schema")
	if v := q.Get("hnsw_iterative_scan"); v != "" {
		switch v {
		case "off", "relaxed_order", "strict_order":
			set.IterativeScan = v
		default:
			return "", set, fmt.Errorf("PostgreSQL DSN: hnsw_iterative_scan=%q must be off, relaxed_order or strict_order", v)
		}
	}
	q.Del("hnsw_iterative_scan")
	for _, p := range []struct {
		name   string
		dst    *int
		lo, hi int
	}{
		{"hnsw_ef_search", &set.EfSearch, 1, 1000},
		{"hnsw_max_scan_tuples", &set.MaxScanTuples, 1, 1 << 30},
		{"pool_max_conns", &set.MaxConns, 1, 1000},
		{"hnsw_m", &set.M, 2, 100},
		{"hnsw_ef_construction", &set.EfConstruction, 4, 1000},
	} {
		if err := intParam(p.name, p.dst, p.lo, p.hi); err != nil {
			return "", set, err
		}
	}
	u.RawQuery = q.Encode()
	return u.String(), set, nil
}

// Store is a PostgreSQL-backed store.Store.
type Store struct {
	pool *pool
	cfg  *pgx.ConnConfig
	set  Settings
	an   *analyze.Analyzer
	// params are the keyword scoring parameters pinned in the index.
	params bm25.Params
	where  string      // "schema S of database D at host:port", for messages
	vecOID uint32      // OID of pgvector's vector type
	kcache *bm25.Cache // nil unless Options.CacheKeyword

	// mergePage is how many terms a segment merge reads at a time.
	mergePage int

	// writeMu serialises writers inside this process; an advisory
	// transaction lock serialises processes.
	writeMu sync.Mutex

	// beforeCommit, when set (by tests), runs inside Replace's transaction
	// after every row is sent and before the commit.
	beforeCommit func()
}

var _ store.Driver = (*Store)(nil)

// ErrNoIndex means the schema holds no index and Create was not set.
var ErrNoIndex = errors.New("no index")

// Open connects to the database a postgres:// DSN names and brings the
// index's schema up to date (creating it with Options.Create). The Store
// checks every call before the driver sees it (store.New).
func Open(ctx context.Context, dsn string, opt Options) (store.Store, error) {
	return store.Opened(openDriver(ctx, dsn, opt))
}

// openDriver opens the driver under Open's Store.
func openDriver(ctx context.Context, dsn string, opt Options) (*Store, error) {
	connStr, set, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	cfg, err := pgx.ParseConfig(connStr)
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL DSN %q: %w", store.Redact(dsn), err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	an := opt.Analyzer
	if an == nil {
		an = analyze.New(analyze.Options{})
	}
	s := &Store{
		cfg: cfg, set: set, an: an, mergePage: 4096,
		kcache: keywordCache(opt.CacheKeyword, opt.KeywordCacheBytes),
		where: fmt.Sprintf("schema %q of database %q at %s", set.Schema, cfg.Database,
			net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))),
	}
	extSchema, err := s.bootstrap(ctx, opt.Create, cmp.Or(opt.schema, SchemaVersion))
	if err != nil {
		return nil, err
	}
	// Every pooled connection sees the index's schema first and the
	// extension's schema (for the vector type and its operators) second.
	pcfg := cfg.Copy()
	rp := pcfg.RuntimeParams
	rp["search_path"] = quoteIdent(set.Schema) + ", " + quoteIdent(extSchema)
	rp["hnsw.ef_search"] = strconv.Itoa(set.EfSearch)
	rp["hnsw.iterative_scan"] = set.IterativeScan
	if set.MaxScanTuples > 0 {
		rp["hnsw.max_scan_tuples"] = strconv.Itoa(set.MaxScanTuples)
	}
	s.pool = newPool(pcfg, set.MaxConns, func(ctx context.Context, c *pgx.Conn) error {
		registerVector(c.TypeMap(), s.vecOID)
		return nil
	})
	if err := s.pool.with(ctx, func(c *pgx.Conn) error { return c.Ping(ctx) }); err != nil {
		s.pool.close()
		return nil, s.connError(err)
	}
	return s, nil
}

// Analyzer returns the analyzer the keyword index is read and written with:
// the one given to Open, or the older one the index is pinned to when it
// could not be upgraded. Queries must be analysed with it.
func (s *Store) Analyzer() *analyze.Analyzer { return s.an }

// Close closes the connection pool.
func (s *Store) Close() error {
	if s.kcache != nil {
		s.kcache.Close() // its background load uses the pool
	}
	s.pool.close()
	return nil
}

// keywordCache returns a new keyword cache bounded at maxBytes, or nil
// when off.
func keywordCache(on bool, maxBytes int64) *bm25.Cache {
	if !on {
		return nil
	}
	return bm25.NewCache(maxBytes)
}

// Settings returns the DSN settings the store was opened with.
func (s *Store) Settings() Settings { return s.set }

// connError turns a failure to reach or log in to the server into a message
// that names the server and what to check.
func (s *Store) connError(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "28P01", "28000":
			return fmt.Errorf("PostgreSQL at %s refused the login: %s (check the user and password in --db)", s.hostPort(), pe.Message)
		case "3D000":
			return fmt.Errorf("PostgreSQL at %s: %s; create it first (createdb %s) or name another database in --db", s.hostPort(), pe.Message, s.cfg.Database)
		}
		return fmt.Errorf("PostgreSQL at %s: %w", s.hostPort(), err)
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || isNetErr(err) {
		return fmt.Errorf("cannot reach PostgreSQL at %s: %v (is the server running, and is --db right?)", s.hostPort(), err)
	}
	return fmt.Errorf("PostgreSQL at %s: %w", s.hostPort(), err)
}

func isNetErr(err error) bool {
	var ne net.Error
	return errors.As(err, &ne)
}

func (s *Store) hostPort() string {
	return net.JoinHostPort(s.cfg.Host, strconv.Itoa(int(s.cfg.Port)))
}

// quoteIdent quotes a SQL identifier.
func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// lockKey derives an advisory lock key for one index from its schema and a
// purpose. Advisory locks are already scoped to one database, so two indexes
// in two schemas (or two databases) never share a lock.
func (s *Store) lockKey(purpose string) int64 {
	return lockKey(purpose + "\x00" + s.set.Schema)
}

// lockKey hashes name into an advisory lock key.
func lockKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte("sagasu\x00" + name))
	return int64(h.Sum64())
}

// tx runs fn in a write transaction that holds the index's write lock, so
// writers in several processes take turns instead of colliding.
func (s *Store) tx(ctx context.Context, fn func(pgx.Tx) error) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	return s.do(ctx, func(c *pgx.Conn) error {
		return pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, s.lockKey("write")); err != nil {
				return err
			}
			return fn(tx)
		})
	})
}

// do runs fn on a pooled connection.
func (s *Store) do(ctx context.Context, fn func(*pgx.Conn) error) error {
	return s.wrap(s.pool.with(ctx, fn))
}

// each runs a query and calls fn for every row.
func (s *Store) each(ctx context.Context, fn func(pgx.Rows) error, sql string, args ...any) error {
	return s.do(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := fn(rows); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}

// row is a query of one row, run when it is scanned.
type row struct {
	s    *Store
	ctx  context.Context
	sql  string
	args []any
}

func (r row) Scan(dest ...any) error {
	return r.s.do(r.ctx, func(c *pgx.Conn) error { return c.QueryRow(r.ctx, r.sql, r.args...).Scan(dest...) })
}

// row returns a query of one row.
func (s *Store) row(ctx context.Context, sql string, args ...any) pgx.Row {
	return row{s, ctx, sql, args}
}

// wrap explains errors that come from losing the server; others pass as they are.
func (s *Store) wrap(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// Class 08 is connection exceptions, 57P operator intervention
		// (a shutdown or restart of the server).
		if !strings.HasPrefix(pe.Code, "08") && !strings.HasPrefix(pe.Code, "57P") {
			return err
		}
	} else if !isNetErr(err) && !errors.Is(err, io.ErrUnexpectedEOF) && !strings.Contains(err.Error(), "conn closed") {
		return err
	}
	return store.Unavailable(fmt.Errorf("lost the connection to PostgreSQL at %s (the server rolls back any unfinished write: run the command again once it is back): %w", s.hostPort(), err))
}

package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/bm25"
)

// migrations bring an index from version i to i+1, each in one transaction
// recorded in schema_migrations. Never edit a released migration; append one.
var migrations = []string{
	// 1: sources, contents, chunks (with their analysed terms as a tsvector),
	// keyword postings in segments, settings. Terms and URIs compare
	// byte-wise ("C") whatever the database's collation, so sources list in
	// the same order as in SQLite.
	`CREATE TABLE schema_migrations(version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
	CREATE TABLE meta(key text PRIMARY KEY, value text NOT NULL);
	CREATE TABLE sources(
		id text PRIMARY KEY,
		uri text COLLATE "C" NOT NULL UNIQUE,
		type text NOT NULL,
		format text NOT NULL,
		title text NOT NULL,
		hash text NOT NULL,
		size bigint NOT NULL,
		chunks integer NOT NULL,
		indexed_at bigint NOT NULL);
	CREATE TABLE contents(source_id text PRIMARY KEY, content text NOT NULL);
	CREATE SEQUENCE chunk_ids;
	CREATE TABLE chunks(
		id bigint PRIMARY KEY,
		source_id text NOT NULL,
		idx integer NOT NULL,
		text text NOT NULL,
		heading text NOT NULL,
		start_line integer NOT NULL,
		end_line integer NOT NULL,
		start_byte integer NOT NULL,
		end_byte integer NOT NULL,
		tokens integer NOT NULL,
		terms integer NOT NULL,
		chash text NOT NULL,
		tsv tsvector NOT NULL,
		UNIQUE(source_id, idx));
	CREATE INDEX chunks_chash ON chunks(chash);
	CREATE INDEX chunks_tsv ON chunks USING gin(tsv);
	CREATE TABLE chunk_segs(id bigint PRIMARY KEY, seg bigint NOT NULL) WITH (fillfactor = 70);
	CREATE SEQUENCE segment_ids;
	CREATE TABLE segments(seg bigint PRIMARY KEY, docs integer NOT NULL, tokens bigint NOT NULL);
	CREATE TABLE postings(
		term text COLLATE "C" NOT NULL,
		seg bigint NOT NULL,
		n integer NOT NULL,
		data bytea NOT NULL,
		PRIMARY KEY(term, seg));
	ALTER TABLE postings ALTER COLUMN data SET STORAGE EXTERNAL;
	CREATE INDEX postings_seg ON postings(seg);`,
	// 2: the run log (agent runs, chat threads) and its events. Times are
	// Unix microseconds and JSON is kept as text, exactly as in SQLite;
	// last_seq is the run's last event.
	`CREATE TABLE runs(
		id text PRIMARY KEY,
		kind text NOT NULL,
		title text NOT NULL,
		status text NOT NULL,
		created bigint NOT NULL,
		updated bigint NOT NULL,
		meta text NOT NULL,
		last_seq bigint NOT NULL DEFAULT 0);
	CREATE INDEX runs_updated ON runs(updated);
	CREATE TABLE run_events(
		run_id text NOT NULL,
		seq bigint NOT NULL,
		time bigint NOT NULL,
		type text NOT NULL,
		data text NOT NULL,
		PRIMARY KEY(run_id, seq));`,
	// 3: BM25F. Postings keep term frequencies and lengths per field
	// (title, heading path, body); chunks keep each field's length (terms
	// is now the body's) and segments each field's tokens (tokens is now
	// the body's). The keyword index of an older schema is rebuilt from the
	// stored chunks by rebuildKeyword, in the same transaction.
	`ALTER TABLE segments ADD COLUMN ttokens bigint NOT NULL DEFAULT 0, ADD COLUMN htokens bigint NOT NULL DEFAULT 0;
	ALTER TABLE chunks ADD COLUMN tterms integer NOT NULL DEFAULT 0, ADD COLUMN hterms integer NOT NULL DEFAULT 0;
	DELETE FROM postings;
	DELETE FROM segments;`,
	// 4: a run's lease (see store.Leases): its owner as JSON, the owner's
	// token that conditional updates compare, and when the lease ends
	// (Unix microseconds).
	`ALTER TABLE runs ADD COLUMN owner text NOT NULL DEFAULT '',
		ADD COLUMN owner_token text NOT NULL DEFAULT '',
		ADD COLUMN lease_until bigint NOT NULL DEFAULT 0;`,
}

// SchemaVersion is the schema version this build writes.
var SchemaVersion = len(migrations)

// Keys of settings pinned in meta; the SQLite driver uses the same ones.
const (
	metaAnalyzer  = "analyzer.version" // the analyzer that built the keyword index
	metaVectorDim = "vectors.dim"      // dimension of chunk_vectors
)

// bootstrap checks what the schema holds, creates or upgrades it, and
// returns the schema that holds the vector extension. It runs on a
// connection of its own under a database-wide advisory lock, so two
// processes opening the same index at once take turns.
func (s *Store) bootstrap(ctx context.Context, create bool, target int) (string, error) {
	conn, err := pgx.ConnectConfig(ctx, s.cfg)
	if err != nil {
		return "", s.connError(err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, lockKey("migrate")); err != nil {
		return "", s.wrap(fmt.Errorf("open index in %s: %w", s.where, err))
	}
	// The lock is database-wide (creating the extension is), and goes with
	// the connection: no explicit unlock is needed.

	var hasSchema, hasMigrations, hasMeta bool
	var tables int
	err = conn.QueryRow(ctx, `SELECT
		EXISTS(SELECT 1 FROM pg_namespace WHERE nspname = $1),
		to_regclass(quote_ident($1) || '.schema_migrations') IS NOT NULL,
		to_regclass(quote_ident($1) || '.meta') IS NOT NULL,
		(SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'f'))`, s.set.Schema).
		Scan(&hasSchema, &hasMigrations, &hasMeta, &tables)
	if err != nil {
		return "", s.wrap(fmt.Errorf("open index in %s: %w", s.where, err))
	}
	switch {
	case hasMigrations && !hasMeta, !hasMigrations && tables > 0:
		return "", fmt.Errorf("open index in %s: %w: the schema holds tables of another program; add ?schema=NAME to --db to keep the index in a schema of its own",
			s.where, store.ErrForeign)
	case !hasMigrations && !create:
		return "", fmt.Errorf("%w in %s: run `sagasu index PATH --db ...` with this DSN first, or check the schema= and database in --db",
			ErrNoIndex, s.where)
	}

	extSchema, err := s.ensureExtension(ctx, conn)
	if err != nil {
		return "", err
	}
	if !hasSchema {
		if _, err := conn.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+quoteIdent(s.set.Schema)); err != nil {
			return "", fmt.Errorf("create schema %q: %w", s.set.Schema, err)
		}
	}
	if _, err := conn.Exec(ctx, `SELECT set_config('search_path', $1, false)`, quoteIdent(s.set.Schema)+", "+quoteIdent(extSchema)); err != nil {
		return "", s.wrap(err)
	}
	version := 0
	if hasMigrations {
		if err := conn.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&version); err != nil {
			return "", s.wrap(fmt.Errorf("open index in %s: %w", s.where, err))
		}
	}
	if version > SchemaVersion {
		return "", fmt.Errorf("open index in %s: %w (schema %d, this build knows up to %d): upgrade sagasu",
			s.where, store.ErrTooNew, version, SchemaVersion)
	}
	for v := version; v < target; v++ {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, migrations[v]); err != nil {
				return err
			}
			if v == 2 {
				if err := s.rebuildKeyword(ctx, tx); err != nil {
					return err
				}
				// The scoring parameters are pinned with the postings
				// they apply to.
				if _, err := tx.Exec(ctx, `INSERT INTO meta(key, value) VALUES($1, $2) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, bm25.MetaKey, bm25.DefaultParams().String()); err != nil {
					return err
				}
			}
			if v == 0 {
				if _, err := tx.Exec(ctx, `INSERT INTO meta(key, value) VALUES($1, $2)`, metaAnalyzer, s.an.Signature()); err != nil {
					return err
				}
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations(version) VALUES($1)`, v+1)
			return err
		})
		if err != nil {
			return "", s.wrap(fmt.Errorf("open index in %s: migrate schema to version %d: %w", s.where, v+1, err))
		}
	}
	var pinned string
	err = conn.QueryRow(ctx, `SELECT value FROM meta WHERE key = $1`, metaAnalyzer).Scan(&pinned)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return "", s.wrap(fmt.Errorf("open index in %s: %w", s.where, err))
	}
	if err := s.pinAnalyzer(ctx, conn, pinned); err != nil {
		return "", err
	}
	var scoring string
	err = conn.QueryRow(ctx, `SELECT value FROM meta WHERE key = $1`, bm25.MetaKey).Scan(&scoring)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return "", s.wrap(fmt.Errorf("open index in %s: %w", s.where, err))
	}
	if scoring == "" && target < SchemaVersion {
		// A test's index of an older schema, which scores nothing.
		scoring = bm25.DefaultParams().String()
	}
	if s.params, err = bm25.ParseParams(scoring); err != nil {
		return "", fmt.Errorf("open index in %s: %w: a newer sagasu wrote it: upgrade sagasu, or drop the schema and index again", s.where, err)
	}
	if err := conn.QueryRow(ctx, `SELECT to_regtype(quote_ident($1) || '.vector')::oid`, extSchema).Scan(&s.vecOID); err != nil {
		return "", s.wrap(fmt.Errorf("open index in %s: find the vector type: %w", s.where, err))
	}
	return extSchema, nil
}

// pinAnalyzer settles the analyzer of an index pinned to pinned, as the
// SQLite driver does: an index of an older analyzer version has its keyword
// index rebuilt with this build's analyzer in one transaction; one that may
// not be written (a read-only role or standby) is read with the analyzer it
// was built with.
func (s *Store) pinAnalyzer(ctx context.Context, conn *pgx.Conn, pinned string) error {
	old, upgrade, err := s.an.Pinned(pinned)
	if err != nil {
		return fmt.Errorf("open index in %s: %w; or drop the schema (DROP SCHEMA %s CASCADE) and index again", s.where, err, quoteIdent(s.set.Schema))
	}
	if !upgrade {
		return nil
	}
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		for _, q := range []string{`DELETE FROM postings`, `DELETE FROM segments`} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		if err := s.rebuildKeyword(ctx, tx); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE meta SET value = $1 WHERE key = $2`, s.an.Signature(), metaAnalyzer); err != nil {
			return err
		}
		return bumpKeywordVersion(ctx, tx)
	})
	var pe *pgconn.PgError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pe) && (pe.Code == "25006" || pe.Code == "42501"): // read-only transaction, no privilege
		s.an = old
		return nil
	}
	return s.wrap(fmt.Errorf("open index in %s: upgrade its keyword index from analyzer %q to %q: %w", s.where, pinned, s.an.Signature(), err))
}

// ensureExtension makes sure pgvector is installed in the database and
// returns its schema; when the server does not have it, the error says how
// to install it.
func (s *Store) ensureExtension(ctx context.Context, conn *pgx.Conn) (string, error) {
	var schema string
	find := func() error {
		return conn.QueryRow(ctx, `SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'`).Scan(&schema)
	}
	err := find()
	if err == nil {
		return schema, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return "", s.wrap(err)
	}
	var available bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS(SELECT 1 FROM pg_available_extensions WHERE name = 'vector')`).Scan(&available); err != nil {
		return "", s.wrap(err)
	}
	if !available {
		return "", s.noPgvector(nil)
	}
	_, err = conn.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS vector`)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42501" {
		// No right to create in the default schema (PostgreSQL 15 takes it
		// from ordinary users in public): put it beside the index.
		if _, err2 := conn.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+quoteIdent(s.set.Schema)); err2 == nil {
			_, err = conn.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS vector SCHEMA `+quoteIdent(s.set.Schema))
		}
	}
	if err != nil {
		return "", s.noPgvector(err)
	}
	if err := find(); err != nil {
		return "", s.wrap(err)
	}
	return schema, nil
}

// noPgvector explains a missing or uncreatable pgvector extension.
func (s *Store) noPgvector(err error) error {
	var pe *pgconn.PgError
	if err != nil && errors.As(err, &pe) && pe.Code == "42501" {
		return fmt.Errorf("PostgreSQL at %s has pgvector, but this user may not enable it in database %q: ask its owner to run CREATE EXTENSION vector; (%s)",
			s.hostPort(), s.cfg.Database, pe.Message)
	}
	msg := fmt.Sprintf("PostgreSQL at %s does not have the pgvector extension, which sagasu needs: install it on the database server "+
		"(Debian/Ubuntu: apt-get install postgresql-NN-pgvector, or build it from source, as scripts/postgres.sh does; "+
		"managed services: enable the \"vector\" extension), then run sagasu again", s.hostPort())
	if err != nil {
		return fmt.Errorf("%s: %w", msg, err)
	}
	return errors.New(msg)
}

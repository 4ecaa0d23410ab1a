package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/bm25"
)

// migrations bring a database from user_version i to i+1. Never edit a
// released migration; append a new one.
var migrations = []string{
	// 1: sources, contents, chunks, keyword postings in segments, settings.
	`CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
	CREATE TABLE sources(
		id TEXT PRIMARY KEY,
		uri TEXT NOT NULL UNIQUE,
		type TEXT NOT NULL,
		format TEXT NOT NULL,
		title TEXT NOT NULL,
		hash TEXT NOT NULL,
		size INTEGER NOT NULL,
		chunks INTEGER NOT NULL,
		indexed_at INTEGER NOT NULL);
	CREATE TABLE contents(source_id TEXT PRIMARY KEY, content TEXT NOT NULL);
	CREATE TABLE chunks(
		id INTEGER PRIMARY KEY AUTOINCREMENT,
		source_id TEXT NOT NULL,
		idx INTEGER NOT NULL,
		text TEXT NOT NULL,
		heading TEXT NOT NULL,
		start_line INTEGER NOT NULL,
		end_line INTEGER NOT NULL,
		start_byte INTEGER NOT NULL,
		end_byte INTEGER NOT NULL,
		tokens INTEGER NOT NULL,
		terms INTEGER NOT NULL,
		chash TEXT NOT NULL,
		UNIQUE(source_id, idx));
	CREATE INDEX chunks_chash ON chunks(chash);
	CREATE TABLE postings(
		term TEXT NOT NULL,
		seg INTEGER NOT NULL,
		n INTEGER NOT NULL,
		data BLOB NOT NULL,
		PRIMARY KEY(term, seg)) WITHOUT ROWID;
	CREATE TABLE segments(seg INTEGER PRIMARY KEY, docs INTEGER NOT NULL, tokens INTEGER NOT NULL);`,
	// 2: the segment of each chunk without keyword terms. Such a chunk is in
	// no postings row, where a delete learns the segment of the others, yet
	// its segment counts it. (Those written by version 1 stay unknown.)
	`CREATE TABLE termless_chunks(id INTEGER PRIMARY KEY, seg INTEGER NOT NULL);
	CREATE INDEX termless_chunks_seg ON termless_chunks(seg);`,
	// 3: the run log (agent runs, chat threads) and its events. Times are
	// Unix microseconds; last_seq is the run's last event.
	`CREATE TABLE runs(
		id TEXT PRIMARY KEY,
		kind TEXT NOT NULL,
		title TEXT NOT NULL,
		status TEXT NOT NULL,
		created INTEGER NOT NULL,
		updated INTEGER NOT NULL,
		meta TEXT NOT NULL,
		last_seq INTEGER NOT NULL DEFAULT 0);
	CREATE INDEX runs_updated ON runs(updated);
	CREATE TABLE run_events(
		run_id TEXT NOT NULL,
		seq INTEGER NOT NULL,
		time INTEGER NOT NULL,
		type TEXT NOT NULL,
		data TEXT NOT NULL,
		PRIMARY KEY(run_id, seq)) WITHOUT ROWID;`,
	// 4: BM25F. Postings keep term frequencies and lengths per field
	// (title, heading path, body); segments count each field's tokens:
	// tokens is now the body's. The keyword index of an older schema is
	// rebuilt from the stored chunks by rebuildKeyword, in the same
	// transaction.
	`ALTER TABLE segments ADD COLUMN ttokens INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE segments ADD COLUMN htokens INTEGER NOT NULL DEFAULT 0;
	DELETE FROM postings;
	DELETE FROM segments;
	DELETE FROM termless_chunks;`,
	// 5: content in zstd blocks (see blockSize), and a chunk's text NULL
	// when it is the span start_byte..end_byte of that content. The tables
	// made here are filled from contents and chunks by splitContents, which
	// then drops those and renames chunks_v5 to chunks, in the same
	// transaction.
	// Postings move to a rowid table: in the WITHOUT ROWID table every list
	// longer than about 1 KB spilled into overflow pages that were mostly
	// empty (a quarter of its pages' bytes were unused), where a rowid
	// table keeps rows up to 4 KB in its leaves and fills overflow pages.
	`CREATE TABLE postings_v5(
		term TEXT NOT NULL,
		seg INTEGER NOT NULL,
		n INTEGER NOT NULL,
		data BLOB NOT NULL);
	INSERT INTO postings_v5(term, seg, n, data) SELECT term, seg, n, data FROM postings ORDER BY seg, term;
	DROP TABLE postings;
	ALTER TABLE postings_v5 RENAME TO postings;
	CREATE UNIQUE INDEX postings_term_seg ON postings(term, seg);
	CREATE TABLE content_blocks(
		source_id TEXT NOT NULL,
		blk INTEGER NOT NULL,
		data BLOB NOT NULL,
		PRIMARY KEY(source_id, blk));
	CREATE TABLE chunks_v5(
		id INTEGER PRIMARY KEY AUTOINCREMENT,
		source_id TEXT NOT NULL,
		idx INTEGER NOT NULL,
		text TEXT,
		heading TEXT NOT NULL,
		start_line INTEGER NOT NULL,
		end_line INTEGER NOT NULL,
		start_byte INTEGER NOT NULL,
		end_byte INTEGER NOT NULL,
		tokens INTEGER NOT NULL,
		terms INTEGER NOT NULL,
		chash TEXT NOT NULL,
		UNIQUE(source_id, idx));`,
	// 6: the IDs of deleted vectors, in order, so that a long-lived
	// process updates its in-memory vector index instead of reloading it
	// (see vecCache). Kept to its last goneKept entries.
	`CREATE TABLE vector_gone(seq INTEGER PRIMARY KEY AUTOINCREMENT, id INTEGER NOT NULL);`,
	// 7: a run's lease (see store.Leases): its owner as JSON, the owner's
	// token that conditional updates compare, and when the lease ends
	// (Unix microseconds).
	`ALTER TABLE runs ADD COLUMN owner TEXT NOT NULL DEFAULT '';
	ALTER TABLE runs ADD COLUMN owner_token TEXT NOT NULL DEFAULT '';
	ALTER TABLE runs ADD COLUMN lease_until INTEGER NOT NULL DEFAULT 0;`,
	// 8: the index of chunks by the hash of their context text exists only
	// while the index holds vectors (the hash finds a stored vector to
	// reuse; InitVectors creates it, the migration keeps it where vectors
	// are): its keys are random, so every batch of a keyword-only index
	// paid an insert in pages all over it (9.7 MB at 100,000 chunks).
	`DROP INDEX IF EXISTS chunks_chash;`,
	// 9: the dictionaries content blocks are compressed with (dict.go),
	// under the zstd dictionary ID their frames name.
	`CREATE TABLE content_dicts(id INTEGER PRIMARY KEY, data BLOB NOT NULL);`,
}

// SchemaVersion is the schema version this build writes.
var SchemaVersion = len(migrations)

// metaAnalyzer pins the analyzer that built the keyword index.
const metaAnalyzer = "analyzer.version"

func (s *Store) migrate(ctx context.Context, target int) error {
	// The three reads are one snapshot: another process creating the same
	// new index commits its tables and its application_id together.
	// A deferred (read) transaction, not the write lock: opening an index
	// for queries must not wait for a writer.
	var appID, version, objects int
	err := s.readSnapshot(ctx, func(conn *sql.Conn) error {
		if err := conn.QueryRowContext(ctx, `PRAGMA application_id`).Scan(&appID); err != nil {
			return err
		}
		if err := conn.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
			return err
		}
		return conn.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master`).Scan(&objects)
	})
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("open index %q: %w", s.path, err)
		}
		return fmt.Errorf("open index %q: %w (is the file a corrupt database? move it away and index again)", s.path, err)
	}
	switch {
	case appID != applicationID && objects > 0:
		return fmt.Errorf("open index %q: %w: it is a SQLite database of another program; pass --db with another path", s.path, store.ErrForeign)
	case version > SchemaVersion:
		return fmt.Errorf("open index %q: %w (schema %d, this build knows up to %d): upgrade sagasu", s.path, store.ErrTooNew, version, SchemaVersion)
	}
	for v := version; v < target; v++ {
		err := s.tx(ctx, func(tx *sql.Tx) error {
			// Another process may have migrated since we looked (two
			// first runs on one new file): the write lock this
			// transaction holds makes the version read here the truth.
			var cur int
			if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&cur); err != nil {
				return err
			}
			if cur > v {
				return nil
			}
			if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
				return err
			}
			if v == 4 {
				if err := s.splitContents(ctx, tx); err != nil {
					return err
				}
			}
			if v == 7 {
				if err := createHashIndexIfVectors(ctx, tx); err != nil {
					return err
				}
			}
			if v == 3 {
				if err := s.rebuildKeyword(ctx, tx); err != nil {
					return err
				}
				// The scoring parameters are pinned with the postings
				// they apply to.
				if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)`, bm25.MetaKey, bm25.DefaultParams().String()); err != nil {
					return err
				}
			}
			if v == 0 {
				if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA application_id = %d`, applicationID)); err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES(?, ?)`, metaAnalyzer, s.an.Signature()); err != nil {
					return err
				}
			}
			_, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, v+1))
			return err
		})
		if err != nil {
			return fmt.Errorf("open index %q: migrate schema to version %d: %w", s.path, v+1, err)
		}
	}
	pinned, err := s.Meta(ctx, metaAnalyzer)
	if err != nil {
		return fmt.Errorf("open index %q: %w", s.path, err)
	}
	if err := s.pinAnalyzer(ctx, pinned); err != nil {
		return err
	}
	scoring, err := s.Meta(ctx, bm25.MetaKey)
	if err != nil {
		return fmt.Errorf("open index %q: %w", s.path, err)
	}
	if scoring == "" && target < SchemaVersion {
		// A test's index of an older schema, which scores nothing.
		scoring = bm25.DefaultParams().String()
	}
	if s.params, err = bm25.ParseParams(scoring); err != nil {
		return fmt.Errorf("open index %q: %w: a newer sagasu wrote it: upgrade sagasu, or delete the index and run `sagasu index` again", s.path, err)
	}
	return nil
}

// createHashIndexIfVectors creates the index of chunks by context hash
// when the index holds vectors (migration 8).
func createHashIndexIfVectors(ctx context.Context, tx *sql.Tx) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE name = 'chunk_vectors'`).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, createHashIndex)
	return err
}

// createHashIndex makes the index VectorsByHash looks chunks up with.
const createHashIndex = `CREATE INDEX IF NOT EXISTS chunks_chash ON chunks(chash)`

// pinAnalyzer settles the analyzer of an index pinned to pinned. An index
// of an older analyzer version is upgraded in place: its keyword index is
// rebuilt from the stored chunks with this build's analyzer in one
// transaction (a kill midway leaves it as it was). When the file cannot be
// written the store reads it with the analyzer it was built with, which
// stays correct.
func (s *Store) pinAnalyzer(ctx context.Context, pinned string) error {
	old, upgrade, err := s.an.Pinned(pinned)
	if err != nil {
		return fmt.Errorf("open index %q: %w; or delete the file and index again", s.path, err)
	}
	if !upgrade {
		return nil
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		var cur string
		if err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, metaAnalyzer).Scan(&cur); err != nil {
			return err
		}
		if cur == s.an.Signature() {
			return nil // another process upgraded it meanwhile
		}
		for _, q := range []string{`DELETE FROM postings`, `DELETE FROM segments`, `DELETE FROM termless_chunks`} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		if err := s.rebuildKeyword(ctx, tx); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE meta SET value = ? WHERE key = ?`, s.an.Signature(), metaAnalyzer); err != nil {
			return err
		}
		return bumpKeywordVersion(ctx, tx)
	})
	switch {
	case err == nil:
		return nil
	case isReadOnly(err):
		s.an = old
		return nil
	}
	return fmt.Errorf("open index %q: upgrade its keyword index from analyzer %q to %q: %w", s.path, pinned, s.an.Signature(), err)
}

// isReadOnly reports SQLite's "attempt to write a readonly database".
func isReadOnly(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "SQLITE_READONLY") || strings.Contains(msg, "readonly database")
}

// encodeVector stores a vector as little-endian float32s, the layout
// sqlite-vec reads as well.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// decodeVector reverses encodeVector.
func decodeVector(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

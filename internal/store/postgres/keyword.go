package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/bm25"
)

// bumpKeywordVersion records, inside tx, that postings or collection
// statistics changed.
func bumpKeywordVersion(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, `INSERT INTO meta(key, value) VALUES($1, '1')
		ON CONFLICT(key) DO UPDATE SET value = (meta.value::bigint + 1)::text`, bm25.VersionKey)
	return err
}

// keywordVersionQuery names the state of the keyword index: the write count
// and, for writers that predate it, the shape of the segments table.
const keywordVersionQuery = `SELECT COALESCE((SELECT value FROM meta WHERE key = '` + bm25.VersionKey + `'), '0')
	|| '/' || COUNT(*) || '/' || COALESCE(SUM(docs), 0) || '/' || COALESCE(MAX(seg), 0) FROM segments`

// loadPostings reads the collection statistics and the postings rows of
// terms in one round trip.
func loadPostings(ctx context.Context, c *pgx.Conn, terms []string) (bm25.Corpus, bm25.ListSet, error) {
	var corpus bm25.Corpus
	var ls bm25.ListSet
	b := &pgx.Batch{}
	b.Queue(`SELECT COALESCE(SUM(docs), 0), COALESCE(SUM(ttokens), 0)::bigint, COALESCE(SUM(htokens), 0)::bigint, COALESCE(SUM(tokens), 0)::bigint FROM segments`).QueryRow(func(r pgx.Row) error {
		return r.Scan(&corpus.Docs, &corpus.Tokens[bm25.Title], &corpus.Tokens[bm25.Heading], &corpus.Tokens[bm25.Body])
	})
	if len(terms) > 0 {
		b.Queue(`SELECT term, data FROM postings WHERE term = ANY($1)`, terms).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var term string
				var data []byte
				if err := rows.Scan(&term, &data); err != nil {
					return err
				}
				ls.Add(term, data)
			}
			return rows.Err()
		})
	}
	err := c.SendBatch(ctx, b).Close()
	return corpus, ls, err
}

// kwLoader is bm25.Scanner over the store.
type kwLoader struct{ s *Store }

// Version implements bm25.Loader.
func (l kwLoader) Version(ctx context.Context) (string, error) {
	var v string
	err := l.s.row(ctx, keywordVersionQuery).Scan(&v)
	return v, err
}

// snapshot runs fn in a read-only repeatable-read transaction: one snapshot.
func (l kwLoader) snapshot(ctx context.Context, fn func(pgx.Tx) error) error {
	return l.s.do(ctx, func(c *pgx.Conn) error {
		tx, err := c.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
		if err != nil {
			return err
		}
		defer tx.Rollback(context.WithoutCancel(ctx))
		return fn(tx)
	})
}

// Load implements bm25.Loader.
func (l kwLoader) Load(ctx context.Context, terms []string) (version string, corpus bm25.Corpus, ls bm25.ListSet, err error) {
	err = l.snapshot(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, keywordVersionQuery).Scan(&version); err != nil {
			return err
		}
		var err error
		corpus, ls, err = loadPostings(ctx, tx.Conn(), terms)
		return err
	})
	return version, corpus, ls, err
}

// Scan implements bm25.Scanner.
func (l kwLoader) Scan(ctx context.Context, start func(string, bm25.Corpus) error, each func(string, []byte) error) error {
	return l.snapshot(ctx, func(tx pgx.Tx) error {
		var version string
		if err := tx.QueryRow(ctx, keywordVersionQuery).Scan(&version); err != nil {
			return err
		}
		corpus, _, err := loadPostings(ctx, tx.Conn(), nil)
		if err != nil {
			return err
		}
		if err := start(version, corpus); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT term, data FROM postings ORDER BY term`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var term string
			var data []byte
			if err := rows.Scan(&term, &data); err != nil {
				return err
			}
			if err := each(term, data); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}

var _ store.Warmer = (*Store)(nil)

// Warm implements store.Warmer: it loads the keyword index into the keyword
// cache. A store opened without caches has nothing to warm.
func (s *Store) Warm(ctx context.Context) error {
	if s.kcache == nil {
		return nil
	}
	if err := s.kcache.Preload(ctx, kwLoader{s}, s.params); err != nil {
		return fmt.Errorf("load the keyword index into memory: %w", err)
	}
	return nil
}

// KeywordCacheBytes reports the memory of the keyword cache (0 without one).
func (s *Store) KeywordCacheBytes() int64 {
	if s.kcache == nil {
		return 0
	}
	return s.kcache.Bytes()
}

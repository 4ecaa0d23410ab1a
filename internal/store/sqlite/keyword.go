package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/bm25"
)

// bumpKeywordVersion records, inside tx, that postings or collection
// statistics changed.
func bumpKeywordVersion(ctx context.Context, tx *sql.Tx) error {
	return bumpCounter(ctx, tx, bm25.VersionKey)
}

// keywordVersionQuery names the state of the keyword index: the write count
// and, for writers that predate it, the shape of the segments table.
const keywordVersionQuery = `SELECT COALESCE((SELECT value FROM meta WHERE key = '` + bm25.VersionKey + `'), '0')
	|| '/' || COUNT(*) || '/' || COALESCE(SUM(docs), 0) || '/' || COALESCE(MAX(seg), 0) FROM segments`

const corpusQuery = `SELECT COALESCE(SUM(docs),0), COALESCE(SUM(ttokens),0), COALESCE(SUM(htokens),0), COALESCE(SUM(tokens),0) FROM segments`

// querier is what *sql.DB and *sql.Conn share.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// KeywordSearch implements store.Store. A long-lived process answers from
// its cache of decoded lists (bm25.Cache); others score the stored postings
// directly.
func (s *Store) KeywordSearch(ctx context.Context, terms []string, k int, f store.Filter) ([]store.Scored, error) {
	if len(terms) == 0 || k <= 0 {
		return nil, nil
	}
	allow, err := s.allowFunc(ctx, f)
	if err != nil {
		return nil, err
	}
	if s.kcache != nil {
		res, err := s.kcache.Search(ctx, kwLoader{s}, s.params, terms, k, allow)
		if err != nil {
			return nil, fmt.Errorf("keyword search: %w", err)
		}
		return res, nil
	}
	res, err := s.scoreStored(ctx, terms, k, allow)
	if err != nil {
		return nil, fmt.Errorf("keyword search: %w", err)
	}
	return res, nil
}

// scoreStored ranks chunks straight from the stored postings, for
// processes without a keyword cache (one-shot commands): from one
// snapshot, the terms' document frequencies (from the rows' counts, which
// sit before the postings and are read without them), then each term's
// rows in query order, scored as they are read, in place.
func (s *Store) scoreStored(ctx context.Context, terms []string, k int, allow func(int64) bool) ([]store.Scored, error) {
	seen := make(map[string]bool, len(terms))
	uniq := make([]string, 0, len(terms)) // a term given twice counts once
	for _, t := range terms {
		if !seen[t] {
			seen[t] = true
			uniq = append(uniq, t)
		}
	}
	var out []store.Scored
	err := s.readSnapshot(ctx, func(conn *sql.Conn) error {
		var corpus bm25.Corpus
		if err := conn.QueryRowContext(ctx, corpusQuery).Scan(&corpus.Docs, &corpus.Tokens[bm25.Title], &corpus.Tokens[bm25.Heading], &corpus.Tokens[bm25.Body]); err != nil {
			return err
		}
		args := make([]any, len(uniq))
		for i, t := range uniq {
			args[i] = t
		}
		df := make(map[string]int, len(uniq))
		rows, err := conn.QueryContext(ctx, `SELECT term, SUM(n) FROM postings WHERE term IN (`+placeholders(len(uniq))+`) GROUP BY term`, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var t string
			var n int
			if err := rows.Scan(&t, &n); err != nil {
				rows.Close()
				return err
			}
			df[t] = n
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		acc := bm25.NewAccumulator(s.params, corpus)
		postings := 0
		for _, n := range df {
			postings += n
		}
		acc.Reserve(postings)
		byTerm, err := conn.PrepareContext(ctx, `SELECT data FROM postings WHERE term = ?`)
		if err != nil {
			return err
		}
		defer byTerm.Close()
		for _, t := range uniq {
			if df[t] == 0 {
				continue
			}
			rows, err := byTerm.QueryContext(ctx, t)
			if err != nil {
				return err
			}
			var data sql.RawBytes
			for rows.Next() {
				if err := rows.Scan(&data); err != nil {
					rows.Close()
					return err
				}
				if err := acc.Add(data, df[t]); err != nil {
					rows.Close()
					return fmt.Errorf("postings of %q: %w", t, err)
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		out = acc.Top(k, allow)
		return nil
	})
	return out, err
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

// loadPostings reads the collection statistics and the postings rows of
// terms.
func loadPostings(ctx context.Context, q querier, terms []string) (bm25.Corpus, bm25.ListSet, error) {
	var corpus bm25.Corpus
	var ls bm25.ListSet
	if err := q.QueryRowContext(ctx, corpusQuery).Scan(&corpus.Docs, &corpus.Tokens[bm25.Title], &corpus.Tokens[bm25.Heading], &corpus.Tokens[bm25.Body]); err != nil {
		return corpus, ls, err
	}
	if len(terms) == 0 {
		return corpus, ls, nil
	}
	args := make([]any, len(terms))
	for i, t := range terms {
		args[i] = t
	}
	err := eachPosting(ctx, q, func(term string, data []byte) error {
		ls.Add(term, data)
		return nil
	}, `SELECT term, data FROM postings WHERE term IN (`+placeholders(len(terms))+`)`, args...)
	return corpus, ls, err
}

// eachPosting runs a query of (term, data) postings rows and calls fn for
// each row.
func eachPosting(ctx context.Context, q querier, fn func(term string, data []byte) error, query string, args ...any) error {
	rows, err := q.QueryContext(ctx, query, args...)
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
		if err := fn(term, data); err != nil {
			return err
		}
	}
	return rows.Err()
}

// kwLoader is bm25.Loader over the store.
type kwLoader struct{ s *Store }

// Version implements bm25.Loader.
func (l kwLoader) Version(ctx context.Context) (string, error) {
	var v string
	err := l.s.db.QueryRowContext(ctx, keywordVersionQuery).Scan(&v)
	return v, err
}

// readSnapshot runs fn in a read transaction: its queries see one snapshot
// of the index, and writers are not held up.
func (s *Store) readSnapshot(ctx context.Context, fn func(*sql.Conn) error) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN DEFERRED`); err != nil {
		return err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `ROLLBACK`)
	return fn(conn)
}

// Load implements bm25.Loader, from one snapshot.
func (l kwLoader) Load(ctx context.Context, terms []string) (version string, corpus bm25.Corpus, ls bm25.ListSet, err error) {
	err = l.s.readSnapshot(ctx, func(conn *sql.Conn) error {
		if err := conn.QueryRowContext(ctx, keywordVersionQuery).Scan(&version); err != nil {
			return err
		}
		var err error
		corpus, ls, err = loadPostings(ctx, conn, terms)
		return err
	})
	return version, corpus, ls, err
}

// Scan implements bm25.Scanner: one snapshot of the whole postings table,
// in (term, segment) order.
func (l kwLoader) Scan(ctx context.Context, start func(string, bm25.Corpus) error, each func(string, []byte) error) error {
	return l.s.readSnapshot(ctx, func(conn *sql.Conn) error {
		var version string
		if err := conn.QueryRowContext(ctx, keywordVersionQuery).Scan(&version); err != nil {
			return err
		}
		corpus, _, err := loadPostings(ctx, conn, nil)
		if err != nil {
			return err
		}
		if err := start(version, corpus); err != nil {
			return err
		}
		// Read in place (bm25.Scanner: data is the callee's only during
		// the call): no copy, and one string per term rather than per row.
		rows, err := conn.QueryContext(ctx, `SELECT term, data FROM postings ORDER BY term`)
		if err != nil {
			return err
		}
		defer rows.Close()
		var term string
		var rawTerm, data sql.RawBytes
		for rows.Next() {
			if err := rows.Scan(&rawTerm, &data); err != nil {
				return err
			}
			if string(rawTerm) != term {
				term = string(rawTerm)
			}
			if err := each(term, data); err != nil {
				return err
			}
		}
		return rows.Err()
	})
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
	keep := f.SourceMatcher()
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
		if keep(id, uri, doc.SourceType(typ)) {
			out = append(out, id)
		}
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

// KeywordCacheBytes reports the memory of the keyword cache (0 without one).
func (s *Store) KeywordCacheBytes() int64 {
	if s.kcache == nil {
		return 0
	}
	return s.kcache.Bytes()
}

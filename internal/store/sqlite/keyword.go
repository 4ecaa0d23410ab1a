package sqlite

import (
	"context"
	"fmt"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/bm25"
)

// KeywordSearch implements store.Store.
func (s *Store) KeywordSearch(ctx context.Context, terms []string, k int, f store.Filter) ([]store.Scored, error) {
	if len(terms) == 0 || k <= 0 {
		return nil, nil
	}
	var corpus bm25.Corpus
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(docs),0), COALESCE(SUM(ttokens),0), COALESCE(SUM(htokens),0), COALESCE(SUM(tokens),0) FROM segments`).Scan(&corpus.Docs, &corpus.Tokens[bm25.Title], &corpus.Tokens[bm25.Heading], &corpus.Tokens[bm25.Body]); err != nil {
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
	return bm25.Score(s.params, corpus, ls.Lists(terms), k, allow)
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

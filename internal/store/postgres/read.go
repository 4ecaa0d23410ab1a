package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/glob"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/bm25"
	"github.com/sagasu-dev/sagasu/internal/store/internal/sqlrows"
)

// KeywordSearch implements store.Driver: the postings rows of the query's
// terms are read in one round trip with the collection statistics, and
// bm25.Score ranks them exactly as in every other store. A long-lived
// process answers from its cache of decoded lists (bm25.Cache) instead.
func (s *Store) KeywordSearch(ctx context.Context, terms []string, k int, f store.Filter) ([]store.Scored, error) {
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
	var corpus bm25.Corpus
	var ls bm25.ListSet
	if err := s.do(ctx, func(c *pgx.Conn) error {
		var err error
		corpus, ls, err = loadPostings(ctx, c, terms)
		return err
	}); err != nil {
		return nil, fmt.Errorf("keyword search: %w", err)
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
		if len(srcs) == 0 {
			return allowed, nil
		}
		err = s.each(ctx, func(r pgx.Rows) error {
			var id int64
			err := r.Scan(&id)
			allowed[id] = true
			return err
		}, `SELECT id FROM chunks WHERE source_id = ANY($1)`, srcs)
		return allowed, err
	})
}

// matchSources returns the IDs of the sources a filter keeps. The server
// narrows by types and IDs; every row is then matched by the rule all
// stores share (store.Filter.SourceMatcher), which adds the glob.
func (s *Store) matchSources(ctx context.Context, f store.Filter) ([]string, error) {
	keep := f.SourceMatcher()
	q := `SELECT id, uri, type FROM sources WHERE true`
	var args []any
	if len(f.Types) > 0 {
		types := make([]string, len(f.Types))
		for i, t := range f.Types {
			types[i] = string(t)
		}
		args = append(args, types)
		q += fmt.Sprintf(` AND type = ANY($%d)`, len(args))
	}
	if len(f.SourceIDs) > 0 {
		args = append(args, f.SourceIDs)
		q += fmt.Sprintf(` AND id = ANY($%d)`, len(args))
	}
	var out []string
	err := s.each(ctx, func(r pgx.Rows) error {
		var id, uri, typ string
		if err := r.Scan(&id, &uri, &typ); err != nil {
			return err
		}
		if keep(id, uri, doc.SourceType(typ)) {
			out = append(out, id)
		}
		return nil
	}, q, args...)
	return out, err
}

// DocFreq implements store.Driver.
func (s *Store) DocFreq(ctx context.Context, terms []string) (map[string]int, int, error) {
	var docs int
	out := make(map[string]int, len(terms))
	for _, t := range terms {
		out[t] = 0
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT COALESCE(SUM(docs), 0) FROM segments`).QueryRow(func(r pgx.Row) error { return r.Scan(&docs) })
	if len(terms) > 0 {
		b.Queue(`SELECT term, SUM(n) FROM postings WHERE term = ANY($1) GROUP BY term`, terms).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var t string
				var n int
				if err := rows.Scan(&t, &n); err != nil {
					return err
				}
				out[t] = n
			}
			return rows.Err()
		})
	}
	if err := s.do(ctx, func(c *pgx.Conn) error { return c.SendBatch(ctx, b).Close() }); err != nil {
		return nil, 0, err
	}
	return out, docs, nil
}

const sourceCols = `id, uri, type, format, title, hash, size, chunks, indexed_at`

func scanSource(r pgx.Row) (doc.Source, error) {
	var s doc.Source
	var typ, format string
	err := r.Scan(&s.ID, &s.URI, &typ, &format, &s.Title, &s.ContentHash, &s.Size, &s.Chunks, &s.IndexedAt)
	s.Type, s.Format = doc.SourceType(typ), doc.Format(format)
	return s, err
}

// Source implements store.Driver.
func (s *Store) Source(ctx context.Context, id string) (doc.Source, error) {
	src, err := scanSource(s.row(ctx, `SELECT `+sourceCols+` FROM sources WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return doc.Source{}, fmt.Errorf("source %q: %w", id, store.ErrNotFound)
	}
	return src, err
}

// Sources implements store.Driver. Without a glob the server pages; with
// one, the glob is matched here and the page counted after it.
func (s *Store) Sources(ctx context.Context, opt store.ListOptions) ([]doc.Source, error) {
	q := `SELECT ` + sourceCols + ` FROM sources`
	var args []any
	if opt.Type != "" {
		args = append(args, string(opt.Type))
		q += ` WHERE type = $1`
	}
	q += ` ORDER BY uri`
	if opt.PathGlob == "" {
		if opt.Limit > 0 {
			q += fmt.Sprintf(` LIMIT %d`, opt.Limit)
		}
		if opt.Offset > 0 {
			q += fmt.Sprintf(` OFFSET %d`, opt.Offset)
		}
	}
	var out []doc.Source
	skipped := 0
	err := s.each(ctx, func(r pgx.Rows) error {
		src, err := scanSource(r)
		if err != nil {
			return err
		}
		if opt.PathGlob != "" {
			if !glob.Match(opt.PathGlob, src.URI) {
				return nil
			}
			if skipped < opt.Offset {
				skipped++
				return nil
			}
			if opt.Limit > 0 && len(out) == opt.Limit {
				return nil
			}
		}
		out = append(out, src)
		return nil
	}, q, args...)
	return out, err
}

// Content implements store.Driver.
func (s *Store) Content(ctx context.Context, id string) (string, error) {
	var c string
	err := s.row(ctx, `SELECT content FROM contents WHERE source_id = $1`, id).Scan(&c)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("source %q: %w", id, store.ErrNotFound)
	}
	return c, err
}

// Chunks implements store.Driver.
func (s *Store) Chunks(ctx context.Context, sourceID string) ([]doc.Chunk, error) {
	var out []doc.Chunk
	err := s.each(ctx, func(r pgx.Rows) error {
		c, err := sqlrows.ScanChunk(r)
		out = append(out, c)
		return err
	}, `SELECT `+sqlrows.ChunkColumns+` FROM chunks c WHERE c.source_id = $1 ORDER BY c.idx`, sourceID)
	return out, err
}

// Hits implements store.Driver.
func (s *Store) Hits(ctx context.Context, ids []int64) ([]doc.Hit, error) {
	byID := map[int64]doc.Hit{}
	err := s.each(ctx, func(r pgx.Rows) error {
		var src doc.Source
		var typ, format string
		c, err := sqlrows.ScanChunk(r, &src.URI, &typ, &format, &src.Title, &src.ContentHash, &src.Size, &src.Chunks, &src.IndexedAt)
		src.ID, src.Type, src.Format = c.SourceID, doc.SourceType(typ), doc.Format(format)
		byID[c.ID] = doc.Hit{Chunk: c, Source: src}
		return err
	}, `SELECT `+sqlrows.ChunkColumns+`, s.uri, s.type, s.format, s.title, s.hash, s.size, s.chunks, s.indexed_at
		FROM chunks c JOIN sources s ON s.id = c.source_id WHERE c.id = ANY($1)`, ids)
	if err != nil {
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

// Meta implements store.Driver.
func (s *Store) Meta(ctx context.Context, key string) (string, error) {
	var v string
	err := s.row(ctx, `SELECT value FROM meta WHERE key = $1`, key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return v, err
}

// SetMeta implements store.Driver.
func (s *Store) SetMeta(ctx context.Context, key, value string) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO meta(key, value) VALUES($1, $2) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, value)
		return err
	})
}

// Stats implements store.Driver. SizeBytes is the size of the schema's
// tables with their indexes and TOAST data.
func (s *Store) Stats(ctx context.Context) (store.Stats, error) {
	var st store.Stats
	err := s.row(ctx, `SELECT
		(SELECT count(*) FROM sources),
		(SELECT COALESCE(SUM(size), 0)::bigint FROM sources),
		(SELECT COALESCE(SUM(docs), 0) FROM segments),
		(SELECT count(DISTINCT term) FROM postings),
		(SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = $1 AND c.relkind IN ('r', 'm'))::bigint`, s.set.Schema).
		Scan(&st.Sources, &st.Bytes, &st.Chunks, &st.Terms, &st.SizeBytes)
	if err != nil {
		return st, err
	}
	if dim, err := s.vectorDim(ctx); err == nil && dim > 0 {
		if err := s.row(ctx, `SELECT count(*) FROM chunk_vectors`).Scan(&st.Vectors); err != nil {
			return st, err
		}
	}
	return st, nil
}

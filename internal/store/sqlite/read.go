package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/glob"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/internal/sqlrows"
)

const sourceCols = `id, uri, type, format, title, hash, size, chunks, indexed_at`

type scanner interface{ Scan(...any) error }

func scanSource(r scanner) (doc.Source, error) {
	var s doc.Source
	var typ, format string
	err := r.Scan(&s.ID, &s.URI, &typ, &format, &s.Title, &s.ContentHash, &s.Size, &s.Chunks, &s.IndexedAt)
	s.Type, s.Format = doc.SourceType(typ), doc.Format(format)
	return s, err
}

// Source implements store.Driver.
func (s *Store) Source(ctx context.Context, id string) (doc.Source, error) {
	src, err := scanSource(s.db.QueryRowContext(ctx, `SELECT `+sourceCols+` FROM sources WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return doc.Source{}, fmt.Errorf("source %q: %w", id, store.ErrNotFound)
	}
	return src, err
}

// Sources implements store.Driver.
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

// Chunks implements store.Driver.
func (s *Store) Chunks(ctx context.Context, sourceID string) ([]doc.Chunk, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+chunkColumns+`, `+spanColumn+` FROM chunks c WHERE c.source_id = ? ORDER BY c.idx`, sourceID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []doc.Chunk
	var spans []int
	for rows.Next() {
		var span bool
		c, err := sqlrows.ScanChunk(rows, &span)
		if err != nil {
			return nil, err
		}
		if span {
			spans = append(spans, len(out))
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	if err := s.fillSpans(ctx, s.db, pick(out, spans)); err != nil {
		return nil, fmt.Errorf("chunks of source %q: %w", sourceID, err)
	}
	return out, nil
}

// pick returns pointers to the elements of cs at the given indexes.
func pick(cs []doc.Chunk, idx []int) []*doc.Chunk {
	out := make([]*doc.Chunk, len(idx))
	for i, j := range idx {
		out[i] = &cs[j]
	}
	return out
}

// Hits implements store.Driver.
func (s *Store) Hits(ctx context.Context, ids []int64) ([]doc.Hit, error) {
	rows, err := s.hits.query(ctx, s.db, ids, func(n int) string {
		return `SELECT ` + chunkColumns + `, ` + spanColumn + `, ` + spanBlockColumn() + `, s.uri, s.type, s.format, s.title, s.hash, s.size, s.chunks, s.indexed_at
		FROM chunks c JOIN sources s ON s.id = c.source_id WHERE c.id IN (` + placeholders(n) + `)`
	})
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var hits []doc.Hit
	var spans []int
	for rows.Next() {
		var src doc.Source
		var typ, format string
		var span bool
		var block sql.RawBytes // decoded at once, before the next row
		c, err := sqlrows.ScanChunk(rows, &span, &block, &src.URI, &typ, &format, &src.Title, &src.ContentHash, &src.Size, &src.Chunks, &src.IndexedAt)
		if err != nil {
			return nil, err
		}
		src.ID, src.Type, src.Format = c.SourceID, doc.SourceType(typ), doc.Format(format)
		switch {
		case span && block != nil:
			if err := s.spanFromBlock(&c, block); err != nil {
				return nil, err
			}
		case span:
			spans = append(spans, len(hits))
		}
		hits = append(hits, doc.Hit{Chunk: c, Source: src})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	toFill := make([]*doc.Chunk, len(spans))
	for i, j := range spans {
		toFill[i] = &hits[j].Chunk
	}
	if err := s.fillSpans(ctx, s.db, toFill); err != nil {
		return nil, fmt.Errorf("read hits: %w", err)
	}
	byID := make(map[int64]doc.Hit, len(hits))
	for _, h := range hits {
		byID[h.Chunk.ID] = h
	}
	out := make([]doc.Hit, 0, len(ids))
	for _, id := range ids {
		if h, ok := byID[id]; ok {
			out = append(out, h)
		}
	}
	return out, nil
}

// idStmts keeps the statements of a query over a list of IDs ("... WHERE id
// IN (?, ...)") prepared, one per size: a search reads its hits with one
// such query, and preparing it cost about a fifth of the read. A list is
// padded to the next power of two by repeating its first ID (IN ignores the
// repeats), so a handful of statements serve every size up to maxIDStmt;
// longer lists are prepared each time.
type idStmts struct {
	mu   sync.Mutex
	byN  map[int]*sql.Stmt
	done bool
}

const maxIDStmt = 64

// query runs the query text(n) makes for n IDs with ids as its arguments.
func (c *idStmts) query(ctx context.Context, db *sql.DB, ids []int64, text func(n int) string) (*sql.Rows, error) {
	n := 1
	for n < len(ids) {
		n *= 2
	}
	args := make([]any, max(n, len(ids)))
	for i := range args {
		if i < len(ids) {
			args[i] = ids[i]
		} else {
			args[i] = ids[0]
		}
	}
	if n > maxIDStmt {
		return db.QueryContext(ctx, text(len(ids)), args[:len(ids)]...)
	}
	c.mu.Lock()
	st := c.byN[n]
	if st == nil && !c.done {
		var err error
		if st, err = db.PrepareContext(ctx, text(n)); err != nil {
			c.mu.Unlock()
			return nil, err
		}
		if c.byN == nil {
			c.byN = map[int]*sql.Stmt{}
		}
		c.byN[n] = st
	}
	c.mu.Unlock()
	if st == nil { // closed
		return db.QueryContext(ctx, text(n), args...)
	}
	return st.QueryContext(ctx, args...)
}

// close releases the statements.
func (c *idStmts) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.byN {
		st.Close()
	}
	c.byN, c.done = nil, true
}

package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/sagasu-dev/sagasu/internal/store/bm25"
	"github.com/sagasu-dev/sagasu/internal/store/segment"
)

// segTx is segment.Tx over one SQLite write transaction.
type segTx struct {
	tx *sql.Tx
}

var _ segment.Tx = segTx{}

// Rows implements segment.Tx.
func (t segTx) Rows(ctx context.Context, keys []segment.Key, fn func(segment.Row) error) error {
	byTerm, err := t.tx.PrepareContext(ctx, `SELECT seg, n, data FROM postings WHERE term = ?`)
	if err != nil {
		return err
	}
	defer byTerm.Close()
	bySeg, err := t.tx.PrepareContext(ctx, `SELECT seg, n, data FROM postings WHERE term = ? AND seg = ?`)
	if err != nil {
		return err
	}
	defer bySeg.Close()
	for _, k := range keys {
		var rows *sql.Rows
		if k.Seg == 0 {
			rows, err = byTerm.QueryContext(ctx, k.Term)
		} else {
			rows, err = bySeg.QueryContext(ctx, k.Term, k.Seg)
		}
		if err != nil {
			return err
		}
		for rows.Next() {
			r := segment.Row{Term: k.Term}
			if err := rows.Scan(&r.Seg, &r.N, &r.Data); err != nil {
				rows.Close()
				return err
			}
			if err := fn(r); err != nil {
				rows.Close()
				return err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	return nil
}

// Update implements segment.Tx.
func (t segTx) Update(ctx context.Context, rows []segment.Row) error {
	put, err := t.tx.PrepareContext(ctx, `UPDATE postings SET n = ?, data = ? WHERE term = ? AND seg = ?`)
	if err != nil {
		return err
	}
	defer put.Close()
	for _, r := range rows {
		if _, err := put.ExecContext(ctx, r.N, r.Data, r.Term, r.Seg); err != nil {
			return err
		}
	}
	return nil
}

// Remove implements segment.Tx.
func (t segTx) Remove(ctx context.Context, keys []segment.Key) error {
	del, err := t.tx.PrepareContext(ctx, `DELETE FROM postings WHERE term = ? AND seg = ?`)
	if err != nil {
		return err
	}
	defer del.Close()
	for _, k := range keys {
		if _, err := del.ExecContext(ctx, k.Term, k.Seg); err != nil {
			return err
		}
	}
	return nil
}

// Shrink implements segment.Tx.
func (t segTx) Shrink(ctx context.Context, by []segment.Shrink) error {
	for _, sh := range by {
		if _, err := t.tx.ExecContext(ctx, `UPDATE segments SET docs = docs - ?, ttokens = ttokens - ?, htokens = htokens - ?, tokens = tokens - ? WHERE seg = ?`,
			sh.Docs, sh.Tokens[bm25.Title], sh.Tokens[bm25.Heading], sh.Tokens[bm25.Body], sh.Seg); err != nil {
			return err
		}
	}
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM segments WHERE docs <= 0`); err != nil {
		return err
	}
	return bumpKeywordVersion(ctx, t.tx)
}

// Segments implements segment.Tx.
func (t segTx) Segments(ctx context.Context) ([]bm25.Segment, error) {
	rows, err := t.tx.QueryContext(ctx, `SELECT seg, docs FROM segments ORDER BY seg`)
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
	return segs, rows.Err()
}

// NewSegment implements segment.Tx.
func (t segTx) NewSegment(ctx context.Context) (int64, error) {
	var seg int64
	err := t.tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seg), 0) + 1 FROM segments`).Scan(&seg)
	return seg, err
}

// Scan implements segment.Tx with one scan in primary-key order, which
// yields each term's rows together. The merged rows written meanwhile carry
// a segment outside segs, which the scan's filter excludes.
func (t segTx) Scan(ctx context.Context, segs []int64, fn func(term string, data []byte) error) error {
	return eachPosting(ctx, t.tx, fn, `SELECT term, data FROM postings WHERE seg IN (`+placeholders(len(segs))+`) ORDER BY term`, int64Args(segs)...)
}

// WriteMerged implements segment.Tx. The old rows of the batch's terms are
// deleted by a range of the primary key: one DELETE over all merged
// segments at the end would have SQLite collect every key in a temporary
// table first.
func (t segTx) WriteMerged(ctx context.Context, segs []int64, rows []segment.Row) error {
	ins := newInserter(ctx, t.tx, `INSERT OR ROLLBACK INTO postings(term, seg, n, data)`, 4)
	for _, r := range rows {
		if err := ins.add(r.Term, r.Seg, r.N, r.Data); err != nil {
			return err
		}
	}
	if err := ins.flush(); err != nil {
		return err
	}
	args := append([]any{rows[0].Term, rows[len(rows)-1].Term}, int64Args(segs)...)
	_, err := t.tx.ExecContext(ctx, `DELETE FROM postings WHERE term >= ? AND term <= ? AND seg IN (`+placeholders(len(segs))+`)`, args...)
	return err
}

// FinishMerge implements segment.Tx.
func (t segTx) FinishMerge(ctx context.Context, segs []int64, into int64) error {
	ph, args := placeholders(len(segs)), int64Args(segs)
	var docs int
	var tokens [bm25.NumFields]int64
	if err := t.tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(docs),0), COALESCE(SUM(ttokens),0), COALESCE(SUM(htokens),0), COALESCE(SUM(tokens),0) FROM segments WHERE seg IN (`+ph+`)`, args...).Scan(&docs, &tokens[bm25.Title], &tokens[bm25.Heading], &tokens[bm25.Body]); err != nil {
		return err
	}
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM segments WHERE seg IN (`+ph+`)`, args...); err != nil {
		return err
	}
	if _, err := t.tx.ExecContext(ctx, `UPDATE termless_chunks SET seg = ? WHERE seg IN (`+ph+`)`, append([]any{into}, args...)...); err != nil {
		return err
	}
	_, err := t.tx.ExecContext(ctx, `INSERT INTO segments(seg, docs, ttokens, htokens, tokens) VALUES(?,?,?,?,?)`, into, docs, tokens[bm25.Title], tokens[bm25.Heading], tokens[bm25.Body])
	return err
}

// writeSegment stores the postings built for one batch as a new segment;
// base is added to every chunk ID in them (bm25.Builder.Encoded).
func writeSegment(ctx context.Context, tx *sql.Tx, seg int64, b *bm25.Builder, base uint64) error {
	if b.Docs == 0 {
		return nil
	}
	ins := newInserter(ctx, tx, `INSERT OR ROLLBACK INTO postings(term, seg, n, data)`, 4)
	for _, t := range b.Terms() {
		data, n := b.Encoded(t, base)
		if err := ins.add(t, seg, n, data); err != nil {
			return fmt.Errorf("write postings: %w", err)
		}
	}
	if err := ins.flush(); err != nil {
		return fmt.Errorf("write postings: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO segments(seg, docs, ttokens, htokens, tokens) VALUES(?,?,?,?,?)`, seg, b.Docs, b.Tokens[bm25.Title], b.Tokens[bm25.Heading], b.Tokens[bm25.Body]); err != nil {
		return err
	}
	return bumpKeywordVersion(ctx, tx)
}

// compact merges segments until none are due (segment.Compact).
func (s *Store) compact(ctx context.Context) error {
	return segment.Compact(ctx, rowsPerStmt, func(ctx context.Context, fn func(segment.Tx) error) error {
		return s.tx(ctx, func(tx *sql.Tx) error { return fn(segTx{tx}) })
	})
}

func int64Args(v []int64) []any {
	out := make([]any, len(v))
	for i, x := range v {
		out[i] = x
	}
	return out
}

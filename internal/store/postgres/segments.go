package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/sagasu-dev/sagasu/internal/store/bm25"
	"github.com/sagasu-dev/sagasu/internal/store/segment"
)

// segTx is segment.Tx over one PostgreSQL write transaction; each call is
// one statement over arrays.
type segTx struct {
	tx   pgx.Tx
	page int // terms a merge reads at a time
}

var _ segment.Tx = segTx{}

// keyArrays splits keys into a term and a segment array.
func keyArrays(keys []segment.Key) ([]string, []int64) {
	terms := make([]string, len(keys))
	segs := make([]int64, len(keys))
	for i, k := range keys {
		terms[i], segs[i] = k.Term, k.Seg
	}
	return terms, segs
}

// Rows implements segment.Tx: all rows in one round trip.
func (t segTx) Rows(ctx context.Context, keys []segment.Key, fn func(segment.Row) error) error {
	terms, segs := keyArrays(keys)
	rows, err := t.tx.Query(ctx, `SELECT p.term, p.seg, p.n, p.data FROM postings p
		JOIN unnest($1::text[], $2::bigint[]) AS k(term, seg) ON p.term = k.term COLLATE "C" AND (k.seg = 0 OR p.seg = k.seg)`, terms, segs)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var r segment.Row
		var n int32
		if err := rows.Scan(&r.Term, &r.Seg, &n, &r.Data); err != nil {
			return err
		}
		r.N = int(n)
		if err := fn(r); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Update implements segment.Tx.
func (t segTx) Update(ctx context.Context, rows []segment.Row) error {
	terms := make([]string, len(rows))
	segs := make([]int64, len(rows))
	ns := make([]int32, len(rows))
	data := make([][]byte, len(rows))
	for i, r := range rows {
		terms[i], segs[i], ns[i], data[i] = r.Term, r.Seg, int32(r.N), r.Data
	}
	_, err := t.tx.Exec(ctx, `UPDATE postings p SET n = u.n, data = u.data
		FROM unnest($1::text[], $2::bigint[], $3::integer[], $4::bytea[]) AS u(term, seg, n, data)
		WHERE p.term = u.term COLLATE "C" AND p.seg = u.seg`, terms, segs, ns, data)
	return err
}

// Remove implements segment.Tx.
func (t segTx) Remove(ctx context.Context, keys []segment.Key) error {
	terms, segs := keyArrays(keys)
	_, err := t.tx.Exec(ctx, `DELETE FROM postings p USING unnest($1::text[], $2::bigint[]) AS k(term, seg)
		WHERE p.term = k.term COLLATE "C" AND p.seg = k.seg`, terms, segs)
	return err
}

// Shrink implements segment.Tx.
func (t segTx) Shrink(ctx context.Context, by []segment.Shrink) error {
	segs := make([]int64, len(by))
	docs := make([]int32, len(by))
	var tokens [bm25.NumFields][]int64
	for f := range tokens {
		tokens[f] = make([]int64, len(by))
	}
	for i, sh := range by {
		segs[i], docs[i] = sh.Seg, int32(sh.Docs)
		for f := range tokens {
			tokens[f][i] = sh.Tokens[f]
		}
	}
	if _, err := t.tx.Exec(ctx, `UPDATE segments s SET docs = s.docs - u.docs, ttokens = s.ttokens - u.ttokens, htokens = s.htokens - u.htokens, tokens = s.tokens - u.tokens
		FROM unnest($1::bigint[], $2::integer[], $3::bigint[], $4::bigint[], $5::bigint[]) AS u(seg, docs, ttokens, htokens, tokens) WHERE s.seg = u.seg`,
		segs, docs, tokens[bm25.Title], tokens[bm25.Heading], tokens[bm25.Body]); err != nil {
		return err
	}
	if _, err := t.tx.Exec(ctx, `DELETE FROM segments WHERE docs <= 0`); err != nil {
		return err
	}
	return bumpKeywordVersion(ctx, t.tx)
}

// Segments implements segment.Tx.
func (t segTx) Segments(ctx context.Context) ([]bm25.Segment, error) {
	rows, err := t.tx.Query(ctx, `SELECT seg, docs FROM segments ORDER BY seg`)
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
	err := t.tx.QueryRow(ctx, `SELECT nextval('segment_ids')`).Scan(&seg)
	return seg, err
}

// Scan implements segment.Tx through a cursor, page terms at a time, so
// memory stays bounded however large the segments are. Each page is read
// whole before fn sees it, so fn can write on the same connection.
func (t segTx) Scan(ctx context.Context, segs []int64, fn func(term string, data []byte) error) error {
	if _, err := t.tx.Exec(ctx, `DECLARE merge_postings NO SCROLL CURSOR FOR
		SELECT term, data FROM postings WHERE seg = ANY($1) ORDER BY term`, segs); err != nil {
		return err
	}
	fetch := fmt.Sprintf(`FETCH FORWARD %d FROM merge_postings`, t.page)
	type row struct {
		term string
		data []byte
	}
	page := make([]row, 0, t.page)
	for {
		rows, err := t.tx.Query(ctx, fetch)
		if err != nil {
			return err
		}
		page = page[:0]
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.term, &r.data); err != nil {
				rows.Close()
				return err
			}
			page = append(page, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, r := range page {
			if err := fn(r.term, r.data); err != nil {
				return err
			}
		}
		if len(page) < t.page {
			break
		}
	}
	_, err := t.tx.Exec(ctx, `CLOSE merge_postings`)
	return err
}

// WriteMerged implements segment.Tx with COPY; the old rows go in
// FinishMerge, in one statement.
func (t segTx) WriteMerged(ctx context.Context, _ []int64, rows []segment.Row) error {
	_, err := t.tx.CopyFrom(ctx, pgx.Identifier{"postings"}, []string{"term", "seg", "n", "data"},
		pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
			r := rows[i]
			return []any{r.Term, r.Seg, int32(r.N), r.Data}, nil
		}))
	return err
}

// FinishMerge implements segment.Tx; chunk_segs follows its chunks into the
// new segment.
func (t segTx) FinishMerge(ctx context.Context, segs []int64, into int64) error {
	if _, err := t.tx.Exec(ctx, `DELETE FROM postings WHERE seg = ANY($1)`, segs); err != nil {
		return err
	}
	if _, err := t.tx.Exec(ctx, `INSERT INTO segments(seg, docs, ttokens, htokens, tokens)
		SELECT $1, COALESCE(SUM(docs), 0), COALESCE(SUM(ttokens), 0), COALESCE(SUM(htokens), 0), COALESCE(SUM(tokens), 0) FROM segments WHERE seg = ANY($2)`, into, segs); err != nil {
		return err
	}
	if _, err := t.tx.Exec(ctx, `DELETE FROM segments WHERE seg = ANY($1)`, segs); err != nil {
		return err
	}
	_, err := t.tx.Exec(ctx, `UPDATE chunk_segs SET seg = $1 WHERE seg = ANY($2)`, into, segs)
	return err
}

// writeSegment stores the postings built for one batch as a new segment.
func writeSegment(ctx context.Context, tx pgx.Tx, seg int64, b *bm25.Builder) error {
	if b.Docs == 0 {
		return nil
	}
	terms := b.Terms()
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"postings"}, []string{"term", "seg", "n", "data"},
		pgx.CopyFromSlice(len(terms), func(i int) ([]any, error) {
			ps := b.Postings(terms[i])
			return []any{terms[i], seg, int32(len(ps)), bm25.Encode(nil, ps)}, nil
		}))
	if err != nil {
		return fmt.Errorf("write postings: %w", err)
	}
	if _, err = tx.Exec(ctx, `INSERT INTO segments(seg, docs, ttokens, htokens, tokens) VALUES($1, $2, $3, $4, $5)`,
		seg, b.Docs, b.Tokens[bm25.Title], b.Tokens[bm25.Heading], b.Tokens[bm25.Body]); err != nil {
		return err
	}
	return bumpKeywordVersion(ctx, tx)
}

// compact merges segments until none are due (segment.Compact), under the
// write lock.
func (s *Store) compact(ctx context.Context) error {
	return segment.Compact(ctx, s.mergePage, func(ctx context.Context, fn func(segment.Tx) error) error {
		return s.tx(ctx, func(tx pgx.Tx) error { return fn(segTx{tx: tx, page: s.mergePage}) })
	})
}

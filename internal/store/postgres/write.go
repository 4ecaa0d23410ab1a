package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/pgvector/pgvector-go"

	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/bm25"
	"github.com/sagasu-dev/sagasu/internal/store/internal/sqlrows"
	"github.com/sagasu-dev/sagasu/internal/store/segment"
)

// Replace implements store.Driver: the old rows of every source in the batch
// are removed and the new ones copied in, all in one transaction.
func (s *Store) Replace(ctx context.Context, batch []store.SourceData) error {
	_, err := s.Apply(ctx, batch, nil)
	return err
}

var _ store.ApplyDriver = (*Store)(nil)

// Apply implements store.ApplyDriver: the sources of remove are deleted
// and batch written in one transaction.
func (s *Store) Apply(ctx context.Context, batch []store.SourceData, remove []string) (int, error) {
	total := 0
	for _, sd := range batch {
		if err := checkSource(sd); err != nil {
			return 0, err
		}
		total += len(sd.Chunks)
	}
	rows := segment.Analyse(s.an, batch)
	removed := 0
	err := s.tx(ctx, func(tx pgx.Tx) error {
		if len(remove) > 0 {
			n, err := s.deleteTx(ctx, tx, remove)
			if err != nil {
				return err
			}
			removed = n
		}
		if len(batch) == 0 {
			return nil
		}
		ids := make([]string, len(batch))
		for i, sd := range batch {
			ids[i] = sd.Source.ID
		}
		if _, err := s.deleteTx(ctx, tx, ids); err != nil {
			return err
		}
		seg, err := segTx{tx: tx}.NewSegment(ctx)
		if err != nil {
			return err
		}
		chunkIDs, err := allocateIDs(ctx, tx, total)
		if err != nil {
			return err
		}
		if err := s.insert(ctx, tx, batch, rows, chunkIDs, seg); err != nil {
			return err
		}
		if s.beforeCommit != nil {
			s.beforeCommit()
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	// The batch is committed. Merging segments only speeds up queries: if it
	// is interrupted it rolls back whole and the next write merges instead.
	if err := s.compact(ctx); err != nil && ctx.Err() == nil {
		return removed, fmt.Errorf("sources written; %w", err)
	}
	return removed, nil
}

// checkSource refuses what a source cannot be stored as: PostgreSQL text
// holds no NUL bytes.
func checkSource(sd store.SourceData) error {
	hasNUL := strings.ContainsRune(sd.Content, 0) || strings.ContainsRune(sd.Source.Title, 0) || strings.ContainsRune(sd.Source.URI, 0)
	for _, c := range sd.Chunks {
		hasNUL = hasNUL || strings.ContainsRune(c.Text, 0) || slices.ContainsFunc(c.Heading, func(h string) bool { return strings.ContainsRune(h, 0) })
	}
	if hasNUL {
		return fmt.Errorf("replace %q: the text contains NUL bytes, which PostgreSQL cannot store; remove them or keep this source in a SQLite index", sd.Source.URI)
	}
	return nil
}

// allocateIDs reserves n chunk IDs in increasing order.
func allocateIDs(ctx context.Context, tx pgx.Tx, n int) ([]int64, error) {
	if n == 0 {
		return nil, nil
	}
	rows, err := tx.Query(ctx, `SELECT nextval('chunk_ids') FROM generate_series(1, $1)`, n)
	if err != nil {
		return nil, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, err
	}
	slices.Sort(ids)
	return ids, nil
}

// insert copies the batch's rows in with COPY, one statement per table.
func (s *Store) insert(ctx context.Context, tx pgx.Tx, batch []store.SourceData, rows [][]segment.Analysed, ids []int64, seg int64) error {
	now := time.Now().Unix()
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"sources"},
		[]string{"id", "uri", "type", "format", "title", "hash", "size", "chunks", "indexed_at"},
		pgx.CopyFromSlice(len(batch), func(i int) ([]any, error) {
			src := batch[i].Source
			return []any{src.ID, src.URI, string(src.Type), string(src.Format), src.Title, src.ContentHash,
				int64(len(batch[i].Content)), int32(len(batch[i].Chunks)), now}, nil
		}))
	if err != nil {
		return fmt.Errorf("insert sources: %w", err)
	}
	_, err = tx.CopyFrom(ctx, pgx.Identifier{"contents"}, []string{"source_id", "content"},
		pgx.CopyFromSlice(len(batch), func(i int) ([]any, error) {
			return []any{batch[i].Source.ID, batch[i].Content}, nil
		}))
	if err != nil {
		return fmt.Errorf("insert contents: %w", err)
	}

	// Flatten the chunks: position k is chunk j of source i, with ID ids[k].
	type at struct{ i, j int }
	flat := make([]at, 0, len(ids))
	for i, sd := range batch {
		for j := range sd.Chunks {
			flat = append(flat, at{i, j})
		}
	}
	if len(flat) == 0 {
		return nil
	}
	b := bm25.NewBuilder()
	for k, p := range flat {
		b.AddCounts(uint64(ids[k]), rows[p.i][p.j].Counts)
	}
	_, err = tx.CopyFrom(ctx, pgx.Identifier{"chunks"},
		[]string{"id", "source_id", "idx", "text", "heading", "start_line", "end_line", "start_byte", "end_byte", "tokens", "terms", "tterms", "hterms", "chash", "tsv"},
		pgx.CopyFromSlice(len(flat), func(k int) ([]any, error) {
			p := flat[k]
			c, r := batch[p.i].Chunks[p.j], rows[p.i][p.j]
			return []any{ids[k], batch[p.i].Source.ID, int32(p.j), c.Text, sqlrows.HeadingJSON(c.Heading),
				int32(c.StartLine), int32(c.EndLine), int32(c.StartByte), int32(c.EndByte), int32(c.Tokens),
				int32(r.Counts.Len[bm25.Body]), int32(r.Counts.Len[bm25.Title]), int32(r.Counts.Len[bm25.Heading]), r.Hash, tsvector(r.Counts.Terms)}, nil
		}))
	if err != nil {
		return fmt.Errorf("insert chunks: %w", err)
	}
	_, err = tx.CopyFrom(ctx, pgx.Identifier{"chunk_segs"}, []string{"id", "seg"},
		pgx.CopyFromSlice(len(ids), func(k int) ([]any, error) { return []any{ids[k], seg}, nil }))
	if err != nil {
		return fmt.Errorf("insert chunks: %w", err)
	}
	var vecs [][]any
	for k, p := range flat {
		if vs := batch[p.i].Vectors; vs != nil && !store.IsZeroVector(vs[p.j]) {
			vecs = append(vecs, []any{ids[k], batch[p.i].Source.ID, pgvector.NewVector(vs[p.j])})
		}
	}
	if len(vecs) > 0 {
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"chunk_vectors"}, []string{"id", "source_id", "embedding"}, pgx.CopyFromRows(vecs)); err != nil {
			return fmt.Errorf("store vectors: %w", err)
		}
	}
	return writeSegment(ctx, tx, seg, b)
}

// tsvector builds the chunk's tsvector from its distinct, sorted terms: the
// analyser's own terms, not re-parsed by a text-search configuration, so the
// GIN index finds exactly what keyword search finds ('設定' as well as 'gener').
func tsvector(terms []bm25.TermCount) pgtype.TSVector {
	v := pgtype.TSVector{Valid: true, Lexemes: make([]pgtype.TSVectorLexeme, len(terms))}
	for i, t := range terms {
		v.Lexemes[i].Word = t.Term
	}
	return v
}

// Delete implements store.Driver.
func (s *Store) Delete(ctx context.Context, ids []string) (int, error) {
	var n int
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		n, err = s.deleteTx(ctx, tx, ids)
		return err
	})
	return n, err
}

// deleteTx removes sources, their chunks, vectors and postings. The
// postings rows a chunk is in are found from its recorded segment and its
// tsvector (the distinct terms it was indexed under), so nothing is
// re-analysed.
func (s *Store) deleteTx(ctx context.Context, tx pgx.Tx, ids []string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	var gone []segment.Chunk
	var chunkIDs []int64
	rows, err := tx.Query(ctx, `SELECT c.id, cs.seg, c.tterms, c.hterms, c.terms, tsvector_to_array(c.tsv)
		FROM chunks c JOIN chunk_segs cs ON cs.id = c.id WHERE c.source_id = ANY($1)`, ids)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
		var c segment.Chunk
		var n [bm25.NumFields]int32
		if err := rows.Scan(&c.ID, &c.Seg, &n[bm25.Title], &n[bm25.Heading], &n[bm25.Body], &c.Terms); err != nil {
			rows.Close()
			return 0, err
		}
		for f, l := range n {
			c.Lens[f] = int64(l)
		}
		gone = append(gone, c)
		chunkIDs = append(chunkIDs, c.ID)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if len(chunkIDs) > 0 {
		var hasVectors bool
		if err := tx.QueryRow(ctx, `SELECT to_regclass('chunk_vectors') IS NOT NULL`).Scan(&hasVectors); err != nil {
			return 0, err
		}
		if hasVectors {
			if _, err := tx.Exec(ctx, `DELETE FROM chunk_vectors WHERE source_id = ANY($1)`, ids); err != nil {
				return 0, err
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM chunk_segs WHERE id = ANY($1)`, chunkIDs); err != nil {
			return 0, err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM chunks WHERE source_id = ANY($1)`, ids); err != nil {
			return 0, err
		}
	}
	if _, err := tx.Exec(ctx, `DELETE FROM contents WHERE source_id = ANY($1)`, ids); err != nil {
		return 0, err
	}
	tag, err := tx.Exec(ctx, `DELETE FROM sources WHERE id = ANY($1)`, ids)
	if err != nil {
		return 0, err
	}
	if err := segment.Delete(ctx, segTx{tx: tx, page: s.mergePage}, gone); err != nil {
		return 0, err
	}
	return int(tag.RowsAffected()), nil
}

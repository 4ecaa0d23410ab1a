package postgres

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/pgvector/pgvector-go"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/bm25"
	"github.com/sagasu-dev/sagasu/internal/store/internal/sqlrows"
)

// chunkRow is the analysed form of a chunk ready to insert.
type chunkRow struct {
	counts bm25.Counts // distinct terms (sorted: the tsvector's lexemes) and length
	hash   string      // of the context text, to find reusable embeddings
}

// Replace implements store.Store: the old rows of every source in the batch
// are removed and the new ones copied in, all in one transaction.
func (s *Store) Replace(ctx context.Context, batch []store.SourceData) error {
	if len(batch) == 0 {
		return nil
	}
	total := 0
	withVectors := false
	for _, sd := range batch {
		if err := checkSource(sd); err != nil {
			return err
		}
		total += len(sd.Chunks)
		withVectors = withVectors || sd.Vectors != nil
	}
	rows := s.analyse(batch)
	err := s.tx(ctx, func(tx pgx.Tx) error {
		dim := 0
		if withVectors {
			var err error
			if dim, err = vectorDimTx(ctx, tx); err != nil {
				return err
			}
			if err := checkVectors(batch, dim); err != nil {
				return err
			}
		}
		ids := make([]string, len(batch))
		for i, sd := range batch {
			ids[i] = sd.Source.ID
		}
		if _, err := s.deleteTx(ctx, tx, ids); err != nil {
			return err
		}
		var seg int64
		if err := tx.QueryRow(ctx, `SELECT nextval('segment_ids')`).Scan(&seg); err != nil {
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
		return err
	}
	// The batch is committed. Merging segments only speeds up queries: if it
	// is interrupted it rolls back whole and the next write merges instead.
	if err := s.compact(ctx); err != nil && ctx.Err() == nil {
		return fmt.Errorf("sources written; %w", err)
	}
	return nil
}

// checkSource refuses what a source cannot be stored as: PostgreSQL text
// holds no NUL bytes.
func checkSource(sd store.SourceData) error {
	if sd.Source.ID == "" || sd.Source.URI == "" {
		return fmt.Errorf("replace: source without ID or URI")
	}
	if sd.Vectors != nil && len(sd.Vectors) != len(sd.Chunks) {
		return fmt.Errorf("replace %q: %d vectors for %d chunks", sd.Source.URI, len(sd.Vectors), len(sd.Chunks))
	}
	hasNUL := strings.ContainsRune(sd.Content, 0) || strings.ContainsRune(sd.Source.Title, 0) || strings.ContainsRune(sd.Source.URI, 0)
	for _, c := range sd.Chunks {
		hasNUL = hasNUL || strings.ContainsRune(c.Text, 0) || slices.ContainsFunc(c.Heading, func(h string) bool { return strings.ContainsRune(h, 0) })
	}
	if hasNUL {
		return fmt.Errorf("replace %q: the text contains NUL bytes, which PostgreSQL cannot store; remove them or keep this source in a SQLite index", sd.Source.URI)
	}
	return nil
}

// checkVectors tests every vector of the batch against the index's dimension
// before anything is written.
func checkVectors(batch []store.SourceData, dim int) error {
	for _, sd := range batch {
		if sd.Vectors == nil {
			continue
		}
		if dim == 0 {
			return fmt.Errorf("replace %q: the index has no vector table: pin an embedder first", sd.Source.URI)
		}
		for j, v := range sd.Vectors {
			if !store.IsZeroVector(v) && len(v) != dim {
				return fmt.Errorf("replace %q: vector of chunk %d has %d dimensions, the index holds %d", sd.Source.URI, j, len(v), dim)
			}
		}
	}
	return nil
}

// analyse computes the terms of every chunk, on every core, before the
// transaction starts, so the write lock is held only for writing.
func (s *Store) analyse(batch []store.SourceData) [][]chunkRow {
	rows := make([][]chunkRow, len(batch))
	for i, sd := range batch {
		rows[i] = make([]chunkRow, len(sd.Chunks))
	}
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(batch); i += workers {
				sd := batch[i]
				for j, c := range sd.Chunks {
					text := doc.ContextText(sd.Source.Title, c)
					counts := bm25.Count(s.an.Terms(text))
					slices.SortFunc(counts.Terms, func(a, b bm25.TermCount) int { return strings.Compare(a.Term, b.Term) })
					rows[i][j] = chunkRow{counts: counts, hash: doc.ContentHash(text)}
				}
			}
		}()
	}
	wg.Wait()
	return rows
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
func (s *Store) insert(ctx context.Context, tx pgx.Tx, batch []store.SourceData, rows [][]chunkRow, ids []int64, seg int64) error {
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
		b.AddCounts(uint64(ids[k]), rows[p.i][p.j].counts)
	}
	_, err = tx.CopyFrom(ctx, pgx.Identifier{"chunks"},
		[]string{"id", "source_id", "idx", "text", "heading", "start_line", "end_line", "start_byte", "end_byte", "tokens", "terms", "chash", "tsv"},
		pgx.CopyFromSlice(len(flat), func(k int) ([]any, error) {
			p := flat[k]
			c, r := batch[p.i].Chunks[p.j], rows[p.i][p.j]
			return []any{ids[k], batch[p.i].Source.ID, int32(p.j), c.Text, sqlrows.HeadingJSON(c.Heading),
				int32(c.StartLine), int32(c.EndLine), int32(c.StartByte), int32(c.EndByte), int32(c.Tokens),
				int32(r.counts.Len), r.hash, tsvector(r.counts.Terms)}, nil
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
	_, err = tx.Exec(ctx, `INSERT INTO segments(seg, docs, tokens) VALUES($1, $2, $3)`, seg, b.Docs, b.Tokens)
	return err
}

// Delete implements store.Store.
func (s *Store) Delete(ctx context.Context, ids []string) (int, error) {
	var n int
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		n, err = s.deleteTx(ctx, tx, ids)
		return err
	})
	return n, err
}

// deleteTx removes sources, their chunks, vectors and postings. The postings
// rows a chunk is in are found from its segment and its tsvector (the
// distinct terms it was indexed under), so nothing is re-analysed.
func (s *Store) deleteTx(ctx context.Context, tx pgx.Tx, ids []string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	type key struct {
		seg  int64
		term string
	}
	drop := map[key]map[uint64]bool{}
	segDocs := map[int64]int{}
	segTokens := map[int64]int64{}
	var chunkIDs []int64
	rows, err := tx.Query(ctx, `SELECT c.id, cs.seg, c.terms, tsvector_to_array(c.tsv)
		FROM chunks c JOIN chunk_segs cs ON cs.id = c.id WHERE c.source_id = ANY($1)`, ids)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
		var id, seg int64
		var n int
		var terms []string
		if err := rows.Scan(&id, &seg, &n, &terms); err != nil {
			rows.Close()
			return 0, err
		}
		chunkIDs = append(chunkIDs, id)
		segDocs[seg]++
		segTokens[seg] += int64(n)
		for _, t := range terms {
			k := key{seg, t}
			if drop[k] == nil {
				drop[k] = map[uint64]bool{}
			}
			drop[k][uint64(id)] = true
		}
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
	removed := int(tag.RowsAffected())
	if len(drop) == 0 {
		return removed, nil
	}

	// Rewrite each affected postings row once: fetch them all, drop the
	// chunks, then update or delete in two statements.
	terms := make([]string, 0, len(drop))
	segs := make([]int64, 0, len(drop))
	for k := range drop {
		terms = append(terms, k.term)
		segs = append(segs, k.seg)
	}
	prow, err := tx.Query(ctx, `SELECT p.term, p.seg, p.data FROM postings p
		JOIN unnest($1::text[], $2::bigint[]) AS k(term, seg) ON p.term = k.term COLLATE "C" AND p.seg = k.seg`, terms, segs)
	if err != nil {
		return 0, err
	}
	var upTerms, delTerms []string
	var upSegs, delSegs []int64
	var upN []int32
	var upData [][]byte
	for prow.Next() {
		var k key
		var data []byte
		if err := prow.Scan(&k.term, &k.seg, &data); err != nil {
			prow.Close()
			return 0, err
		}
		kept, n, err := bm25.Remove(data, drop[k])
		if err != nil {
			prow.Close()
			return 0, fmt.Errorf("postings of %q: %w", k.term, err)
		}
		if n == 0 {
			delTerms, delSegs = append(delTerms, k.term), append(delSegs, k.seg)
		} else {
			upTerms, upSegs = append(upTerms, k.term), append(upSegs, k.seg)
			upN, upData = append(upN, int32(n)), append(upData, kept)
		}
	}
	prow.Close()
	if err := prow.Err(); err != nil {
		return 0, err
	}
	if len(upTerms) > 0 {
		if _, err := tx.Exec(ctx, `UPDATE postings p SET n = u.n, data = u.data
			FROM unnest($1::text[], $2::bigint[], $3::integer[], $4::bytea[]) AS u(term, seg, n, data)
			WHERE p.term = u.term COLLATE "C" AND p.seg = u.seg`, upTerms, upSegs, upN, upData); err != nil {
			return 0, err
		}
	}
	if len(delTerms) > 0 {
		if _, err := tx.Exec(ctx, `DELETE FROM postings p USING unnest($1::text[], $2::bigint[]) AS k(term, seg)
			WHERE p.term = k.term COLLATE "C" AND p.seg = k.seg`, delTerms, delSegs); err != nil {
			return 0, err
		}
	}
	var sSeg []int64
	var sDocs []int32
	var sTokens []int64
	for seg, n := range segDocs {
		sSeg, sDocs, sTokens = append(sSeg, seg), append(sDocs, int32(n)), append(sTokens, segTokens[seg])
	}
	if _, err := tx.Exec(ctx, `UPDATE segments s SET docs = s.docs - u.docs, tokens = s.tokens - u.tokens
		FROM unnest($1::bigint[], $2::integer[], $3::bigint[]) AS u(seg, docs, tokens) WHERE s.seg = u.seg`, sSeg, sDocs, sTokens); err != nil {
		return 0, err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM segments WHERE docs <= 0`); err != nil {
		return 0, err
	}
	return removed, nil
}

// compact merges segments of similar size (bm25.ToMerge, the same tiers as
// every store) until none are due. The choice is made inside the merge's transaction, under the write
// lock, so concurrent writers never merge the same segments twice.
func (s *Store) compact(ctx context.Context) error {
	for {
		merged := false
		err := s.tx(ctx, func(tx pgx.Tx) error {
			segs, err := segmentsToMerge(ctx, tx)
			if err != nil || len(segs) == 0 {
				return err
			}
			merged = true
			return s.mergeSegments(ctx, tx, segs)
		})
		if err != nil {
			return fmt.Errorf("merge index segments: %w", err)
		}
		if !merged {
			return nil
		}
	}
}

func segmentsToMerge(ctx context.Context, tx pgx.Tx) ([]int64, error) {
	rows, err := tx.Query(ctx, `SELECT seg, docs FROM segments ORDER BY seg`)
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
	return bm25.ToMerge(segs), rows.Err()
}

// mergeSegments rewrites the postings of segs as one new segment. It reads
// them in term order through a cursor, mergePage rows at a time, so memory
// stays bounded however large the segments are.
func (s *Store) mergeSegments(ctx context.Context, tx pgx.Tx, segs []int64) error {
	var into int64
	if err := tx.QueryRow(ctx, `SELECT nextval('segment_ids')`).Scan(&into); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DECLARE merge_postings NO SCROLL CURSOR FOR
		SELECT term, data FROM postings WHERE seg = ANY($1) ORDER BY term`, segs); err != nil {
		return err
	}
	fetch := fmt.Sprintf(`FETCH FORWARD %d FROM merge_postings`, s.mergePage)
	var cur string     // the term whose lists are being collected
	var lists [][]byte // its lists so far (a term may span two pages)
	var out [][]any
	flush := func() error {
		if len(out) == 0 {
			return nil
		}
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"postings"}, []string{"term", "seg", "n", "data"}, pgx.CopyFromRows(out))
		out = out[:0]
		return err
	}
	emit := func() error {
		if len(lists) == 0 {
			return nil
		}
		data, n, err := bm25.Merge(lists...)
		if err != nil {
			return fmt.Errorf("postings of %q: %w", cur, err)
		}
		out = append(out, []any{cur, into, int32(n), data})
		lists = nil
		return nil
	}
	for {
		rows, err := tx.Query(ctx, fetch)
		if err != nil {
			return err
		}
		got := 0
		for rows.Next() {
			var term string
			var data []byte
			if err := rows.Scan(&term, &data); err != nil {
				rows.Close()
				return err
			}
			got++
			if term != cur {
				if err := emit(); err != nil {
					rows.Close()
					return err
				}
				cur = term
			}
			lists = append(lists, data)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if got < s.mergePage {
			break
		}
		if err := flush(); err != nil {
			return err
		}
	}
	if err := emit(); err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `CLOSE merge_postings`); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM postings WHERE seg = ANY($1)`, segs); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO segments(seg, docs, tokens)
		SELECT $1, COALESCE(SUM(docs), 0), COALESCE(SUM(tokens), 0) FROM segments WHERE seg = ANY($2)`, into, segs); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM segments WHERE seg = ANY($1)`, segs); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `UPDATE chunk_segs SET seg = $1 WHERE seg = ANY($2)`, into, segs)
	return err
}

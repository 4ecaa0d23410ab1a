package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/bm25"
	"github.com/sagasu-dev/sagasu/internal/store/segment"
)

// rebuildBatch is how many chunks go into one segment while the keyword
// index is rebuilt; it bounds the postings held in memory.
const rebuildBatch = 10000

// rebuildKeyword rebuilds the keyword index (postings, segments, each
// chunk's field lengths, terms and segment) from the stored chunks, inside
// tx, whose postings and segments are empty. It upgrades an index of an
// older postings format in place: the pinned analyzer makes the same terms
// it made before.
func (s *Store) rebuildKeyword(ctx context.Context, tx pgx.Tx) error {
	page := s.mergePage
	if page <= 0 {
		page = 1000
	}
	var after int64
	for {
		var batch []store.SourceData // one source per chunk: Analyse only needs the title
		var ids []int64
		rows, err := tx.Query(ctx, `SELECT c.id, c.text, c.heading, s.title FROM chunks c JOIN sources s ON s.id = c.source_id
			WHERE c.id > $1 ORDER BY c.id LIMIT $2`, after, rebuildBatch)
		if err != nil {
			return fmt.Errorf("rebuild keyword index: read chunks: %w", err)
		}
		for rows.Next() {
			var c doc.Chunk
			var heading, title string
			if err := rows.Scan(&c.ID, &c.Text, &heading, &title); err != nil {
				rows.Close()
				return fmt.Errorf("rebuild keyword index: read chunks: %w", err)
			}
			if err := json.Unmarshal([]byte(heading), &c.Heading); err != nil {
				rows.Close()
				return fmt.Errorf("rebuild keyword index: heading of chunk %d: %w", c.ID, err)
			}
			batch = append(batch, store.SourceData{Source: doc.Source{Title: title}, Chunks: []doc.Chunk{c}})
			ids = append(ids, c.ID)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("rebuild keyword index: read chunks: %w", err)
		}
		if len(ids) == 0 {
			break
		}
		after = ids[len(ids)-1]
		seg, err := segTx{tx: tx, page: page}.NewSegment(ctx)
		if err != nil {
			return err
		}
		b := bm25.NewBuilder()
		upd := &pgx.Batch{}
		for i, an := range segment.Analyse(s.an, batch) {
			cn := an[0].Counts
			b.AddCounts(uint64(ids[i]), cn)
			upd.Queue(`UPDATE chunks SET terms = $2, tterms = $3, hterms = $4, tsv = $5 WHERE id = $1`,
				ids[i], int32(cn.Len[bm25.Body]), int32(cn.Len[bm25.Title]), int32(cn.Len[bm25.Heading]), tsvector(cn.Terms))
		}
		upd.Queue(`UPDATE chunk_segs SET seg = $1 WHERE id = ANY($2)`, seg, ids)
		if err := tx.SendBatch(ctx, upd).Close(); err != nil {
			return fmt.Errorf("rebuild keyword index: update chunks: %w", err)
		}
		if err := writeSegment(ctx, tx, seg, b); err != nil {
			return fmt.Errorf("rebuild keyword index: %w", err)
		}
	}
	st := segTx{tx: tx, page: page}
	for {
		segs, err := segment.Due(ctx, st)
		if err != nil || len(segs) == 0 {
			return err
		}
		if err := segment.Merge(ctx, st, segs, page); err != nil {
			return fmt.Errorf("rebuild keyword index: merge segments: %w", err)
		}
	}
}

package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/bm25"
	"github.com/sagasu-dev/sagasu/internal/store/segment"
)

// rebuildBatch is how many chunks go into one segment while the keyword
// index is rebuilt; it bounds the postings held in memory.
const rebuildBatch = 10000

// rebuildKeyword rebuilds the keyword index (postings, segments and the
// chunks without terms) from the stored chunks, inside tx, whose postings
// tables are empty. It upgrades an index of an older postings format in
// place: the pinned analyzer makes the same terms it made before.
func (s *Store) rebuildKeyword(ctx context.Context, tx *sql.Tx) error {
	var after int64
	for {
		var batch []store.SourceData // one source per chunk: Analyse only needs the title
		var ids []int64
		rows, err := tx.QueryContext(ctx, `SELECT c.id, c.source_id, COALESCE(c.text, ''), `+spanColumn+`, c.heading, c.start_byte, c.end_byte, s.title
			FROM chunks c JOIN sources s ON s.id = c.source_id WHERE c.id > ? ORDER BY c.id LIMIT ?`, after, rebuildBatch)
		if err != nil {
			return fmt.Errorf("rebuild keyword index: read chunks: %w", err)
		}
		var spans []int
		for rows.Next() {
			var c doc.Chunk
			var heading, title string
			var span bool
			if err := rows.Scan(&c.ID, &c.SourceID, &c.Text, &span, &heading, &c.StartByte, &c.EndByte, &title); err != nil {
				rows.Close()
				return fmt.Errorf("rebuild keyword index: read chunks: %w", err)
			}
			if err := json.Unmarshal([]byte(heading), &c.Heading); err != nil {
				rows.Close()
				return fmt.Errorf("rebuild keyword index: heading of chunk %d: %w", c.ID, err)
			}
			if span {
				spans = append(spans, len(batch))
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
		fill := make([]*doc.Chunk, len(spans))
		for i, j := range spans {
			fill[i] = &batch[j].Chunks[0]
		}
		if err := s.fillSpans(ctx, tx, fill); err != nil {
			return fmt.Errorf("rebuild keyword index: %w", err)
		}
		after = ids[len(ids)-1]
		seg, err := segTx{tx}.NewSegment(ctx)
		if err != nil {
			return err
		}
		b := bm25.NewBuilder()
		insTermless := newInserter(ctx, tx, `INSERT INTO termless_chunks(id, seg)`, 2)
		for i, an := range segment.Analyse(s.an, batch) {
			b.AddCounts(uint64(ids[i]), an[0].Counts)
			if an[0].Counts.Total() == 0 {
				if err := insTermless.add(ids[i], seg); err != nil {
					return fmt.Errorf("rebuild keyword index: %w", err)
				}
			}
		}
		if err := insTermless.flush(); err != nil {
			return fmt.Errorf("rebuild keyword index: %w", err)
		}
		if err := writeSegment(ctx, tx, seg, b, 0); err != nil {
			return fmt.Errorf("rebuild keyword index: %w", err)
		}
	}
	for {
		segs, err := segment.Due(ctx, segTx{tx})
		if err != nil || len(segs) == 0 {
			return err
		}
		if err := segment.Merge(ctx, segTx{tx}, segs, rowsPerStmt); err != nil {
			return fmt.Errorf("rebuild keyword index: merge segments: %w", err)
		}
	}
}

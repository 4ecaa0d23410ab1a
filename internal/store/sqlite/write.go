package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/internal/sqlrows"
	"github.com/sagasu-dev/sagasu/internal/store/segment"
)

// Replace implements store.Driver.
func (s *Store) Replace(ctx context.Context, batch []store.SourceData) error {
	_, err := s.Apply(ctx, batch, nil)
	return err
}

var _ store.ApplyDriver = (*Store)(nil)

// Apply implements store.ApplyDriver: the sources of remove are deleted
// and batch written in one transaction, so a reader sees the index before
// or after, never between.
func (s *Store) Apply(ctx context.Context, batch []store.SourceData, remove []string) (int, error) {
	removed := 0
	// Analysed before the write lock is taken, with the postings already
	// built, so that one large source costs its encoded postings, not the
	// terms of all its chunks.
	prep := segment.Prepare(s.an, batch)
	// Compressed before the lock as well, with the index's dictionary
	// (made from this batch when the index has none and it is large).
	contents := make([]string, len(batch))
	for i, sd := range batch {
		contents[i] = sd.Content
	}
	enc, dict, err := s.codec.dict.encoderFor(ctx, contents)
	if err != nil {
		return 0, err
	}
	blocks := make([][][]byte, len(batch))
	for i, sd := range batch {
		blocks[i] = s.codec.blocks(enc, sd.Content)
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
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
		if err := storeDict(ctx, tx, dict); err != nil {
			return err
		}
		ids := make([]string, 0, len(batch))
		for _, sd := range batch {
			ids = append(ids, sd.Source.ID)
		}
		if _, err := s.deleteTx(ctx, tx, ids); err != nil {
			return err
		}
		seg, err := segTx{tx}.NewSegment(ctx)
		if err != nil {
			return err
		}
		now := time.Now().Unix()
		// Chunk IDs are assigned here, inside the write transaction, so the
		// chunks can go in with multi-row statements: AUTOINCREMENT's
		// sequence says where the last write stopped.
		var nextID int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'chunks'), 0)`).Scan(&nextID); err != nil {
			return err
		}
		firstID := nextID
		insSrc := newInserter(ctx, tx, `INSERT OR ROLLBACK INTO sources(id, uri, type, format, title, hash, size, chunks, indexed_at)`, 9)
		insContent := newInserter(ctx, tx, `INSERT OR ROLLBACK INTO content_blocks(source_id, blk, data)`, 3)
		insChunk := newInserter(ctx, tx, `INSERT OR ROLLBACK INTO chunks(id, source_id, idx, text, heading, start_line, end_line, start_byte, end_byte, tokens, terms, chash)`, 12)
		insTermless := newInserter(ctx, tx, `INSERT OR ROLLBACK INTO termless_chunks(id, seg)`, 2)
		for i, sd := range batch {
			src := sd.Source
			if err := insSrc.add(src.ID, src.URI, string(src.Type), string(src.Format), src.Title,
				src.ContentHash, len(sd.Content), len(sd.Chunks), now); err != nil {
				return fmt.Errorf("insert source %q: %w", src.URI, err)
			}
			for k, b := range blocks[i] {
				if err := insContent.add(src.ID, k, b); err != nil {
					return fmt.Errorf("insert content of %q: %w", src.URI, err)
				}
			}
			for j, r := range prep.Chunks[i] {
				c := sd.Chunks[j]
				nextID++
				id := nextID
				if err := insChunk.add(id, src.ID, j, chunkText(c, sd.Content), sqlrows.HeadingJSON(c.Heading), c.StartLine, c.EndLine,
					c.StartByte, c.EndByte, c.Tokens, r.Len, r.Hash); err != nil {
					return fmt.Errorf("insert chunk %d of %q: %w", j, src.URI, err)
				}
				if r.Len == 0 {
					if err := insTermless.add(id, seg); err != nil {
						return fmt.Errorf("insert chunk %d of %q: %w", j, src.URI, err)
					}
				}
				if sd.Vectors != nil {
					if err := s.putVector(ctx, tx, id, sd.Vectors[j]); err != nil {
						return fmt.Errorf("store vector of chunk %d of %q: %w", j, src.URI, err)
					}
				}
			}
		}
		for _, in := range []*inserter{insSrc, insContent, insChunk, insTermless} {
			if err := in.flush(); err != nil {
				return fmt.Errorf("insert sources: %w", err)
			}
		}
		if hasVectors(batch) {
			if err := bumpVectorVersion(ctx, tx); err != nil {
				return err
			}
		}
		// The postings were numbered from 1: chunk k of the batch is firstID+k.
		return writeSegment(ctx, tx, seg, prep.Postings, uint64(firstID))
	})
	if err != nil {
		return 0, err
	}
	// The batch is committed. Merging segments only speeds up queries: if it
	// is interrupted it rolls back whole and the next write merges instead.
	if err := s.compact(ctx); err != nil && ctx.Err() == nil {
		return removed, fmt.Errorf("sources written; %w", err)
	}
	s.trimWAL(ctx, walLimit)
	return removed, nil
}

// settledWAL is what Settle leaves of the WAL without truncating it.
const settledWAL = 1 << 20

var _ store.Settler = (*Store)(nil)

// Settle implements store.Settler: after a run of writes the WAL is
// checkpointed into the index and truncated, and the write connection with
// its page cache closed, so that a process that stays open (the MCP server
// after sagasu_index) keeps neither the run's WAL nor its cache.
func (s *Store) Settle(ctx context.Context) {
	s.trimWAL(ctx, settledWAL)
	s.closeWriteConn()
}

// walLimit is the size the WAL is kept to (journal_size_limit in Open).
// At 16 MB the truncating checkpoint ran after nearly every 8 MB batch of a
// bulk index and cost a tenth of its time (10.2–10.6 against 11.6–12.4
// MB/s on the 100,000-chunk bench); at 48 MB it runs after large merges.
const walLimit = 48 << 20

// trimWAL checkpoints the WAL into the database and truncates it when a
// write (a large batch, a merge of segments) grew it past limit: SQLite
// itself only cuts it back to the size of the last transaction, which
// stays on disk beside the index while a process holds it open. Failing
// (readers kept the WAL busy) costs nothing: the next write tries again.
func (s *Store) trimWAL(ctx context.Context, limit int64) {
	if fi, err := os.Stat(s.path + "-wal"); err != nil || fi.Size() <= limit {
		return
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return
	}
	defer conn.Close()
	// A reader of the WAL makes the checkpoint wait: briefly, not for the
	// 15 s a write waits.
	if _, err := conn.ExecContext(ctx, `PRAGMA busy_timeout = 200`); err != nil {
		return
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA busy_timeout = `+strconv.Itoa(busyTimeoutMS))
	if _, err := conn.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		slog.Debug("checkpoint the index's WAL", "index", s.path, "err", err)
	}
}

// Delete implements store.Driver.
func (s *Store) Delete(ctx context.Context, ids []string) (int, error) {
	var n int
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		n, err = s.deleteTx(ctx, tx, ids)
		return err
	})
	return n, err
}

// deleteTx removes sources, their chunks, vectors and postings. SQLite
// keeps no term list per chunk: a chunk's terms are those the pinned
// analyzer makes of its context text (exactly what it was indexed under),
// and its segment is learnt from the postings rows it is found in, so
// merges need not rewrite the chunks table. Only chunks without terms,
// which are in no row, have their segment recorded (termless_chunks).
func (s *Store) deleteTx(ctx context.Context, tx *sql.Tx, ids []string) (int, error) {
	var gone []segment.Chunk
	var termless []int // indexes in gone of chunks without terms
	removed := 0
	titles, err := existingTitles(ctx, tx, ids)
	if err != nil {
		return 0, err
	}
	for _, id := range ids {
		title, ok := titles[id]
		if !ok {
			continue
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+chunkColumns+`, `+spanColumn+` FROM chunks c WHERE c.source_id = ?`, id)
		if err != nil {
			return 0, err
		}
		var cs []doc.Chunk
		var spans []int
		for rows.Next() {
			var span bool
			c, err := sqlrows.ScanChunk(rows, &span)
			if err != nil {
				rows.Close()
				return 0, err
			}
			if span {
				spans = append(spans, len(cs))
			}
			cs = append(cs, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return 0, err
		}
		if err := s.fillSpans(ctx, tx, pick(cs, spans)); err != nil {
			return 0, fmt.Errorf("delete source %s: %w", id, err)
		}
		for _, c := range cs {
			g := segment.Chunk{ID: c.ID}
			g.Terms, g.Lens = segment.Indexed(s.an, title, c)
			if len(g.Terms) == 0 {
				termless = append(termless, len(gone))
			}
			gone = append(gone, g)
		}
		for _, i := range termless {
			err := tx.QueryRowContext(ctx, `SELECT seg FROM termless_chunks WHERE id = ?`, gone[i].ID).Scan(&gone[i].Seg)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return 0, err
			}
		}
		termless = termless[:0]
		if err := s.deleteVectors(ctx, tx, id); err != nil {
			return 0, err
		}
		for _, q := range []string{`DELETE FROM termless_chunks WHERE id IN (SELECT id FROM chunks WHERE source_id = ?)`, `DELETE FROM chunks WHERE source_id = ?`, `DELETE FROM content_blocks WHERE source_id = ?`, `DELETE FROM sources WHERE id = ?`} {
			if _, err := tx.ExecContext(ctx, q, id); err != nil {
				return 0, fmt.Errorf("delete source %s: %w", id, err)
			}
		}
		removed++
	}
	if err := segment.Delete(ctx, segTx{tx}, gone); err != nil {
		return 0, err
	}
	return removed, nil
}

func hasVectors(batch []store.SourceData) bool {
	for _, sd := range batch {
		if sd.Vectors != nil {
			return true
		}
	}
	return false
}

// existingTitles returns the titles of those of ids that are stored.
func existingTitles(ctx context.Context, tx *sql.Tx, ids []string) (map[string]string, error) {
	out := map[string]string{}
	for i := 0; i < len(ids); i += 500 {
		part := ids[i:min(i+500, len(ids))]
		args := make([]any, len(part))
		for j, id := range part {
			args[j] = id
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, title FROM sources WHERE id IN (`+placeholders(len(part))+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("look up sources: %w", err)
		}
		for rows.Next() {
			var id, title string
			if err := rows.Scan(&id, &title); err != nil {
				rows.Close()
				return nil, err
			}
			out[id] = title
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

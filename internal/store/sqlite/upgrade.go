package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sagasu-dev/sagasu/internal/doc"
)

// upgradeBatch is how many chunks splitContents reads at a time.
const upgradeBatch = 5000

// upgradeQuiet is how long an upgrade runs before it says what it is doing.
const upgradeQuiet = 3 * time.Second

// splitContents is the data part of migration 5, inside its transaction:
// it compresses every source's content into content_blocks, copies the
// chunks to chunks_v5 with a NULL text where the text is the span of the
// content, then drops the old tables and gives chunks_v5 their name. A
// chunk whose text is not exactly its span keeps its text.
func (s *Store) splitContents(ctx context.Context, tx *sql.Tx) error {
	start := time.Now()
	said := false
	progress := func(what string) {
		if !said && time.Since(start) > upgradeQuiet {
			slog.Info("upgrading the index to compressed content; this happens once", "index", s.path, "step", what)
			said = true
		}
	}
	var seq int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'chunks'), 0)`).Scan(&seq); err != nil {
		return fmt.Errorf("read chunk sequence: %w", err)
	}
	ids, err := contentIDs(ctx, tx)
	if err != nil {
		return err
	}
	ins := newInserter(ctx, tx, `INSERT INTO content_blocks(source_id, blk, data)`, 3)
	for _, id := range ids {
		var content string
		if err := tx.QueryRowContext(ctx, `SELECT content FROM contents WHERE source_id = ?`, id).Scan(&content); err != nil {
			return fmt.Errorf("read content of source %s: %w", id, err)
		}
		for k, b := range s.codec.blocks(nil, content) {
			if err := ins.add(id, k, b); err != nil {
				return fmt.Errorf("write content of source %s: %w", id, err)
			}
		}
		progress("content")
	}
	if err := ins.flush(); err != nil {
		return fmt.Errorf("write content: %w", err)
	}

	var cur struct {
		id, content string
		ok          bool
	}
	var after int64
	stored, spans := 0, 0
	for {
		rows, err := tx.QueryContext(ctx, `SELECT id, source_id, idx, text, heading, start_line, end_line, start_byte, end_byte, tokens, terms, chash
			FROM chunks WHERE id > ? ORDER BY id LIMIT ?`, after, upgradeBatch)
		if err != nil {
			return fmt.Errorf("read chunks: %w", err)
		}
		type row struct {
			c              doc.Chunk
			heading, chash string
			terms          int
		}
		var page []row
		for rows.Next() {
			var r row
			c := &r.c
			if err := rows.Scan(&c.ID, &c.SourceID, &c.Index, &c.Text, &r.heading, &c.StartLine, &c.EndLine, &c.StartByte, &c.EndByte, &c.Tokens, &r.terms, &r.chash); err != nil {
				rows.Close()
				return fmt.Errorf("read chunks: %w", err)
			}
			page = append(page, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read chunks: %w", err)
		}
		if len(page) == 0 {
			break
		}
		ins := newInserter(ctx, tx, `INSERT INTO chunks_v5(id, source_id, idx, text, heading, start_line, end_line, start_byte, end_byte, tokens, terms, chash)`, 12)
		for _, r := range page {
			c := r.c
			if !cur.ok || cur.id != c.SourceID {
				// A source's chunks have consecutive IDs: each content is
				// read once.
				cur.id, cur.ok, cur.content = c.SourceID, true, ""
				err := tx.QueryRowContext(ctx, `SELECT content FROM contents WHERE source_id = ?`, c.SourceID).Scan(&cur.content)
				if err != nil && !errors.Is(err, sql.ErrNoRows) {
					return fmt.Errorf("read content of source %s: %w", c.SourceID, err)
				}
			}
			text := chunkText(c, cur.content)
			if text == nil {
				spans++
			} else {
				stored++
			}
			if err := ins.add(c.ID, c.SourceID, c.Index, text, r.heading, c.StartLine, c.EndLine, c.StartByte, c.EndByte, c.Tokens, r.terms, r.chash); err != nil {
				return fmt.Errorf("copy chunk %d: %w", c.ID, err)
			}
		}
		if err := ins.flush(); err != nil {
			return fmt.Errorf("copy chunks: %w", err)
		}
		after = page[len(page)-1].c.ID
		progress("chunks")
	}
	for _, q := range []string{
		`DROP TABLE chunks`,
		`DROP TABLE contents`,
		`ALTER TABLE chunks_v5 RENAME TO chunks`,
		`CREATE INDEX chunks_chash ON chunks(chash)`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	// New chunks must not take the IDs of deleted ones: keep the sequence
	// where the old table left it (dropping a table drops its row).
	res, err := tx.ExecContext(ctx, `UPDATE sqlite_sequence SET seq = MAX(seq, ?) WHERE name = 'chunks'`, seq)
	if err != nil {
		return fmt.Errorf("keep chunk sequence: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 && seq > 0 {
		if _, err := tx.ExecContext(ctx, `INSERT INTO sqlite_sequence(name, seq) VALUES('chunks', ?)`, seq); err != nil {
			return fmt.Errorf("keep chunk sequence: %w", err)
		}
	}
	if said {
		slog.Info("index upgraded", "index", s.path, "sources", len(ids), "chunks", stored+spans,
			"chunks_with_own_text", stored, "seconds", time.Since(start).Round(time.Second).Seconds())
	}
	return nil
}

// contentIDs lists the sources with a contents row, in the order they were
// written.
func contentIDs(ctx context.Context, tx *sql.Tx) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT source_id FROM contents ORDER BY rowid`)
	if err != nil {
		return nil, fmt.Errorf("list contents: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("list contents: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

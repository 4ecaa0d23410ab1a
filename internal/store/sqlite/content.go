package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// A source's content is stored as zstd frames of blockSize raw bytes each
// (table content_blocks, row blk covers bytes [blk*blockSize,
// (blk+1)*blockSize)), every frame compressed on its own: reading a chunk
// decompresses only the blocks its span covers, and no row of a large file
// is larger than one block.
const blockSize = 64 << 10

// chunkColumns are sqlrows.ChunkColumns as this driver stores them: a chunk
// whose text is its source's content[start_byte:end_byte] (all that the
// chunkers make) has a NULL text, and spanColumn, selected after them, says
// so. fillSpans then reads the text from the content.
const (
	chunkColumns = `c.id, c.source_id, c.idx, COALESCE(c.text, ''), c.heading, c.start_line, c.end_line, c.start_byte, c.end_byte, c.tokens`
	spanColumn   = `c.text IS NULL`
)

// spanBlockColumn selects, for a chunk stored as a span within one block,
// that block's data (else NULL), so that a read of a few chunks needs no
// second query: spanFromBlock makes the text of it.
func spanBlockColumn() string {
	return fmt.Sprintf(`CASE WHEN c.text IS NULL AND c.end_byte > c.start_byte AND c.start_byte / %[1]d = (c.end_byte - 1) / %[1]d
		THEN (SELECT b.data FROM content_blocks b WHERE b.source_id = c.source_id AND b.blk = c.start_byte / %[1]d) END`, blockSize)
}

// spanFromBlock sets the text of a chunk from the block its span lies in
// (selected by spanBlockColumn).
func (s *Store) spanFromBlock(c *doc.Chunk, data []byte) error {
	blk := c.StartByte / blockSize
	text, err := s.codec.decode(data)
	if err != nil {
		return fmt.Errorf("read chunk %d: block %d of the content of source %s: %w (the index is damaged: index the source again)", c.ID, blk, c.SourceID, err)
	}
	lo, hi := c.StartByte-blk*blockSize, c.EndByte-blk*blockSize
	if hi > len(text) {
		return fmt.Errorf("read chunk %d: its span [%d, %d) is outside the content of source %s (the index is damaged: index the source again)", c.ID, c.StartByte, c.EndByte, c.SourceID)
	}
	c.Text = text[lo:hi]
	return nil
}

// codec compresses content blocks. One per Store: a zstd encoder is costly
// to make and both are safe for concurrent use.
type codec struct {
	enc   *zstd.Encoder // without a dictionary
	dec   *zstd.Decoder // without a dictionary
	dict  dictCodec     // with the index's dictionaries (dict.go)
	cache *blockCache
}

func newCodec() (*codec, error) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault),
		zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)), zstd.WithWindowSize(blockSize))
	if err != nil {
		return nil, fmt.Errorf("make content compressor: %w", err)
	}
	// A frame never holds more than one block; the limit stops a damaged
	// frame from claiming gigabytes.
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)), zstd.WithDecoderMaxMemory(4*blockSize))
	if err != nil {
		enc.Close()
		return nil, fmt.Errorf("make content decompressor: %w", err)
	}
	return &codec{enc: enc, dec: dec, cache: newBlockCache(blockCacheBytes)}, nil
}

func (c *codec) close() {
	c.enc.Close()
	c.dec.Close()
	c.dict.close()
}

// blocks compresses content into its stored blocks, with enc (nil: without
// a dictionary).
func (c *codec) blocks(enc *zstd.Encoder, content string) [][]byte {
	if enc == nil {
		enc = c.enc
	}
	out := make([][]byte, 0, (len(content)+blockSize-1)/blockSize)
	for off := 0; off < len(content); off += blockSize {
		out = append(out, enc.EncodeAll([]byte(content[off:min(off+blockSize, len(content))]), nil))
	}
	return out
}

// isSpan reports whether a chunk's text is content[StartByte:EndByte], so
// that it need not be stored twice.
func isSpan(c doc.Chunk, content string) bool {
	return c.StartByte >= 0 && c.StartByte <= c.EndByte && c.EndByte <= len(content) &&
		content[c.StartByte:c.EndByte] == c.Text
}

// chunkText is the stored text of a chunk: nil (NULL) when it is a span of
// the content.
func chunkText(c doc.Chunk, content string) any {
	if isSpan(c, content) {
		return nil
	}
	return c.Text
}

// queryer is a *sql.DB or a *sql.Tx.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// blockKey names one stored block.
type blockKey struct {
	source string
	blk    int
}

// blockRun is the blocks first..last of one source.
type blockRun struct {
	source      string
	first, last int
}

// runsPerQuery bounds the SELECTs of one compound statement (SQLite allows
// 500).
const runsPerQuery = 200

// fillSpans sets the text of chunks stored as spans of their source's
// content (each must have SourceID, StartByte and EndByte), reading each
// block they cover once.
func (s *Store) fillSpans(ctx context.Context, q queryer, cs []*doc.Chunk) error {
	if len(cs) == 0 {
		return nil
	}
	var runs []blockRun
	for _, c := range cs {
		if c.EndByte <= c.StartByte {
			c.Text = ""
			continue
		}
		runs = append(runs, blockRun{c.SourceID, c.StartByte / blockSize, (c.EndByte - 1) / blockSize})
	}
	runs = mergeRuns(runs)
	blocks := map[blockKey]string{}
	for i := 0; i < len(runs); i += runsPerQuery {
		part := runs[i:min(i+runsPerQuery, len(runs))]
		sel := make([]string, len(part))
		args := make([]any, 0, 3*len(part))
		for j, r := range part {
			sel[j] = `SELECT source_id, blk, data FROM content_blocks WHERE source_id = ? AND blk BETWEEN ? AND ?`
			args = append(args, r.source, r.first, r.last)
		}
		if err := s.readBlocks(ctx, q, strings.Join(sel, ` UNION ALL `), args, func(k blockKey, text string) {
			blocks[k] = text
		}); err != nil {
			return err
		}
	}
	for _, c := range cs {
		if c.EndByte <= c.StartByte {
			continue
		}
		first, last := c.StartByte/blockSize, (c.EndByte-1)/blockSize
		var b strings.Builder
		for blk := first; blk <= last; blk++ {
			text, ok := blocks[blockKey{c.SourceID, blk}]
			if !ok {
				return fmt.Errorf("read chunk %d: block %d of the content of source %s is missing (the index is damaged: index the source again)", c.ID, blk, c.SourceID)
			}
			lo, hi := max(c.StartByte-blk*blockSize, 0), min(c.EndByte-blk*blockSize, len(text))
			if lo > hi {
				return fmt.Errorf("read chunk %d: its span [%d, %d) is outside the content of source %s (the index is damaged: index the source again)", c.ID, c.StartByte, c.EndByte, c.SourceID)
			}
			if first == last {
				// A substring shares the decompressed block: no copy.
				c.Text = text[lo:hi]
				break
			}
			b.WriteString(text[lo:hi])
		}
		if first != last {
			c.Text = b.String()
		}
		if len(c.Text) != c.EndByte-c.StartByte {
			return fmt.Errorf("read chunk %d: its span [%d, %d) is outside the content of source %s (the index is damaged: index the source again)", c.ID, c.StartByte, c.EndByte, c.SourceID)
		}
	}
	return nil
}

// mergeRuns sorts runs and joins those of one source that overlap or touch.
func mergeRuns(runs []blockRun) []blockRun {
	slices.SortFunc(runs, func(a, b blockRun) int {
		if c := strings.Compare(a.source, b.source); c != 0 {
			return c
		}
		return a.first - b.first
	})
	out := runs[:0]
	for _, r := range runs {
		if n := len(out); n > 0 && out[n-1].source == r.source && r.first <= out[n-1].last+1 {
			out[n-1].last = max(out[n-1].last, r.last)
			continue
		}
		out = append(out, r)
	}
	return out
}

// readBlocks runs a query of (source_id, blk, data) rows and hands each
// block decompressed to fn.
func (s *Store) readBlocks(ctx context.Context, q queryer, query string, args []any, fn func(blockKey, string)) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("read content: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k blockKey
		var data sql.RawBytes
		if err := rows.Scan(&k.source, &k.blk, &data); err != nil {
			return fmt.Errorf("read content: %w", err)
		}
		text, err := s.codec.decode(data)
		if err != nil {
			return fmt.Errorf("read content of source %s: block %d: %w (the index is damaged: index the source again)", k.source, k.blk, err)
		}
		fn(k, text)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read content: %w", err)
	}
	return nil
}

// content returns the whole content of a source; ok is false when no such
// source is stored.
func (s *Store) content(ctx context.Context, q queryer, id string) (text string, ok bool, err error) {
	var b strings.Builder
	next := 0
	err = s.readBlocks(ctx, q, `SELECT source_id, blk, data FROM content_blocks WHERE source_id = ? ORDER BY blk`, []any{id}, func(k blockKey, text string) {
		if k.blk != next {
			next = -1
		}
		if next >= 0 {
			next++
		}
		b.WriteString(text)
	})
	if err != nil {
		return "", false, err
	}
	if next < 0 {
		return "", false, fmt.Errorf("read content of source %s: a block is missing (the index is damaged: index the source again)", id)
	}
	if next > 0 {
		return b.String(), true, nil
	}
	// No blocks: empty content, or no source.
	var one int
	err = q.QueryRowContext(ctx, `SELECT 1 FROM sources WHERE id = ?`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read content of source %s: %w", id, err)
	}
	return "", true, nil
}

// Content implements store.Store.
func (s *Store) Content(ctx context.Context, id string) (string, error) {
	c, ok, err := s.content(ctx, s.db, id)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("source %q: %w", id, store.ErrNotFound)
	}
	return c, nil
}

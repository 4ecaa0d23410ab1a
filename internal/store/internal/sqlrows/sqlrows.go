// Package sqlrows holds what the SQL drivers share about rows: the chunk
// columns they select and how a chunk is read back. It is not part of the
// store contract.
package sqlrows

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// ChunkColumns are the chunk columns drivers select (table alias c), in the
// order ScanChunk reads them.
const ChunkColumns = `c.id, c.source_id, c.idx, c.text, c.heading, c.start_line, c.end_line, c.start_byte, c.end_byte, c.tokens`

// Scanner is a row: *sql.Row, *sql.Rows, pgx.Row and pgx.Rows all are.
type Scanner interface{ Scan(dest ...any) error }

// ScanChunk reads ChunkColumns, then extra columns into extra. Heading paths
// are stored as JSON arrays by every driver.
func ScanChunk(r Scanner, extra ...any) (doc.Chunk, error) {
	var c doc.Chunk
	var heading string
	dst := append([]any{&c.ID, &c.SourceID, &c.Index, &c.Text, &heading, &c.StartLine, &c.EndLine, &c.StartByte, &c.EndByte, &c.Tokens}, extra...)
	if err := r.Scan(dst...); err != nil {
		return c, err
	}
	if err := json.Unmarshal([]byte(heading), &c.Heading); err != nil {
		return c, fmt.Errorf("chunk %d: bad heading: %w", c.ID, err)
	}
	if len(c.Heading) == 0 {
		c.Heading = nil
	}
	return c, nil
}

// HeadingJSON is the stored form of a heading path.
func HeadingJSON(h []string) string {
	if h == nil {
		h = []string{}
	}
	b, _ := json.Marshal(h)
	return string(b)
}

// RunColumns are the run columns drivers select, in the order ScanRun reads
// them. Times are Unix microseconds and JSON is text in every driver.
const RunColumns = `id, kind, title, status, created, updated, meta`

// ScanRun reads RunColumns.
func ScanRun(r Scanner) (store.Run, error) {
	var run store.Run
	var created, updated int64
	var meta string
	err := r.Scan(&run.ID, &run.Kind, &run.Title, &run.Status, &created, &updated, &meta)
	run.Created, run.Updated, run.Meta = time.UnixMicro(created).UTC(), time.UnixMicro(updated).UTC(), json.RawMessage(meta)
	return run, err
}

// EventColumns are the event columns drivers select, in the order
// ScanEvent reads them.
const EventColumns = `seq, time, type, data`

// ScanEvent reads EventColumns of an event of run runID.
func ScanEvent(r Scanner, runID string) (store.Event, error) {
	e := store.Event{RunID: runID}
	var t int64
	var data string
	err := r.Scan(&e.Seq, &t, &e.Type, &data)
	e.Time, e.Data = time.UnixMicro(t).UTC(), json.RawMessage(data)
	return e, err
}

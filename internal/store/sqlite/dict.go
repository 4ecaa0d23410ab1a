package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Content blocks are compressed with a dictionary once the index has one:
// each source is compressed on its own (a chunk is read by decompressing
// the block its span lies in), and a small source alone gives zstd little
// to find repeats in. The dictionary is raw text: pieces of the first large
// batch's content (dictBytes in all), zstd's "raw content" form, so making
// it costs a copy. On the synthetic SciFact bench the content came to
// 0.426 of the text against 0.520 without one, compressed at zstd's fastest
// level no slower than before at its default one.
//
// Dictionaries live in table content_dicts under their zstd dictionary ID
// (a random 31-bit number, which every frame made with it names). A batch
// stores the dictionary it was compressed with in its own transaction
// (INSERT OR IGNORE), so a block never names a dictionary the index lacks,
// whichever writer or process made it. A reader that meets a frame naming
// a dictionary it has not loaded (another process made it since) loads
// them again.
const (
	// dictBytes is the size of a dictionary.
	dictBytes = 64 << 10
	// dictPiece is how much of each sampled source goes into it.
	dictPiece = 512
	// dictMinBatch is the least content a batch must hold to make the
	// index's dictionary: an index smaller than a few batches would store
	// more dictionary than the dictionary saves.
	dictMinBatch = 4 << 20
)

// dictionary is one stored dictionary.
type dictionary struct {
	id   uint32
	data []byte
}

// dictCodec is the dictionary half of a codec: the encoder of the
// dictionary new blocks use, and the decoder of every dictionary loaded.
type dictCodec struct {
	mu   sync.RWMutex
	cur  *dictionary     // the one new blocks are compressed with; nil: none yet
	enc  *zstd.Encoder   // with cur
	dec  *zstd.Decoder   // with every loaded dictionary; nil: none loaded
	have map[uint32]bool // the dictionaries dec knows
	old  []*zstd.Decoder // decoders dec replaced, closed with the codec
	// load reads the stored dictionaries (Store.dictionaries).
	load func(context.Context) ([]dictionary, error)
	// minBatch is dictMinBatch (tests lower it).
	minBatch int
}

// encoderFor returns the encoder and dictionary for a batch of the given
// contents: the index's dictionary, made from this batch if the index has
// none yet and the batch is large enough; nil when blocks are to be
// compressed without one.
func (d *dictCodec) encoderFor(ctx context.Context, contents []string) (*zstd.Encoder, *dictionary, error) {
	d.mu.RLock()
	enc, cur := d.enc, d.cur
	d.mu.RUnlock()
	if cur != nil {
		return enc, cur, nil
	}
	total := 0
	for _, c := range contents {
		total += len(c)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cur != nil { // another writer made or found it meanwhile
		return d.enc, d.cur, nil
	}
	stored, err := d.load(ctx)
	if err != nil {
		return nil, nil, err
	}
	var dict *dictionary
	switch {
	case len(stored) > 0:
		dict = &stored[0]
	case total >= d.minBatch:
		dict = &dictionary{id: 1 + rand.Uint32N(1<<31-1), data: sampleDict(contents)}
	default:
		return nil, nil, nil
	}
	enc, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest),
		zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)), zstd.WithWindowSize(blockSize),
		zstd.WithEncoderDictRaw(dict.id, dict.data))
	if err != nil {
		return nil, nil, fmt.Errorf("make content compressor: %w", err)
	}
	if err := d.learnLocked(append(stored, *dict)); err != nil {
		enc.Close()
		return nil, nil, err
	}
	d.cur, d.enc = dict, enc
	return enc, dict, nil
}

// sampleDict makes a dictionary of pieces of contents spread over them.
func sampleDict(contents []string) []byte {
	total := 0
	for _, c := range contents {
		total += len(c)
	}
	out := make([]byte, 0, dictBytes)
	// Take a piece every step bytes of the batch, at the start of the
	// source it falls in (or the next): sources start alike (titles,
	// headings, front matter) more than they go on alike.
	step := max(total/(dictBytes/dictPiece), 1)
	next, at := 0, 0
	for _, c := range contents {
		if at+len(c) > next && len(c) > 0 && len(out) < dictBytes {
			n := min(len(c), dictPiece, dictBytes-len(out))
			out = append(out, c[:n]...)
			next = at + len(c) + step - n
		}
		at += len(c)
	}
	return out
}

// learnLocked makes the decoder know dicts (and every one it knew); d.mu
// is held.
func (d *dictCodec) learnLocked(dicts []dictionary) error {
	have := map[uint32]bool{}
	opts := []zstd.DOption{zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)), zstd.WithDecoderMaxMemory(4 * blockSize)}
	for _, dc := range dicts {
		if !have[dc.id] {
			have[dc.id] = true
			opts = append(opts, zstd.WithDecoderDictRaw(dc.id, dc.data))
		}
	}
	if d.dec != nil && len(have) == len(d.have) {
		return nil
	}
	dec, err := zstd.NewReader(nil, opts...)
	if err != nil {
		return fmt.Errorf("make content decompressor: %w", err)
	}
	if d.dec != nil {
		// Another goroutine may be decoding with it: it is closed with
		// the codec (dictionaries are added a few times in an index's
		// life).
		d.old = append(d.old, d.dec)
	}
	d.dec, d.have = dec, have
	return nil
}

// decode decompresses a frame made with a dictionary, loading the stored
// dictionaries first when it names one this process does not know.
func (d *dictCodec) decode(comp []byte) ([]byte, error) {
	d.mu.RLock()
	dec := d.dec
	d.mu.RUnlock()
	if dec != nil {
		raw, err := dec.DecodeAll(comp, nil)
		if !errors.Is(err, zstd.ErrUnknownDictionary) {
			return raw, err
		}
	}
	d.mu.Lock()
	stored, err := d.load(context.Background())
	if err == nil {
		if d.cur != nil {
			stored = append(stored, *d.cur)
		}
		err = d.learnLocked(stored)
	}
	dec = d.dec
	d.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("load the content dictionaries: %w", err)
	}
	return dec.DecodeAll(comp, nil)
}

func (d *dictCodec) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.enc != nil {
		d.enc.Close()
	}
	if d.dec != nil {
		d.dec.Close()
	}
	for _, dec := range d.old {
		dec.Close()
	}
}

// dictionaries reads the stored content dictionaries, by ID.
func (s *Store) dictionaries(ctx context.Context) ([]dictionary, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, data FROM content_dicts ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []dictionary
	for rows.Next() {
		var id int64
		var data []byte
		if err := rows.Scan(&id, &data); err != nil {
			return nil, err
		}
		out = append(out, dictionary{id: uint32(id), data: data})
	}
	return out, rows.Err()
}

// storeDict records the dictionary a batch was compressed with, in the
// batch's transaction.
func storeDict(ctx context.Context, tx *sql.Tx, d *dictionary) error {
	if d == nil {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO content_dicts(id, data) VALUES(?, ?)`, int64(d.id), d.data); err != nil {
		return fmt.Errorf("store the content dictionary: %w", err)
	}
	return nil
}

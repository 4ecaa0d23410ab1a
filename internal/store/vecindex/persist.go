package vecindex

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
)

// A saved graph holds the nodes and links of a Live index's graph and the
// chunk ID of each node, not the vectors: whoever restores it has them
// already (the SQLite store reads them from its vector table) and fills
// them in by ID. Its layout, little-endian:
//
//	magic "SGSUHNSW", format version (uint32)
//	dim, m, efConstruction, efSearch (uint32 each)
//	nodes (uint64), entry (int32), top layer (uint32)
//	the caller's bytes: length (uint32), then the bytes
//	per node: chunk ID (int64), state, top layer, layer-0 link count (a byte each)
//	per linked node: its layer-0 links, then for each upper layer its count and links (int32 each)
//	CRC-32 (IEEE) of everything before it (uint32)
//
// Graphs linked by the float rows (before the int8 walk) and by the int8
// copy are both format 1: the links mean the same either way
// (TestRestoresGraphSavedBeforeInt8Walk reads one saved by the older
// code). Raise graphVersion whenever the layout or a field's meaning
// changes: Restore refuses any other version and the store builds the
// graph again.
const (
	graphMagic   = "SGSUHNSW"
	graphVersion = 1
)

// ErrNoGraph is returned by Save when the index has no graph to save.
var ErrNoGraph = errors.New("vecindex: no graph to save")

// Save writes the graph, with extra (the caller's own record, given back by
// Restore), to w. The graph is copied while searches go on and written
// afterwards, so a slow w holds nothing up.
func (l *Live) Save(w io.Writer, extra []byte) error {
	l.mu.RLock()
	g := l.g
	if g == nil {
		l.mu.RUnlock()
		return ErrNoGraph
	}
	c := &HNSW{
		m: g.m, m0: g.m0, efSearch: g.efSearch, efConstruction: g.efConstruction, entry: g.entry, top: g.top,
		levels: slices.Clone(g.levels), count0: slices.Clone(g.count0), state: slices.Clone(g.state),
		links0: slices.Clone(g.links0), upper: make([][]int32, len(g.upper)),
	}
	for i, u := range g.upper {
		if len(u) > 0 {
			c.upper[i] = slices.Clone(u)
		}
	}
	ids := slices.Clone(l.f.ids[:len(g.levels)])
	dim := l.f.dim
	l.mu.RUnlock()

	crc := crc32.NewIEEE()
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<20)
	e := encoder{w: bw}
	e.bytes([]byte(graphMagic))
	e.u32(graphVersion)
	e.u32(uint32(dim))
	e.u32(uint32(c.m))
	e.u32(uint32(c.efConstruction))
	e.u32(uint32(c.efSearch))
	e.u64(uint64(len(c.levels)))
	e.u32(uint32(c.entry))
	e.u32(uint32(c.top))
	e.u32(uint32(len(extra)))
	e.bytes(extra)
	for n := range c.levels {
		id := ids[n]
		if c.state[n] == unlinked {
			id = 0
		}
		e.u64(uint64(id))
		e.bytes([]byte{c.state[n], c.levels[n], c.count0[n]})
	}
	for n := range c.levels {
		if c.state[n] == unlinked {
			continue
		}
		for _, x := range c.neighbours(int32(n), 0) {
			e.u32(uint32(x))
		}
		for l := 1; l <= int(c.levels[n]); l++ {
			ns := c.neighbours(int32(n), l)
			e.u32(uint32(len(ns)))
			for _, x := range ns {
				e.u32(uint32(x))
			}
		}
	}
	if e.err != nil {
		return fmt.Errorf("save vector graph: %w", e.err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("save vector graph: %w", err)
	}
	var sum [4]byte
	binary.LittleEndian.PutUint32(sum[:], crc.Sum32())
	if _, err := w.Write(sum[:]); err != nil {
		return fmt.Errorf("save vector graph: %w", err)
	}
	return nil
}

// encoder writes little-endian values, keeping the first error.
type encoder struct {
	w   io.Writer
	buf [8]byte
	err error
}

func (e *encoder) bytes(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

func (e *encoder) u32(v uint32) {
	binary.LittleEndian.PutUint32(e.buf[:4], v)
	e.bytes(e.buf[:4])
}

func (e *encoder) u64(v uint64) {
	binary.LittleEndian.PutUint64(e.buf[:8], v)
	e.bytes(e.buf[:8])
}

// Restorer rebuilds a Live index from a saved graph: Fill gives each row
// its vector, then Live returns the index.
type Restorer struct {
	l      *Live
	slots  map[int64]int32 // chunk ID -> node, for the live nodes
	filled []bool
}

// errCorrupt reports a saved graph that cannot be read back.
var errCorrupt = errors.New("vecindex: saved graph is corrupt")

// Restore reads a graph written by Save and returns a Restorer for it and
// the caller's extra bytes. A graph of another format or dimension, or one
// that is cut short or damaged, is an error: build a new one instead.
func Restore(r io.Reader, dim int, opt LiveOptions) (*Restorer, []byte, error) {
	crc := crc32.NewIEEE()
	d := decoder{r: io.TeeReader(bufio.NewReaderSize(r, 1<<20), crc)}
	if string(d.bytes(len(graphMagic))) != graphMagic || d.u32() != graphVersion {
		return nil, nil, fmt.Errorf("%w: not a saved graph of this version", errCorrupt)
	}
	if d.err != nil {
		return nil, nil, d.fail()
	}
	if got := int(d.u32()); got != dim {
		return nil, nil, fmt.Errorf("vecindex: saved graph holds %d-dimensional vectors, not %d", got, dim)
	}
	m, efC := int(d.u32()), int(d.u32())
	d.u32() // efSearch when saved: a search uses the caller's (below)
	n := d.u64()
	entry, top := int32(d.u32()), int(d.u32())
	extra := d.bytes(int(d.u32()))
	if d.err != nil {
		return nil, nil, d.fail()
	}
	if m < 1 || m > 127 || n > 1<<31 || top > 32 || entry < -1 || int64(entry) >= int64(n) {
		return nil, nil, fmt.Errorf("%w: bad header", errCorrupt)
	}
	// The links depend on M and efConstruction; the search list length is
	// the caller's (or today's default), not the one saved with the graph.
	opt.Graph.M, opt.Graph.EfConstruction = m, efC
	opt.Graph.Seed ^= n // levels of later nodes need not repeat the saved ones
	l := newLive(dim, int(n), opt)
	g := newHNSW(l.cx, opt.Graph)
	g.entry, g.top = entry, top
	nodes := int(n)
	g.grow(nodes)
	l.f.ids = make([]int64, nodes)
	l.f.data = make([]float32, nodes*dim)
	l.gone = make([]bool, nodes)
	l.cx.grow(nodes)
	rs := &Restorer{l: l, slots: map[int64]int32{}, filled: make([]bool, nodes)}
	for i := range nodes {
		id := int64(d.u64())
		b := d.bytes(3)
		if d.err != nil {
			return nil, nil, d.fail()
		}
		st, lv, c0 := b[0], b[1], b[2]
		if st > dead || lv > 32 || int(c0) > g.m0 || (st == unlinked && (lv != 0 || c0 != 0)) {
			return nil, nil, fmt.Errorf("%w: bad node %d", errCorrupt, i)
		}
		l.f.ids[i] = id
		g.state[i], g.levels[i], g.count0[i] = st, lv, c0
		switch st {
		case live:
			g.live++
			rs.slots[id] = int32(i)
		case dead:
			g.dead++
		}
	}
	link := func() int32 {
		x := int32(d.u32())
		if x < 0 || int64(x) >= int64(n) || g.state[x] == unlinked {
			if d.err == nil {
				d.err = fmt.Errorf("%w: bad link", errCorrupt)
			}
			return 0
		}
		return x
	}
	for i := range nodes {
		if g.state[i] == unlinked {
			continue
		}
		o := i * g.m0
		for j := range int(g.count0[i]) {
			g.links0[o+j] = link()
		}
		if lv := int(g.levels[i]); lv > 0 {
			g.upper[i] = make([]int32, lv*(g.m+1))
			for l := 1; l <= lv; l++ {
				c := d.u32()
				if c > uint32(g.m) {
					return nil, nil, fmt.Errorf("%w: bad link count", errCorrupt)
				}
				blk := g.upper[i][(l-1)*(g.m+1):]
				blk[0] = int32(c)
				for j := range int(c) {
					blk[1+j] = link()
				}
			}
		}
		if d.err != nil {
			return nil, nil, d.fail()
		}
	}
	want := crc.Sum32()
	var sum [4]byte
	if _, err := io.ReadFull(d.r, sum[:]); err != nil || binary.LittleEndian.Uint32(sum[:]) != want {
		return nil, nil, fmt.Errorf("%w: checksum does not match", errCorrupt)
	}
	if entry >= 0 && g.state[entry] == unlinked {
		return nil, nil, fmt.Errorf("%w: the entry point is not linked", errCorrupt)
	}
	l.g = g
	return rs, extra, nil
}

// Fill sets the vector of chunk id, when the saved graph has a live node
// for it, and reports whether it did. Vectors it refuses (unknown IDs,
// vectors that changed length or are zero) go to the Live index with Add.
func (rs *Restorer) Fill(id int64, v []float32) bool {
	r, ok := rs.slots[id]
	if !ok || rs.filled[r] || !rs.l.f.set(int(r), id, v) {
		return false
	}
	rs.filled[r] = true
	return true
}

// Live returns the restored index: nodes never filled (their vectors were
// deleted since the graph was saved) are tombstones and unlinked rows are
// free. The Restorer must not be used afterwards.
func (rs *Restorer) Live() *Live {
	l, g := rs.l, rs.l.g
	for r := range l.f.ids {
		switch {
		case rs.filled[r]:
			l.slots[l.f.ids[r]] = int32(r)
			l.cx.set(r)
			l.live++
		case g.state[r] == live:
			l.gone[r] = true
			g.markDead(int32(r))
		case g.state[r] == dead:
			l.gone[r] = true
		default:
			l.gone[r] = true
			l.free = append(l.free, int32(r))
		}
	}
	l.start()
	l.changed()
	return l
}

// decoder reads little-endian values, keeping the first error.
type decoder struct {
	r   io.Reader
	buf [8]byte
	err error
}

func (d *decoder) fail() error {
	if errors.Is(d.err, io.EOF) || errors.Is(d.err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: cut short", errCorrupt)
	}
	return d.err
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil || n < 0 || n > 1<<20 {
		if d.err == nil {
			d.err = fmt.Errorf("%w: bad length", errCorrupt)
		}
		return nil
	}
	b := make([]byte, n)
	_, d.err = io.ReadFull(d.r, b)
	return b
}

func (d *decoder) u32() uint32 {
	if d.err != nil {
		return 0
	}
	if _, d.err = io.ReadFull(d.r, d.buf[:4]); d.err != nil {
		return 0
	}
	return binary.LittleEndian.Uint32(d.buf[:4])
}

func (d *decoder) u64() uint64 {
	if d.err != nil {
		return 0
	}
	if _, d.err = io.ReadFull(d.r, d.buf[:8]); d.err != nil {
		return 0
	}
	return binary.LittleEndian.Uint64(d.buf[:8])
}

package bm25

import (
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
	"slices"
	"unsafe"
)

// A cachedList is one term's postings decoded and scored for the Cache,
// kept compact: a million-chunk index holds about 120 million postings,
// which as a 32-bit ID and a float32 each would take a gigabyte, and about
// a million terms, most of them in a handful of chunks, for which what a
// list costs besides its postings matters as much.
//
//   - IDs: the postings fall in blocks of blockSize. A block keeps its
//     first and last ID, and each posting's offset from the first, packed
//     in as many bits as the block's span needs (its width: about 9 bits
//     for a term in half the chunks, 16 for one in a chunk in 500). Offsets
//     are read directly by their bit position, so walking and seeking
//     cost about what they cost on a plain array.
//   - Contributions are exact float32s (scores stay bit-identical to
//     Score's). A list of more than a few postings names its distinct
//     values in a dictionary and packs a code per posting in as many bits
//     as the dictionary's size needs; others, and lists with more distinct
//     values than 16-bit codes name, keep the float32s.
//   - All of it lives in one allocation (words): the blocks, then the
//     float32s (the dictionary or the raw scores), then the packed offsets
//     and codes, then packPad bytes.
//
// About three bytes per posting in a large list, its dictionary included
// (2.7 over the lists of 10,000 postings or more of the 100k-chunk SciFact
// bench), against eight unpacked, and about 150 bytes for a term in a few
// chunks.
type cachedList struct {
	term  string
	n     int32   // postings
	max   float32 // the best contribution
	words []uint32
	nsc   uint32 // the float32s after the blocks: the dictionary's size, or n
	codes uint32 // the byte of words' bytes at which a coded list's codes start
	cw    uint8  // the bits of a code
	coded bool

	prev, next *cachedList // the Cache's LRU order
}

// The layout of one block in a list's words: its first and last ID, the
// byte of words' bytes at which its offsets start, and their width.
const (
	blkFirst = iota
	blkLast
	blkAt
	blkWidth
	blkWords
)

// blockSize is how many postings share a first ID.
const blockSize = 128

// codeMin is the fewest postings a list codes its scores for.
const codeMin = 32

// listOverhead approximates what a list costs besides its words: the
// struct, the term and its map entry.
const listOverhead = 160

// packPad follows packed bits so that any value is read by one 8-byte
// load.
const packPad = 8

// unpackAt reads the w-bit value (w <= 32) that starts at bit of the
// bytes at p, a list's words, whose packPad bytes after the last value
// keep every 8-byte load inside them (no bounds are checked: cursors read
// every posting through it).
func unpackAt(p unsafe.Pointer, bit uint, w uint8) uint32 {
	v := binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(p, bit>>3))[:])
	return uint32((v >> (bit & 7)) & (1<<w - 1))
}

// pack writes v (below 1<<w, w <= 32) at bit of buf, whose bits there are
// zero.
func pack(buf []byte, bit uint, v uint32) {
	b := buf[bit>>3:]
	binary.LittleEndian.PutUint64(b, binary.LittleEndian.Uint64(b)|uint64(v)<<(bit&7))
}

// views returns l's blocks (blkWords words each), its float32s and all of
// its words as bytes.
func (l *cachedList) views() (blk []uint32, sc []float32, b []byte) {
	if len(l.words) == 0 {
		return nil, nil, nil
	}
	nb := (int(l.n) + blockSize - 1) / blockSize * blkWords
	p := unsafe.Pointer(unsafe.SliceData(l.words))
	return l.words[:nb], unsafe.Slice((*float32)(unsafe.Add(p, 4*nb)), l.nsc), unsafe.Slice((*byte)(p), 4*len(l.words))
}

// bytes approximates the memory l takes.
func (l *cachedList) bytes() int64 {
	return 4*int64(cap(l.words)) + int64(len(l.term)) + listOverhead
}

// id returns posting i's ID.
func (l *cachedList) id(i int) uint32 {
	var c cursor
	c.init(l, 0)
	c.at(i)
	return uint32(c.cur)
}

// errWideIDs reports chunk IDs above 2^32, which the cache does not hold:
// such a query is scored from the stored postings.
var errWideIDs = errors.New("bm25: chunk IDs too large to cache")

// newList encodes term's postings: ids ascending with their contributions
// (newList keeps neither slice).
func newList(term string, ids []uint32, scores []float32) *cachedList {
	var sc listScratch
	return sc.newList(term, ids, scores)
}

// listScratch holds what building lists reuses from list to list.
type listScratch struct {
	codeOf map[uint32]uint32
	codes  []uint32
	dict   []float32
}

func (sc *listScratch) newList(term string, ids []uint32, scores []float32) *cachedList {
	l := &cachedList{term: term, n: int32(len(ids))}
	if len(ids) == 0 {
		return l
	}
	for _, v := range scores {
		l.max = max(l.max, v)
	}
	floats := scores
	if len(ids) >= codeMin && sc.code(scores) {
		l.coded, floats = true, sc.dict
		l.cw = uint8(bits.Len(uint(len(sc.dict) - 1)))
	}
	l.nsc = uint32(len(floats))
	// Sizes, in bytes: blocks, float32s, offsets (each block's in whole
	// bytes but the last's), codes.
	nb := (len(ids) + blockSize - 1) / blockSize
	at := 4 * (nb*blkWords + len(floats))
	widths := make([]uint8, nb)
	size := at
	for b := range nb {
		lo, hi := b*blockSize, min((b+1)*blockSize, len(ids))
		widths[b] = uint8(bits.Len32(ids[hi-1] - ids[lo]))
		size += ((hi-lo)*int(widths[b]) + 7) / 8
	}
	l.codes = uint32(size)
	if l.coded {
		size += (len(ids)*int(l.cw) + 7) / 8
	}
	l.words = make([]uint32, (size+packPad+3)/4)
	blk, fl, buf := l.views()
	copy(fl, floats)
	for b := range nb {
		lo, hi := b*blockSize, min((b+1)*blockSize, len(ids))
		first := ids[lo]
		blk[b*blkWords+blkFirst], blk[b*blkWords+blkLast] = first, ids[hi-1]
		blk[b*blkWords+blkAt], blk[b*blkWords+blkWidth] = uint32(at), uint32(widths[b])
		base, w := uint(at)*8, uint(widths[b])
		for i, id := range ids[lo:hi] {
			pack(buf, base+uint(i)*w, id-first)
		}
		at += ((hi-lo)*int(widths[b]) + 7) / 8
	}
	if l.coded {
		base := uint(l.codes) * 8
		for i, c := range sc.codes {
			pack(buf, base+uint(i)*uint(l.cw), c)
		}
	}
	return l
}

// code names the distinct values of scores in sc.dict and gives each
// posting its code in sc.codes; it reports false when they are too many
// to code.
func (sc *listScratch) code(scores []float32) bool {
	if sc.codeOf == nil {
		sc.codeOf = make(map[uint32]uint32, 1024)
	}
	clear(sc.codeOf)
	codeOf := sc.codeOf
	codes, dict := sc.codes[:0], sc.dict[:0]
	defer func() { sc.codes, sc.dict = codes, dict }()
	for _, v := range scores {
		b := math.Float32bits(v)
		c, ok := codeOf[b]
		if !ok {
			if len(codeOf) > math.MaxUint16 {
				return false
			}
			c = uint32(len(codeOf))
			codeOf[b] = c
			dict = append(dict, v)
		}
		codes = append(codes, c)
	}
	return true
}

// cursor walks one list: i is the current posting, cur its ID (none when
// the list is done). It holds views of the list's words, and what it read
// of the block it is in.
type cursor struct {
	l   *cachedList
	qi  int // the term's place in the query
	i   int
	cur int64

	n     int // postings
	blk   []uint32
	sc    []float32
	buf   []byte
	p     unsafe.Pointer // buf's first byte
	codes uint           // the bit of buf at which the codes start
	cw    uint8
	coded bool

	end   int    // the end of the current block's postings (0: none read)
	first uint32 // the current block's first ID
	base  uint   // the bit of buf its offsets start at
	w     uint8  // their width
}

// none is past every 32-bit chunk ID: the doc of an exhausted cursor.
const none = math.MaxUint32 + 1

// init points c at the first posting of l.
func (c *cursor) init(l *cachedList, qi int) {
	c.l, c.qi, c.end = l, qi, 0
	c.blk, c.sc, c.buf = l.views()
	c.p, c.n = unsafe.Pointer(unsafe.SliceData(c.buf)), int(l.n)
	c.codes, c.cw, c.coded = uint(l.codes)*8, l.cw, l.coded
	c.at(0)
}

// at moves to posting i (never back).
func (c *cursor) at(i int) {
	c.i = i
	if i >= c.n {
		c.cur = none
		return
	}
	if i >= c.end {
		b := i / blockSize * blkWords
		c.end = min(i/blockSize*blockSize+blockSize, c.n)
		c.first, c.base, c.w = c.blk[b+blkFirst], uint(c.blk[b+blkAt])*8, uint8(c.blk[b+blkWidth])
	}
	c.cur = int64(c.first + unpackAt(c.p, c.base+uint(i%blockSize)*uint(c.w), c.w))
}

// score returns the current posting's contribution.
func (c *cursor) score() float32 {
	if c.coded {
		return c.sc[unpackAt(c.p, c.codes+uint(c.i)*uint(c.cw), c.cw)]
	}
	return c.sc[c.i]
}

// next moves to the following posting.
func (c *cursor) next() { c.at(c.i + 1) }

// seek moves to the first posting whose ID is at least id (never back).
func (c *cursor) seek(id uint32) {
	if c.cur >= int64(id) {
		return
	}
	// The block that holds id or the first ID above it, galloping over
	// the blocks' last IDs, then the posting.
	nb := len(c.blk) / blkWords
	b := c.i / blockSize
	if c.blk[b*blkWords+blkLast] < id {
		step, lo, hi := 1, b, b+1
		for hi < nb && c.blk[hi*blkWords+blkLast] < id {
			lo = hi
			step *= 2
			hi = b + step
		}
		hi = min(hi, nb)
		// Block lo ends below id; the answer lies in (lo, hi].
		for lo+1 < hi {
			m := int(uint(lo+hi) >> 1)
			if c.blk[m*blkWords+blkLast] < id {
				lo = m
			} else {
				hi = m
			}
		}
		b = hi
	}
	if b >= nb {
		c.at(int(c.l.n))
		return
	}
	lo, hi := max(c.i, b*blockSize), min((b+1)*blockSize, int(c.l.n))
	first := c.blk[b*blkWords+blkFirst]
	if id <= first {
		c.at(lo)
		return
	}
	off, base, w := id-first, uint(c.blk[b*blkWords+blkAt])*8, uint8(c.blk[b*blkWords+blkWidth])
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if unpackAt(c.p, base+uint(m%blockSize)*uint(w), w) < off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	c.at(lo)
}

// build decodes and scores the lists of terms. A term without postings gets
// an empty list, so that the cache remembers it has none.
func build(p Params, c Corpus, terms []string, lists []List) ([]*cachedList, error) {
	out := make([]*cachedList, 0, len(terms))
	have := make(map[string]bool, len(lists))
	for _, l := range lists {
		have[l.Term] = true
	}
	for _, t := range terms {
		if !have[t] || c.Docs == 0 {
			out = append(out, newList(t, nil, nil))
		}
	}
	if c.Docs == 0 {
		return out, nil
	}
	b := newListBuilder(p, c)
	for _, l := range lists {
		cl, err := b.list(l)
		if err != nil {
			return nil, err
		}
		out = append(out, cl)
	}
	return out, nil
}

// listBuilder decodes and scores lists for one version of an index,
// reusing its buffers from list to list.
type listBuilder struct {
	nm     norms
	docs   int
	ids    []uint32
	scores []float32
	sc     listScratch
	memo   contribMemo
}

// newListBuilder returns a builder for lists scored with p against c,
// which must hold at least one chunk.
func newListBuilder(p Params, c Corpus) *listBuilder {
	return &listBuilder{nm: newNorms(p, c), docs: c.Docs}
}

// list decodes and scores one term's rows.
func (b *listBuilder) list(l List) (*cachedList, error) {
	type row struct {
		data  []byte
		first uint64
	}
	rows := make([]row, 0, len(l.Data))
	df := 0
	for _, d := range l.Data {
		n, first, _, err := scan(d)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			df += n
			rows = append(rows, row{d, first})
		}
	}
	if df == 0 {
		return newList(l.Term, nil, nil), nil
	}
	// Segments hold disjoint ID ranges: in order of their first ID the
	// rows concatenate into one ascending list.
	slices.SortFunc(rows, func(a, b row) int {
		switch {
		case a.first < b.first:
			return -1
		case a.first > b.first:
			return 1
		}
		return 0
	})
	ids, scores := b.ids[:0], b.scores[:0]
	idf := IDF(b.docs, df)
	var wide bool
	for _, r := range rows {
		err := b.nm.contributions(r.data, idf, &b.memo, func(id uint64, v float32) {
			if id > math.MaxUint32 {
				wide = true
				return
			}
			ids = append(ids, uint32(id))
			scores = append(scores, v)
		})
		if err != nil {
			return nil, err
		}
	}
	b.ids, b.scores = ids, scores
	if wide {
		return nil, errWideIDs
	}
	if !slices.IsSorted(ids) {
		// Overlapping rows, which a well-formed index never has.
		sortPairs(ids, scores)
	}
	return b.sc.newList(l.Term, ids, scores), nil
}

// sortPairs sorts ids ascending, keeping each score with its ID.
func sortPairs(ids []uint32, scores []float32) {
	idx := make([]int, len(ids))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case ids[a] < ids[b]:
			return -1
		case ids[a] > ids[b]:
			return 1
		}
		return 0
	})
	is := slices.Clone(ids)
	ss := slices.Clone(scores)
	for i, j := range idx {
		ids[i], scores[i] = is[j], ss[j]
	}
}

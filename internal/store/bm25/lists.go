package bm25

import (
	"errors"
	"math"
	"slices"
)

// A cachedList is one term's postings decoded and scored for the Cache,
// kept compact: a million-chunk index holds about 120 million postings,
// which as a 32-bit ID and a float32 each would take a gigabyte.
//
//   - IDs: a list whose every block of blockSize postings spans fewer than
//     65,536 IDs (any term in more than about one chunk in 500) stores each
//     ID as a 16-bit offset from its block's first ID; others store 32-bit
//     IDs. Either way posting i's ID is read directly, so walking and
//     seeking cost what they cost on a plain array.
//   - Contributions are exact float32s (scores stay bit-identical to
//     Score's). A list of more than a few postings names its distinct
//     values in a dictionary and stores a 16-bit code per posting; others,
//     and lists with more distinct values than codes can name, keep the
//     float32s.
//
// About four bytes per posting in a large list, against eight.
type cachedList struct {
	term string
	n    int32   // postings
	max  float32 // the best contribution

	ids    []uint32    // posting i's ID, in a wide list
	narrow *narrowIDs  // the IDs of a narrow list
	raw    []float32   // posting i scores raw[i], unless coded
	coded  *codedScore // the scores of a coded list
	bytes  int64

	prev, next *cachedList // the Cache's LRU order
}

// narrowIDs are the IDs of a list whose blocks each span fewer than
// 65,536 IDs: posting i's ID is firsts[i/blockSize] + offs[i].
type narrowIDs struct {
	firsts, lasts []uint32 // per block, its first and last ID
	offs          []uint16
}

// codedScore are a list's scores as a dictionary: posting i scores
// dict[codes[i]].
type codedScore struct {
	codes []uint16
	dict  []float32
}

// blockSize is how many postings share a first ID in a narrow list.
const blockSize = 128

// codeMin is the fewest postings a list codes its scores for.
const codeMin = 32

// listOverhead approximates what a list costs besides its postings: the
// struct, the term and its map entry.
const listOverhead = 160

// id returns posting i's ID.
func (l *cachedList) id(i int) uint32 {
	if l.narrow == nil {
		return l.ids[i]
	}
	return l.narrow.firsts[i/blockSize] + uint32(l.narrow.offs[i])
}

// score returns the contribution of posting i.
func (l *cachedList) score(i int) float32 {
	if l.coded != nil {
		return l.coded.dict[l.coded.codes[i]]
	}
	return l.raw[i]
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
	codeOf map[uint32]uint16
	codes  []uint16
}

func (sc *listScratch) newList(term string, ids []uint32, scores []float32) *cachedList {
	l := &cachedList{term: term, n: int32(len(ids))}
	for _, v := range scores {
		l.max = max(l.max, v)
	}
	if len(ids) < codeMin || !sc.code(l, scores) {
		l.raw = slices.Clone(scores)
	}
	narrow := len(ids) >= blockSize
	for lo := 0; narrow && lo < len(ids); lo += blockSize {
		narrow = ids[min(lo+blockSize, len(ids))-1]-ids[lo] <= math.MaxUint16
	}
	if !narrow {
		l.ids = slices.Clone(ids)
		l.bytes = 4 * int64(len(l.ids))
	} else {
		nb := (len(ids) + blockSize - 1) / blockSize
		w := &narrowIDs{firsts: make([]uint32, nb), lasts: make([]uint32, nb), offs: make([]uint16, len(ids))}
		for b := range nb {
			lo, hi := b*blockSize, min((b+1)*blockSize, len(ids))
			first := ids[lo]
			w.firsts[b], w.lasts[b] = first, ids[hi-1]
			for i, id := range ids[lo:hi] {
				w.offs[lo+i] = uint16(id - first)
			}
		}
		l.narrow = w
		l.bytes = 8*int64(nb) + 2*int64(len(w.offs))
	}
	l.bytes += 4*int64(len(l.raw)) + int64(len(term)) + listOverhead
	if l.coded != nil {
		l.bytes += 2*int64(len(l.coded.codes)) + 4*int64(len(l.coded.dict))
	}
	return l
}

// code gives l a dictionary of the distinct values of scores and a code
// per posting; it reports false, and leaves l alone, when they are too
// many to code.
func (sc *listScratch) code(l *cachedList, scores []float32) bool {
	if sc.codeOf == nil {
		sc.codeOf = make(map[uint32]uint16, 1024)
	}
	clear(sc.codeOf)
	codeOf := sc.codeOf
	codes := sc.codes[:0]
	for _, v := range scores {
		b := math.Float32bits(v)
		c, ok := codeOf[b]
		if !ok {
			if len(codeOf) > math.MaxUint16 {
				sc.codes = codes
				return false
			}
			c = uint16(len(codeOf))
			codeOf[b] = c
		}
		codes = append(codes, c)
	}
	sc.codes = codes
	cs := &codedScore{codes: slices.Clone(codes), dict: make([]float32, len(codeOf))}
	for b, c := range codeOf {
		cs.dict[c] = math.Float32frombits(b)
	}
	l.coded = cs
	return true
}

// cursor walks one list: i is the current posting, cur its ID (none when
// the list is done).
type cursor struct {
	l   *cachedList
	qi  int // the term's place in the query
	i   int
	cur int64
}

// none is past every 32-bit chunk ID: the doc of an exhausted cursor.
const none = math.MaxUint32 + 1

// init points c at the first posting of l.
func (c *cursor) init(l *cachedList, qi int) {
	c.l, c.qi = l, qi
	c.at(0)
}

// at moves to posting i.
func (c *cursor) at(i int) {
	c.i = i
	if i >= int(c.l.n) {
		c.cur = none
		return
	}
	c.cur = int64(c.l.id(i))
}

// score returns the current posting's contribution.
func (c *cursor) score() float32 { return c.l.score(c.i) }

// next moves to the following posting.
func (c *cursor) next() { c.at(c.i + 1) }

// seek moves to the first posting whose ID is at least id (never back).
func (c *cursor) seek(id uint32) {
	if c.cur >= int64(id) {
		return
	}
	w := c.l.narrow
	if w == nil {
		c.at(seek(c.l.ids, c.i, id))
		return
	}
	// The block that holds id or the first ID above it, then the posting.
	b := seek(w.lasts, c.i/blockSize, id)
	if b >= len(w.lasts) {
		c.at(int(c.l.n))
		return
	}
	lo, hi := max(c.i, b*blockSize), min((b+1)*blockSize, int(c.l.n))
	if id <= w.firsts[b] {
		c.at(lo)
		return
	}
	j, _ := slices.BinarySearch(w.offs[lo:hi], uint16(id-w.firsts[b]))
	c.at(lo + j)
}

// seek returns the first index at or after from whose ID is at least id,
// galloping ahead and then searching the last step.
func seek(ids []uint32, from int, id uint32) int {
	if from >= len(ids) || ids[from] >= id {
		return from
	}
	step := 1
	lo, hi := from, from+1
	for hi < len(ids) && ids[hi] < id {
		lo = hi
		step *= 2
		hi = from + step
	}
	hi = min(hi, len(ids))
	// ids[lo] < id; the answer lies in (lo, hi].
	i, _ := slices.BinarySearch(ids[lo+1:hi], id)
	return lo + 1 + i
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

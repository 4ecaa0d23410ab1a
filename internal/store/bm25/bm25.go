// Package bm25 is the keyword index every store shares: the postings format
// that drivers persist, the BM25F scorer that ranks them (Okapi BM25 with
// the title, heading path and body of a chunk weighted and length-normalised
// apart), and the term-proximity bonus that re-ranks the best of them. Because all
// drivers store the same postings and score them with this code, a query ranks
// the same chunks with the same scores in every store.
package bm25

import (
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// Field is one part of a chunk that BM25F weighs and length-normalises on
// its own.
type Field int

// The fields of a chunk, in their stored order.
const (
	Title   Field = iota // the source's title
	Heading              // the chunk's heading path, less a first heading equal to the title
	Body                 // the chunk's text
	NumFields
)

// Posting records how often a term occurs in each field of chunk ID (TF) and
// that field's length in terms (DL). DL is kept only for the fields the term
// occurs in (0 elsewhere), which is all BM25F needs to score the posting
// without looking anything else up.
type Posting struct {
	ID uint64
	TF [NumFields]uint32
	DL [NumFields]uint32
}

// Encode appends ps, which must be sorted by ID, to dst in the stored format:
// for each posting the uvarint of the ID delta, a byte whose bit f says that
// field f holds the term, then for each such field the uvarints of its TF and
// DL. A term found only in the body costs one byte more than plain BM25.
func Encode(dst []byte, ps []Posting) []byte {
	var prev uint64
	for _, p := range ps {
		dst = binary.AppendUvarint(dst, p.ID-prev)
		var mask byte
		for f := range NumFields {
			if p.TF[f] > 0 {
				mask |= 1 << f
			}
		}
		dst = append(dst, mask)
		for f := range NumFields {
			if p.TF[f] > 0 {
				dst = binary.AppendUvarint(dst, uint64(p.TF[f]))
				dst = binary.AppendUvarint(dst, uint64(p.DL[f]))
			}
		}
		prev = p.ID
	}
	return dst
}

// ErrCorrupt reports postings that cannot be decoded.
var ErrCorrupt = errors.New("bm25: corrupt postings")

// Decode calls fn for each posting in data, in ID order.
func Decode(data []byte, fn func(Posting)) error {
	var id uint64
	for len(data) > 0 {
		d, n := binary.Uvarint(data)
		if n <= 0 || n >= len(data) {
			return ErrCorrupt
		}
		mask := data[n]
		data = data[n+1:]
		if mask == 0 || mask>>NumFields != 0 {
			return ErrCorrupt
		}
		id += d
		p := Posting{ID: id}
		for f := range NumFields {
			if mask&(1<<f) == 0 {
				continue
			}
			tf, n := binary.Uvarint(data)
			if n <= 0 {
				return ErrCorrupt
			}
			data = data[n:]
			dl, n := binary.Uvarint(data)
			if n <= 0 {
				return ErrCorrupt
			}
			data = data[n:]
			p.TF[f], p.DL[f] = uint32(tf), uint32(dl)
		}
		fn(p)
	}
	return nil
}

// scan checks encoded postings and returns how many there are and their
// first and last IDs, without decoding the field statistics.
func scan(data []byte) (n int, first, last uint64, err error) {
	var id uint64
	for len(data) > 0 {
		d, k := binary.Uvarint(data)
		if k <= 0 || k >= len(data) {
			return 0, 0, 0, ErrCorrupt
		}
		mask := data[k]
		data = data[k+1:]
		if mask == 0 || mask>>NumFields != 0 {
			return 0, 0, 0, ErrCorrupt
		}
		id += d
		if n == 0 {
			first = id
		}
		n++
		// Skip two uvarints per field present: each ends at a byte
		// below 0x80.
		for v := 2 * bits.OnesCount8(mask); v > 0; v-- {
			k := 0
			for k < len(data) && data[k] >= 0x80 {
				k++
			}
			if k == len(data) || k >= binary.MaxVarintLen64 {
				return 0, 0, 0, ErrCorrupt
			}
			data = data[k+1:]
		}
	}
	return n, first, id, nil
}

// DecodeAll returns the postings in data.
func DecodeAll(data []byte) ([]Posting, error) {
	var out []Posting
	err := Decode(data, func(p Posting) { out = append(out, p) })
	return out, err
}

// Remove returns data without the postings whose IDs are in drop, and how
// many postings remain.
func Remove(data []byte, drop map[uint64]bool) ([]byte, int, error) {
	ps, err := DecodeAll(data)
	if err != nil {
		return nil, 0, err
	}
	kept := ps[:0]
	for _, p := range ps {
		if !drop[p.ID] {
			kept = append(kept, p)
		}
	}
	return Encode(nil, kept), len(kept), nil
}

// Merge combines encoded lists into one sorted list. Segments hold
// disjoint ID ranges, so the lists are concatenated in order of their first
// ID; overlapping lists (which a well-formed index never has) are sorted.
func Merge(lists ...[]byte) ([]byte, int, error) {
	parts := make([][]Posting, 0, len(lists))
	total := 0
	for _, l := range lists {
		ps, err := DecodeAll(l)
		if err != nil {
			return nil, 0, err
		}
		if len(ps) > 0 {
			parts = append(parts, ps)
			total += len(ps)
		}
	}
	slices.SortFunc(parts, func(a, b []Posting) int { return cmpID(a[0], b[0]) })
	all := make([]Posting, 0, total)
	for _, p := range parts {
		all = append(all, p...)
	}
	if !slices.IsSortedFunc(all, cmpID) {
		slices.SortFunc(all, cmpID)
	}
	return Encode(make([]byte, 0, total*5), all), len(all), nil
}

func cmpID(a, b Posting) int {
	switch {
	case a.ID < b.ID:
		return -1
	case a.ID > b.ID:
		return 1
	}
	return 0
}

// Builder collects the postings of a batch of chunks. Each term's postings
// are kept encoded, as they will be stored, so a batch of many chunks costs
// a few bytes per posting rather than a Posting each.
type Builder struct {
	index map[string]int // term -> its list in lists
	lists []builtList
	// Docs counts the chunks added, Tokens their total length per field.
	Docs   int
	Tokens [NumFields]int64
}

// builtList is one term's postings being built.
type builtList struct {
	data []byte // Encode's format
	n    int
	last uint64 // the ID of the last posting
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder {
	return &Builder{index: map[string]int{}}
}

// Add records chunk id whose analysed terms are all body text. IDs must be
// added in increasing order.
func (b *Builder) Add(id uint64, terms []string) {
	var f [NumFields][]string
	f[Body] = terms
	b.AddCounts(id, Count(f))
}

// TermCount is one distinct term of a chunk and how often it occurs in each
// field.
type TermCount struct {
	Term string
	N    [NumFields]uint32
}

// Counts holds a chunk's distinct terms and the length in terms of each of
// its fields.
type Counts struct {
	Terms []TermCount
	Len   [NumFields]uint32
}

// Total is the chunk's length in terms over all fields.
func (c Counts) Total() uint32 {
	var n uint32
	for _, l := range c.Len {
		n += l
	}
	return n
}

// Count tallies the terms of each field. It is the part of indexing that can
// run in parallel before the postings are assembled.
func Count(fields [NumFields][]string) Counts {
	idx := map[string]int{}
	var c Counts
	for f, terms := range fields {
		c.Len[f] = uint32(len(terms))
		for _, t := range terms {
			i, ok := idx[t]
			if !ok {
				i = len(c.Terms)
				idx[t] = i
				c.Terms = append(c.Terms, TermCount{Term: t})
			}
			c.Terms[i].N[f]++
		}
	}
	return c
}

// AddCounts records chunk id with its tallied terms. IDs must be added in
// increasing order. Terms are copied the first time they are seen, so the
// builder never keeps the caller's term text (a whole chunk's, often) alive.
func (b *Builder) AddCounts(id uint64, c Counts) {
	for _, tc := range c.Terms {
		i, ok := b.index[tc.Term]
		if !ok {
			i = len(b.lists)
			b.index[strings.Clone(tc.Term)] = i
			b.lists = append(b.lists, builtList{})
		}
		l := &b.lists[i]
		// One posting in Encode's format: the ID delta, the field mask,
		// then each present field's TF and DL.
		l.data = binary.AppendUvarint(l.data, id-l.last)
		var mask byte
		for f := range NumFields {
			if tc.N[f] > 0 {
				mask |= 1 << f
			}
		}
		l.data = append(l.data, mask)
		for f := range NumFields {
			if tc.N[f] > 0 {
				l.data = binary.AppendUvarint(l.data, uint64(tc.N[f]))
				l.data = binary.AppendUvarint(l.data, uint64(c.Len[f]))
			}
		}
		l.last = id
		l.n++
	}
	b.Docs++
	for f := range NumFields {
		b.Tokens[f] += int64(c.Len[f])
	}
}

// Terms returns the builder's terms in sorted order.
func (b *Builder) Terms() []string {
	ts := make([]string, 0, len(b.index))
	for t := range b.index {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	return ts
}

// Postings returns the postings of term.
func (b *Builder) Postings(term string) []Posting {
	data, _ := b.Encoded(term, 0)
	ps, _ := DecodeAll(data) // built by AddCounts: never corrupt
	return ps
}

// Encoded returns the postings of term in the stored format (Encode's) and
// how many there are, with base added to every ID. A batch can so be
// analysed with IDs numbered from 1 before its real IDs are known: only the
// first ID of a list is stored whole, so only it changes. With base 0 the
// returned slice is the builder's own and must not be modified.
func (b *Builder) Encoded(term string, base uint64) ([]byte, int) {
	i, ok := b.index[term]
	if !ok {
		return nil, 0
	}
	l := b.lists[i]
	if base == 0 || l.n == 0 {
		return l.data, l.n
	}
	first, n := binary.Uvarint(l.data)
	out := make([]byte, 0, len(l.data)+binary.MaxVarintLen64)
	out = binary.AppendUvarint(out, first+base)
	return append(out, l.data[n:]...), l.n
}

// Corpus holds the collection statistics BM25F normalises by.
type Corpus struct {
	Docs   int              // chunks in the index
	Tokens [NumFields]int64 // sum of the chunks' field lengths
}

// IDF is the BM25 inverse document frequency as Lucene defines it; it is
// never negative.
func IDF(docs, df int) float64 {
	return math.Log(1 + (float64(docs)-float64(df)+0.5)/(float64(df)+0.5))
}

// List is one query term's encoded postings, possibly spread over several rows.
type List struct {
	Term string
	Data [][]byte
}

// norms holds, per field, W_f and the two terms of the length norm, so that
// a posting costs a multiply-add per field it occurs in. Every scorer (Score,
// Cache) computes a posting's contribution through it, so that all give
// bit-identical scores.
type norms struct {
	w, fixed, perTok [NumFields]float64
	k1               float64
}

func newNorms(p Params, c Corpus) norms {
	var n norms
	for f := range NumFields {
		avg := float64(c.Tokens[f]) / float64(c.Docs)
		if avg == 0 {
			avg = 1
		}
		n.w[f] = p.Weight[f]
		n.fixed[f] = 1 - p.B[f]
		n.perTok[f] = p.B[f] / avg
	}
	n.k1 = p.K1
	return n
}

// fieldTF is field f's share of a posting's pseudo-frequency tf'.
func (n *norms) fieldTF(f Field, tf, dl uint64) float64 {
	return n.w[f] * float64(tf) / (n.fixed[f] + n.perTok[f]*float64(dl))
}

// contributions calls fn with the ID and the score contribution of each
// posting in data, in ID order; postings that contribute nothing (fields
// weighted 0) are skipped. Every scorer reads postings through it. Data
// that does not decode is ErrCorrupt (fn may have been called for the
// postings before the damage). memo, when not nil, remembers the
// contributions of postings found in the body alone (most of them) by
// their term frequency and the body's length.
func (n *norms) contributions(data []byte, idf float64, memo *contribMemo, fn func(id uint64, v float32)) error {
	if memo != nil {
		memo.begin(idf)
	}
	var id uint64
	for i := 0; i < len(data); {
		d, j := uvarintAt(data, i)
		if j <= i || j >= len(data) {
			return ErrCorrupt
		}
		mask := data[j]
		if mask == 0 || mask>>NumFields != 0 {
			return ErrCorrupt
		}
		i = j + 1
		id += d
		if mask == 1<<Body && memo != nil {
			// The general loop below, unrolled for one field: folded
			// into it, the look-up cost 14% more instructions a query.
			ftf, j := uvarintAt(data, i)
			if j <= i {
				return ErrCorrupt
			}
			dl, k := uvarintAt(data, j)
			if k <= j {
				return ErrCorrupt
			}
			i = k
			if v, ok := memo.get(ftf, dl); ok {
				fn(id, v)
				continue
			}
			// As below for one field: tf is 0 + its share.
			if tf := n.fieldTF(Body, ftf, dl); tf > 0 {
				v := n.saturate(idf, tf)
				memo.put(ftf, dl, v)
				fn(id, v)
			}
			continue
		}
		var tf float64
		for f := range NumFields {
			if mask&(1<<f) == 0 {
				continue
			}
			ftf, j := uvarintAt(data, i)
			if j <= i {
				return ErrCorrupt
			}
			dl, k := uvarintAt(data, j)
			if k <= j {
				return ErrCorrupt
			}
			i = k
			tf += n.fieldTF(f, ftf, dl)
		}
		if tf > 0 {
			fn(id, n.saturate(idf, tf))
		}
	}
	return nil
}

// uvarintAt decodes the varint at b[i:] and returns it and the index after
// it; the index is i itself when b[i:] holds no whole varint (truncated or
// overlong). One byte, the common case, takes one comparison.
func uvarintAt(b []byte, i int) (uint64, int) {
	if i < len(b) && b[i] < 0x80 {
		return uint64(b[i]), i + 1
	}
	if i >= len(b) {
		return 0, i
	}
	v, k := binary.Uvarint(b[i:])
	if k <= 0 {
		return 0, i
	}
	return v, i + k
}

// contribMemo remembers contributions of body-only postings for one IDF
// (a contribution depends only on the IDF, the term frequency and the
// field's length, the parameters and collection statistics being fixed
// for a scorer): a look-up instead of two divisions, giving the very same
// float32. Entries carry the generation of the IDF they were made for, so
// a new IDF needs no clearing.
type contribMemo struct {
	idf   float64
	gen   uint32
	slots [memoTF * memoDL]memoSlot
}

type memoSlot struct {
	gen uint32
	v   float32
}

// The term frequencies and body lengths a memo covers.
const (
	memoTF = 8
	memoDL = 1024
)

func (m *contribMemo) begin(idf float64) {
	if m.gen != 0 && idf == m.idf {
		return
	}
	m.idf = idf
	m.gen++
	if m.gen == 0 { // wrapped: every slot may look current
		clear(m.slots[:])
		m.gen = 1
	}
}

func (m *contribMemo) get(tf, dl uint64) (float32, bool) {
	if tf >= memoTF || dl >= memoDL {
		return 0, false
	}
	s := m.slots[tf*memoDL+dl]
	return s.v, s.gen == m.gen
}

func (m *contribMemo) put(tf, dl uint64, v float32) {
	if tf < memoTF && dl < memoDL {
		m.slots[tf*memoDL+dl] = memoSlot{m.gen, v}
	}
}

// saturate turns a posting's pseudo-frequency into its score contribution.
func (n *norms) saturate(idf, tf float64) float32 {
	return float32(idf * tf * (n.k1 + 1) / (n.k1 + tf))
}

// Score ranks the chunks in lists by BM25F with parameters p and returns the
// best k that allow accepts (nil accepts all), best first; ties go to the
// lower chunk ID so that every store returns the same order.
//
// Each field f's term frequency is normalised by its own length against
// the field's average, weighted, and summed into one pseudo-frequency that
// saturates once (Robertson and Zaragoza's BM25F):
//
//	tf' = Σ_f W_f · tf_f / (1 − B_f + B_f · dl_f / avgdl_f)
//	score = Σ_terms idf · tf' · (K1 + 1) / (K1 + tf')
func Score(p Params, c Corpus, lists []List, k int, allow func(id int64) bool) ([]store.Scored, error) {
	if k <= 0 || c.Docs == 0 || len(lists) == 0 {
		return nil, nil
	}
	// The document frequencies first (IDF needs them), then each list's
	// postings scored straight from the encoded bytes: no posting is ever
	// materialised.
	a := NewAccumulator(p, c)
	for _, l := range lists {
		df := 0
		for _, d := range l.Data {
			n, _, _, err := scan(d)
			if err != nil {
				return nil, err
			}
			df += n
		}
		for _, d := range l.Data {
			if err := a.Add(d, df); err != nil {
				return nil, err
			}
		}
	}
	return a.Top(k, allow), nil
}

// Accumulator sums the BM25F scores of chunks from postings rows fed to
// it one at a time, as Score does: a store that reads rows one by one
// (and knows each term's document frequency) scores them without
// gathering them. Rows must come term by term in query order, so that
// each chunk's score is the same float32 sum in the same order as every
// scorer's.
type Accumulator struct {
	nm    norms
	docs  int
	pages [][]float32        // pages[id>>pageBits][id&pageMask]
	far   map[uint64]float32 // IDs beyond the pages' reach
	// touched are the IDs with a score, in the order first seen.
	touched []uint64
	memo    *contribMemo
}

// Scores are kept in pages of 1<<pageBits chunk IDs, made when first
// touched: postings of one query touch a contiguous-ish range, and an
// array beats a map by far. Every contribution is positive, so a zero
// slot means "not seen yet".
const (
	pageBits = 14
	pageMask = 1<<pageBits - 1
	maxPages = 1 << 20 // IDs up to 2^34 in pages; the rest in a map
)

// NewAccumulator returns an empty accumulator for scores with parameters
// p against the collection statistics c.
func NewAccumulator(p Params, c Corpus) *Accumulator {
	return &Accumulator{nm: newNorms(p, c), docs: c.Docs}
}

// Reserve makes room for the chunks of at most postings postings (the sum
// of the query's document frequencies bounds them), so that the list of
// chunks seen does not grow by copying as the rows are added.
func (a *Accumulator) Reserve(postings int) {
	if n := min(postings, a.docs); n > cap(a.touched) {
		a.touched = slices.Grow(a.touched, n)
	}
}

// Add scores one row of a term's postings, df being the term's document
// frequency over the whole index. Data that does not decode is
// ErrCorrupt.
func (a *Accumulator) Add(data []byte, df int) error {
	if a.docs == 0 || df == 0 {
		return nil
	}
	if a.memo == nil {
		a.memo = new(contribMemo)
	}
	return a.nm.contributions(data, IDF(a.docs, df), a.memo, a.add)
}

func (a *Accumulator) add(id uint64, v float32) {
	p := id >> pageBits
	if p >= maxPages {
		if a.far == nil {
			a.far = map[uint64]float32{}
		}
		if _, ok := a.far[id]; !ok {
			a.touched = append(a.touched, id)
		}
		a.far[id] += v
		return
	}
	if p >= uint64(len(a.pages)) {
		a.pages = append(a.pages, make([][]float32, int(p)+1-len(a.pages))...)
	}
	pg := a.pages[p]
	if pg == nil {
		pg = make([]float32, 1<<pageBits)
		a.pages[p] = pg
	}
	i := id & pageMask
	if pg[i] == 0 {
		a.touched = append(a.touched, id)
	}
	pg[i] += v
}

// Top returns the k best chunks that allow accepts (nil accepts all),
// best first; ties go to the lower chunk ID.
func (a *Accumulator) Top(k int, allow func(id int64) bool) []store.Scored {
	top := store.NewTopK(k)
	for _, id := range a.touched {
		var v float32
		if p := id >> pageBits; p < maxPages {
			v = a.pages[p][id&pageMask]
		} else {
			v = a.far[id]
		}
		sc := store.Scored{ChunkID: int64(id), Score: float64(v)}
		if !top.Admits(sc) || (allow != nil && !allow(sc.ChunkID)) {
			continue
		}
		top.Offer(sc)
	}
	return top.Best()
}

// MergeFactor is how many segments of a similar size are merged into one.
// Merging by size tiers keeps the number of segments logarithmic in the
// index size while each posting is rewritten only a logarithmic number of
// times.
const MergeFactor = 8

// Segment is a segment's ID and how many chunks it holds.
type Segment struct {
	ID   int64
	Docs int
}

// ToMerge picks the segments to merge next: the first MergeFactor segments
// (in the order given) that fall into the same size tier, or nil.
func ToMerge(segs []Segment) []int64 {
	tiers := map[int][]int64{}
	for _, sg := range segs {
		tier := 0
		for d := sg.Docs; d >= MergeFactor*64; d /= MergeFactor {
			tier++
		}
		tiers[tier] = append(tiers[tier], sg.ID)
		if len(tiers[tier]) >= MergeFactor {
			return tiers[tier]
		}
	}
	return nil
}

// ListSet gathers the rows a store returns for a query's terms.
type ListSet struct {
	byTerm map[string]*List
}

// Add records one row of term's postings.
func (ls *ListSet) Add(term string, data []byte) {
	if ls.byTerm == nil {
		ls.byTerm = map[string]*List{}
	}
	l := ls.byTerm[term]
	if l == nil {
		l = &List{Term: term}
		ls.byTerm[term] = l
	}
	l.Data = append(l.Data, data)
}

// Lists returns the gathered lists in the order of terms, the query order,
// which keeps floating-point sums identical in every store. A term given
// twice counts once.
func (ls *ListSet) Lists(terms []string) []List {
	out := make([]List, 0, len(ls.byTerm))
	for _, t := range terms {
		if l := ls.byTerm[t]; l != nil {
			out = append(out, *l)
			delete(ls.byTerm, t)
		}
	}
	return out
}

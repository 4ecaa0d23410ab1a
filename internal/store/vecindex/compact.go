package vecindex

import (
	"math"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// Compact is a Flat with an int8 copy of its rows (one scale per row): a
// search scans the copy, a quarter of the bytes, with the AVX2 kernel of
// dot_amd64.s where the CPU has it, keeps the Rerank best candidates and
// scores them exactly against the float rows, so the scores it returns are
// the exact scan's. It finds the exact top k unless a true hit ranks below
// Rerank candidates by int8 score.
type Compact struct {
	f      *Flat
	stride int       // bytes per row: dim rounded up to 32, zero-padded
	codes  []int8    // len(f.ids)*stride
	scale  []float32 // per row: value = code * scale
	// Rerank is how many int8 candidates are scored exactly, at least k.
	Rerank int
}

// DefaultRerank is how many int8 candidates are re-ranked by default: ten
// times a top 10, far more than int8 rounding reorders.
const DefaultRerank = 100

// NewCompact quantizes f's rows. f must not change afterwards, except
// through the Live index that owns both.
func NewCompact(f *Flat) *Compact {
	x := &Compact{f: f, stride: (f.dim + 31) &^ 31, Rerank: DefaultRerank}
	x.grow(f.Len())
	for r := range f.Len() {
		x.set(r)
	}
	return x
}

// grow makes room for n rows.
func (x *Compact) grow(n int) {
	if d := n*x.stride - len(x.codes); d > 0 {
		x.codes = append(x.codes, make([]int8, d)...)
		x.scale = append(x.scale, make([]float32, n-len(x.scale))...)
	}
}

// view returns a Compact of the first n rows that shares their memory,
// over f.view(n): rows added later are not in it (see Flat.view).
func (x *Compact) view(n int) *Compact {
	v := *x
	v.f = x.f.view(n)
	v.codes, v.scale = x.codes[:n*x.stride:n*x.stride], x.scale[:n:n]
	return &v
}

// set quantizes row r of the Flat.
func (x *Compact) set(r int) {
	x.scale[r] = quantize(x.codes[r*x.stride:r*x.stride+x.f.dim], x.f.row(r))
}

// quantize writes v's codes to dst and returns their scale (largest
// magnitude maps to 127, so no code is -128).
func quantize(dst []int8, v []float32) float32 {
	var m float32
	for _, x := range v {
		m = max(m, float32(math.Abs(float64(x))))
	}
	if m == 0 {
		clear(dst)
		return 0
	}
	s := m / 127
	for i, x := range v {
		dst[i] = int8(math.Round(float64(x / s)))
	}
	return s
}

// Int8SIMD reports whether int8 scans run SIMD code: the AVX2 assembly on
// AMD64 CPUs that have it; elsewhere a plain Go loop.
func Int8SIMD() bool { return hasInt8SIMD }

// Bytes returns the memory of the int8 copy (the float rows not counted).
func (x *Compact) Bytes() int64 { return int64(cap(x.codes)) + int64(cap(x.scale))*4 }

// Search implements Searcher.
func (x *Compact) Search(q []float32, k int, allow func(int64) bool) []store.Scored {
	u, ok := x.f.unit(q)
	if !ok {
		return nil
	}
	return x.search(u, k, allow, nil)
}

// search ranks the rows for the unit query u, leaving out those skip marks.
func (x *Compact) search(u []float32, k int, allow func(int64) bool, skip []bool) []store.Scored {
	f := x.f
	n := f.Len()
	if k <= 0 || n == 0 {
		return nil
	}
	qc := make([]int8, x.stride)
	quantize(qc[:f.dim], u)
	want := max(k, x.Rerank)
	parts := f.parts()
	// Candidates are row numbers (as ChunkID) with int8 scores; ties
	// among them do not matter, the exact re-rank orders the survivors.
	tops := scanParts(n, parts, want, func(top *selector, lo, hi int) { x.scan(top, qc, lo, hi, allow, skip) })
	top := newSelector(k)
	for _, t := range tops {
		for _, c := range t.best() {
			r := int(c.ChunkID)
			top.offer(store.Scored{ChunkID: f.ids[r], Score: f.score(r, u)})
		}
	}
	return top.best()
}

func (x *Compact) scan(top *selector, qc []int8, lo, hi int, allow func(int64) bool, skip []bool) {
	step := blockRows(x.stride)
	buf := make([]int32, step)
	for b := lo; b < hi; b += step {
		e := min(b+step, hi)
		dots := buf[:e-b]
		dotsInt8(dots, x.codes[b*x.stride:e*x.stride], qc)
		for i, d := range dots {
			r := b + i
			s := float64(d) * float64(x.scale[r])
			if top.full && s < top.worst {
				continue
			}
			if skip != nil && skip[r] {
				continue
			}
			h := store.Scored{ChunkID: int64(r), Score: s}
			if !top.admits(h) || (allow != nil && !allow(x.f.ids[r])) {
				continue
			}
			top.offer(h)
		}
	}
}

package vecindex

import (
	"math"
	"sync"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// Int8 is a Flat with an int8 copy of its rows (one scale per row): a
// search scans the copy, a quarter of the bytes, for candidates and
// re-ranks them exactly against the float rows, so the scores it returns
// are the exact scan's. It finds the exact top k unless a true hit ranks
// below Rerank candidates by int8 score.
type Int8 struct {
	f     *Flat
	codes []int8    // len(f.ids)*dim
	scale []float32 // per row: value = code * scale
	// Rerank is how many int8 candidates are scored exactly, at least k.
	Rerank int
}

// DefaultRerank is how many int8 candidates are re-ranked by default: ten
// times a top 10, far more than int8 rounding reorders.
const DefaultRerank = 100

// NewInt8 quantizes f's rows. f must not change afterwards.
func NewInt8(f *Flat) *Int8 {
	n := f.Len()
	x := &Int8{f: f, codes: make([]int8, n*f.dim), scale: make([]float32, n), Rerank: DefaultRerank}
	for r := range n {
		x.scale[r] = quantize(x.codes[r*f.dim:(r+1)*f.dim], f.row(r))
	}
	return x
}

// quantize writes v's codes to dst and returns their scale (largest
// magnitude maps to 127).
func quantize(dst []int8, v []float32) float32 {
	var m float32
	for _, x := range v {
		m = max(m, float32(math.Abs(float64(x))))
	}
	if m == 0 {
		return 0
	}
	s := m / 127
	for i, x := range v {
		dst[i] = int8(math.Round(float64(x / s)))
	}
	return s
}

// Int8SIMD reports whether int8 scans run SIMD code: only in a build with
// GOEXPERIMENT=simd on an AMD64 CPU with AVX2; elsewhere they run a plain
// Go loop, slower than the float scan with vek.
func Int8SIMD() bool { return hasInt8SIMD }

// Bytes returns the memory of the int8 copy (the float rows not counted).
func (x *Int8) Bytes() int64 { return int64(len(x.codes)) + int64(len(x.scale))*4 }

// Search implements Searcher.
func (x *Int8) Search(q []float32, k int, allow func(int64) bool) []store.Scored {
	f := x.f
	u, ok := f.unit(q)
	if !ok || k <= 0 || f.Len() == 0 {
		return nil
	}
	qc := make([]int8, f.dim)
	quantize(qc, u)
	want := max(k, x.Rerank)
	n := f.Len()
	parts := f.parts()
	// Candidates are row numbers (as ChunkID) with int8 scores; ties
	// among them do not matter, the exact re-rank orders the survivors.
	tops := make([]*selector, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := n*p/parts, n*(p+1)/parts
		tops[p] = newSelector(want)
		wg.Go(func() { x.scan(tops[p], qc, lo, hi, allow) })
	}
	wg.Wait()
	top := newSelector(k)
	for _, t := range tops {
		for _, c := range t.best() {
			r := int(c.ChunkID)
			top.offer(store.Scored{ChunkID: f.ids[r], Score: f.score(r, u)})
		}
	}
	return top.best()
}

func (x *Int8) scan(top *selector, qc []int8, lo, hi int, allow func(int64) bool) {
	dim := x.f.dim
	step := blockRows(dim)
	buf := make([]int32, step)
	for b := lo; b < hi; b += step {
		e := min(b+step, hi)
		dots := buf[:e-b]
		dotsInt8(dots, x.codes[b*dim:e*dim], qc)
		for i, d := range dots {
			r := b + i
			s := float64(d) * float64(x.scale[r])
			if top.full && s < top.worst {
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

// Package vecindex searches embedding vectors in memory by cosine
// similarity: an exact scan of a dense matrix (SIMD, all cores), an int8
// copy scanned first and re-ranked exactly, and an HNSW graph for large
// collections. Every search returns the k best hits, best first, ties by
// lower chunk ID (store.CompareScored), and honours an allow filter.
package vecindex

import (
	"math"
	"runtime"
	"sync"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// Searcher finds the k rows most similar to q among those allow accepts
// (nil allows all). allow may be called from several goroutines at once.
type Searcher interface {
	Search(q []float32, k int, allow func(int64) bool) []store.Scored
}

// Flat holds unit-length rows in one dense matrix and searches them
// exactly. Build it with Add, then search it from any number of
// goroutines; it must not change while searched.
type Flat struct {
	dim  int
	ids  []int64
	data []float32 // len(ids)*dim, each row of unit length
	k    kernel
	// workers is how many goroutines scan a large matrix.
	workers int
}

// FlatOptions configure NewFlat.
type FlatOptions struct {
	// Capacity is how many rows to reserve room for.
	Capacity int
	// Portable computes in plain Go even where vek's assembly runs (for
	// tests and benchmarks of the portable path).
	Portable bool
	// Workers caps the goroutines of one scan; 0 means GOMAXPROCS.
	Workers int
}

// NewFlat returns an empty exact index of dim-dimensional rows.
func NewFlat(dim int, opt FlatOptions) *Flat {
	w := opt.Workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	return &Flat{
		dim:     dim,
		ids:     make([]int64, 0, opt.Capacity),
		data:    make([]float32, 0, opt.Capacity*dim),
		k:       newKernel(opt.Portable),
		workers: w,
	}
}

// Add appends v, scaled to unit length, under id. It reports false, and
// stores nothing, when v has the wrong length or is zero (no direction to
// compare).
func (f *Flat) Add(id int64, v []float32) bool {
	if len(v) != f.dim {
		return false
	}
	inv, ok := invNorm(v)
	if !ok {
		return false
	}
	f.ids = append(f.ids, id)
	for _, x := range v {
		f.data = append(f.data, x*inv)
	}
	return true
}

// set replaces row r with v, scaled to unit length, under id; like Add it
// reports false and changes nothing for a zero vector or a wrong length.
func (f *Flat) set(r int, id int64, v []float32) bool {
	if len(v) != f.dim {
		return false
	}
	inv, ok := invNorm(v)
	if !ok {
		return false
	}
	f.ids[r] = id
	row := f.row(r)
	for i, x := range v {
		row[i] = x * inv
	}
	return true
}

// view returns a Flat of the first n rows that shares their memory: rows
// appended to f later are not in it, so a graph build may read it while f
// grows.
func (f *Flat) view(n int) *Flat {
	v := *f
	v.ids, v.data = f.ids[:n:n], f.data[:n*f.dim:n*f.dim]
	return &v
}

// invNorm returns 1/|v| computed in float64, false for a zero vector.
func invNorm(v []float32) (float32, bool) {
	n := 0.0
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return 0, false
	}
	return float32(1 / math.Sqrt(n)), true
}

// unit returns q scaled to unit length, false when q is zero or of the
// wrong length.
func (f *Flat) unit(q []float32) ([]float32, bool) {
	if len(q) != f.dim {
		return nil, false
	}
	inv, ok := invNorm(q)
	if !ok {
		return nil, false
	}
	u := make([]float32, len(q))
	for i, x := range q {
		u[i] = x * inv
	}
	return u, true
}

// Len returns the number of rows.
func (f *Flat) Len() int { return len(f.ids) }

// Dim returns the row length.
func (f *Flat) Dim() int { return f.dim }

// Bytes returns the memory the rows and their IDs take.
func (f *Flat) Bytes() int64 { return int64(cap(f.data))*4 + int64(cap(f.ids))*8 }

// SIMD reports whether scans use vek's assembly.
func (f *Flat) SIMD() bool { return f.k.simd }

func (f *Flat) row(r int) []float32 {
	return f.data[r*f.dim : (r+1)*f.dim : (r+1)*f.dim]
}

// score returns the similarity of row r to the unit query u, computed as
// the scan computes it, so every path reports the same score for a row.
func (f *Flat) score(r int, u []float32) float64 {
	var s [1]float32
	f.k.scoreBlock(s[:], f.row(r), u)
	return float64(s[0])
}

// parallelMin is the matrix size (rows times dim) from which a scan is
// split over goroutines; below it starting them costs more than it saves.
const parallelMin = 1 << 18

// parts returns how many goroutines share a scan of every row.
func (f *Flat) parts() int {
	n := len(f.ids)
	if n*f.dim < parallelMin {
		return 1
	}
	return max(1, min(f.workers, n/blockRows(f.dim)+1))
}

// Search implements Searcher: an exact scan of every row.
func (f *Flat) Search(q []float32, k int, allow func(int64) bool) []store.Scored {
	u, ok := f.unit(q)
	if !ok {
		return nil
	}
	return f.search(u, k, allow, nil)
}

// search scans for the unit query u, leaving out the rows skip marks.
func (f *Flat) search(u []float32, k int, allow func(int64) bool, skip []bool) []store.Scored {
	if k <= 0 || len(f.ids) == 0 {
		return nil
	}
	tops := scanParts(len(f.ids), f.parts(), k, func(top *selector, lo, hi int) { f.scan(top, u, lo, hi, allow, skip) })
	if len(tops) == 1 {
		return tops[0].best()
	}
	top := newSelector(k)
	for _, t := range tops {
		for _, s := range t.best() {
			top.offer(s)
		}
	}
	return top.best()
}

// scan offers rows lo..hi-1 to top.
func (f *Flat) scan(top *selector, u []float32, lo, hi int, allow func(int64) bool, skip []bool) {
	step := blockRows(f.dim)
	buf := make([]float32, step)
	for b := lo; b < hi; b += step {
		e := min(b+step, hi)
		sc := buf[:e-b]
		f.k.scoreBlock(sc, f.data[b*f.dim:e*f.dim], u)
		for i, s := range sc {
			if top.full && float64(s) < top.worst {
				continue
			}
			if skip != nil && skip[b+i] {
				continue
			}
			id := f.ids[b+i]
			h := store.Scored{ChunkID: id, Score: float64(s)}
			if !top.admits(h) || (allow != nil && !allow(id)) {
				continue
			}
			top.offer(h)
		}
	}
}

// selector keeps the k best hits offered to it in store.CompareScored
// order, with the worst kept score at hand so that a scan rejects most rows
// with one comparison.
type selector struct {
	k     int
	h     []store.Scored // min-heap on rank: h[0] is the worst kept hit
	full  bool
	worst float64
}

func newSelector(k int) *selector { return &selector{k: k, h: make([]store.Scored, 0, k)} }

// admits reports whether h would be kept now.
func (s *selector) admits(h store.Scored) bool {
	return s.k > 0 && (len(s.h) < s.k || store.CompareScored(h, s.h[0]) < 0)
}

// worse reports whether heap entry i ranks below entry j.
func (s *selector) worse(i, j int) bool { return store.CompareScored(s.h[i], s.h[j]) > 0 }

func (s *selector) offer(h store.Scored) {
	if !s.admits(h) {
		return
	}
	if len(s.h) < s.k {
		s.h = append(s.h, h)
		for i := len(s.h) - 1; i > 0; {
			p := (i - 1) / 2
			if !s.worse(i, p) {
				break
			}
			s.h[i], s.h[p] = s.h[p], s.h[i]
			i = p
		}
	} else {
		s.h[0] = h
		s.down(0, len(s.h))
	}
	if len(s.h) == s.k {
		s.full = true
		s.worst = s.h[0].Score
	}
}

// down restores the heap below i within h[:n].
func (s *selector) down(i, n int) {
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && s.worse(c+1, c) {
			c++
		}
		if !s.worse(c, i) {
			return
		}
		s.h[i], s.h[c] = s.h[c], s.h[i]
		i = c
	}
}

// best returns the kept hits, best first, and empties s.
func (s *selector) best() []store.Scored {
	out := s.h
	for n := len(out) - 1; n > 0; n-- {
		out[0], out[n] = out[n], out[0]
		s.down(0, n)
	}
	s.h, s.full = nil, false
	return out
}

// scanParts splits rows [0, n) into parts ranges scanned at once, each
// into its own selector of the best want, and returns the selectors (one,
// scanned on the caller's goroutine, when parts <= 1).
func scanParts(n, parts, want int, scan func(top *selector, lo, hi int)) []*selector {
	if parts <= 1 {
		top := newSelector(want)
		scan(top, 0, n)
		return []*selector{top}
	}
	tops := make([]*selector, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := n*p/parts, n*(p+1)/parts
		tops[p] = newSelector(want)
		wg.Go(func() { scan(tops[p], lo, hi) })
	}
	wg.Wait()
	return tops
}

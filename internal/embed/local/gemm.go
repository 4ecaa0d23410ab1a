package local

import "sync"

// The matrix products of a transformer layer, C += A·B, where A is a block
// of activations (one row per token) and B a weight matrix packed once at
// load. The work is cut as GotoBLAS cuts it: a micro-kernel multiplies mr
// rows of A by one panel of nr columns of B into an mr×nr tile of C held in
// registers; panels are kc rows deep so that one stays in L1 while a block
// of mc rows of A, kept in L2, streams past it.

const (
	mr = 6   // rows of A per micro-kernel call
	nr = 16  // columns of B per panel
	kc = 256 // depth of a panel block
	mc = 96  // rows of A per block (a multiple of mr)
)

// packed is a k×n matrix B laid out for the kernel: ceil(n/nr) panels, each
// k rows of nr consecutive floats, the last one padded with zeros.
type packed struct {
	k, n int
	data []float32
	// q and scale replace data once the matrix is quantised: the same
	// layout in int8, and one scale per column (output).
	q     []int8
	scale []float32
}

func (b *packed) panels() int { return (b.n + nr - 1) / nr }

// panel returns rows [k0, k0+kk) of panel p, dequantised into tmp when
// the matrix is int8.
func (b *packed) panel(p, k0, kk int, tmp []float32) []float32 {
	off := (p*b.k + k0) * nr
	if b.q == nil {
		return b.data[off:]
	}
	sc := (*[nr]float32)(b.scale[p*nr : p*nr+nr])
	src := b.q[off : off+kk*nr]
	for k := 0; k < kk; k++ {
		row := (*[nr]float32)(tmp[k*nr : k*nr+nr])
		q := (*[nr]int8)(src[k*nr : k*nr+nr])
		for j := range row {
			row[j] = float32(q[j]) * sc[j]
		}
	}
	return tmp
}

// packRowsInt8 packs W (n rows of k floats, as packRows) straight into
// int8, one scale per row of W (a column of B), without a float copy.
func packRowsInt8(dst *packed, w []float32, n, k int) {
	panels := (n + nr - 1) / nr
	dst.k, dst.n, dst.data = k, n, nil
	dst.q = make([]int8, panels*nr*k)
	dst.scale = make([]float32, panels*nr)
	row := make([]int8, k)
	for col := 0; col < n; col++ {
		dst.scale[col] = quantizeRow(row, w[col*k:(col+1)*k])
		p, j := col/nr, col%nr
		out := dst.q[p*k*nr:]
		for kk, v := range row {
			out[kk*nr+j] = v
		}
	}
}

func abs32(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}

// roundHalfAway rounds to the nearest integer, halves away from zero.
func roundHalfAway(x float32) float32 {
	if x < 0 {
		return -float32(int32(-x + 0.5))
	}
	return float32(int32(x + 0.5))
}

// reset sizes b's float data for a k×n matrix, reusing its memory.
func (b *packed) reset(k, n int) {
	b.k, b.n = k, n
	b.data = grow(b.data, (n+nr-1)/nr*nr*k)
}

// packRows packs B = Wᵀ for W given row by row (n rows of k floats, stride
// ld): the layout of a Linear layer's [out, in] weight, and of the keys in
// an attention score Q·Kᵀ.
func packRows(dst *packed, w []float32, n, k, ld int) {
	dst.reset(k, n)
	for p := 0; p*nr < n; p++ {
		out := dst.data[p*k*nr : (p+1)*k*nr]
		for j := 0; j < nr; j++ {
			col := p*nr + j
			if col >= n {
				for kk := 0; kk < k; kk++ {
					out[kk*nr+j] = 0
				}
				continue
			}
			row := w[col*ld : col*ld+k]
			for kk, v := range row {
				out[kk*nr+j] = v
			}
		}
	}
}

// packCols packs B given as k rows of n floats (stride ld): the values in
// an attention's P·V.
func packCols(dst *packed, v []float32, k, n, ld int) {
	dst.reset(k, n)
	for p := 0; p*nr < n; p++ {
		out := dst.data[p*k*nr : (p+1)*k*nr]
		w := min(nr, n-p*nr)
		for kk := 0; kk < k; kk++ {
			row := out[kk*nr : kk*nr+nr]
			copy(row, v[kk*ld+p*nr:kk*ld+p*nr+w])
			clear(row[w:])
		}
	}
}

// scratch holds the float32 copies of int8 weight blocks.
var scratch = sync.Pool{New: func() any { return new([]float32) }}

// gemm adds A·B to C: A is m×b.k (stride lda), C is m×b.n (stride ldc).
// m must be a multiple of mr, and A and C must have rows up to there (the
// extra rows may hold anything; their results are thrown away by the
// caller).
func gemm(c []float32, ldc int, a []float32, lda, m int, b *packed) {
	if m%mr != 0 {
		panic("gemm: rows not a multiple of mr")
	}
	var tile [mr * nr]float32
	var deq *[]float32
	if b.q != nil {
		deq = scratch.Get().(*[]float32)
		defer scratch.Put(deq)
		*deq = grow(*deq, b.panels()*kc*nr)
	}
	full := b.n / nr
	for k0 := 0; k0 < b.k; k0 += kc {
		kk := min(kc, b.k-k0)
		if deq != nil {
			// Widen this block of every panel once, for all the rows.
			for p := 0; p < b.panels(); p++ {
				b.panel(p, k0, kk, (*deq)[p*kc*nr:])
			}
		}
		for i0 := 0; i0 < m; i0 += mc {
			i1 := min(i0+mc, m)
			for p := 0; p < b.panels(); p++ {
				var bp []float32
				if deq != nil {
					bp = (*deq)[p*kc*nr:]
				} else {
					bp = b.panel(p, k0, kk, nil)
				}
				for i := i0; i < i1; i += mr {
					ap := a[i*lda+k0:]
					if p < full {
						kernel(ap, lda, bp, c[i*ldc+p*nr:], ldc, kk)
						continue
					}
					// The last, partial panel goes through a tile.
					clear(tile[:])
					kernel(ap, lda, bp, tile[:], nr, kk)
					w := b.n - p*nr
					for r := 0; r < mr; r++ {
						row := c[(i+r)*ldc+p*nr : (i+r)*ldc+p*nr+w]
						for j := range row {
							row[j] += tile[r*nr+j]
						}
					}
				}
			}
		}
	}
}

// kernelGo is the portable micro-kernel: C[mr×nr] += A[mr×kk]·B[kk×nr],
// computed as 3×4 sub-tiles whose twelve sums stay in registers.
func kernelGo(a []float32, lda int, b []float32, c []float32, ldc int, kk int) {
	if kk <= 0 {
		return
	}
	b = b[:kk*nr]
	for r := 0; r < mr; r += 3 {
		a0 := a[r*lda : r*lda+kk]
		a1 := a[(r+1)*lda : (r+1)*lda+kk]
		a2 := a[(r+2)*lda : (r+2)*lda+kk]
		a1, a2 = a1[:len(a0)], a2[:len(a0)]
		for j := 0; j < nr; j += 4 {
			var s00, s01, s02, s03, s10, s11, s12, s13, s20, s21, s22, s23 float32
			bb := b[j:]
			for k, x0 := range a0 {
				x1, x2 := a1[k], a2[k]
				bk := bb[:4:4]
				b0, b1, b2, b3 := bk[0], bk[1], bk[2], bk[3]
				s00 += x0 * b0
				s01 += x0 * b1
				s02 += x0 * b2
				s03 += x0 * b3
				s10 += x1 * b0
				s11 += x1 * b1
				s12 += x1 * b2
				s13 += x1 * b3
				s20 += x2 * b0
				s21 += x2 * b1
				s22 += x2 * b2
				s23 += x2 * b3
				if k+1 < len(a0) {
					bb = bb[nr:]
				}
			}
			c0 := c[r*ldc+j : r*ldc+j+4 : r*ldc+j+4]
			c0[0] += s00
			c0[1] += s01
			c0[2] += s02
			c0[3] += s03
			c1 := c[(r+1)*ldc+j : (r+1)*ldc+j+4 : (r+1)*ldc+j+4]
			c1[0] += s10
			c1[1] += s11
			c1[2] += s12
			c1[3] += s13
			c2 := c[(r+2)*ldc+j : (r+2)*ldc+j+4 : (r+2)*ldc+j+4]
			c2[0] += s20
			c2[1] += s21
			c2[2] += s22
			c2[3] += s23
		}
	}
}

package local

import (
	"math"
	"math/rand/v2"
	"testing"
)

// naive is C += A·Wᵀ in float64, W given as n rows of k.
func naive(c []float32, a []float32, w []float32, m, k, n int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for x := 0; x < k; x++ {
				s += float64(a[i*k+x]) * float64(w[j*k+x])
			}
			c[i*n+j] += float32(s)
		}
	}
}

// TestGemm: the blocked product (with the kernel in use and with the
// portable one) equals the naive one, for shapes with partial panels, a
// depth over one block and rows over one block; packCols gives the same
// product as packRows of the transpose.
func TestGemm(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, kern := range []struct {
		name string
		f    func([]float32, int, []float32, []float32, int, int)
	}{{"in use", kernel}, {"portable", kernelGo}} {
		saved := kernel
		kernel = kern.f
		for _, s := range [][3]int{{6, 1, 1}, {12, 37, 16}, {102, 300, 45}, {6, 600, 384}, {198, 64, 33}} {
			m, k, n := s[0], s[1], s[2]
			a, w := randSlice(r, m*k), randSlice(r, n*k)
			want := randSlice(r, m*n)
			got := append([]float32(nil), want...)
			naive(want, a, w, m, k, n)
			var p packed
			packRows(&p, w, n, k, k)
			gemm(got, n, a, k, m, &p)
			assertClose(t, kern.name+" packRows", got, want, 1e-4)

			// The same product from Wᵀ given as k rows of n.
			wt := make([]float32, k*n)
			for i := 0; i < n; i++ {
				for j := 0; j < k; j++ {
					wt[j*n+i] = w[i*k+j]
				}
			}
			var q packed
			packCols(&q, wt, k, n, n)
			got2 := make([]float32, m*n)
			gemm(got2, n, a, k, m, &q)
			base := make([]float32, m*n)
			naive(base, a, w, m, k, n)
			assertClose(t, kern.name+" packCols", got2, base, 1e-4)
		}
		kernel = saved
	}
}

// TestQuantizedGemm: int8 weights give the product of the dequantised
// weights, and each dequantised weight is within half a step of the
// original.
func TestQuantizedGemm(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	m, k, n := 12, 300, 40
	a, w := randSlice(r, m*k), randSlice(r, n*k)
	var p packed
	packRowsInt8(&p, w, n, k)
	if p.data != nil || len(p.q) == 0 {
		t.Fatal("packRowsInt8 made float data")
	}
	deq := make([]float32, n*k)
	tmp := make([]float32, k*nr)
	for pp := 0; pp < p.panels(); pp++ {
		block := p.panel(pp, 0, k, tmp)
		for j := 0; j < nr && pp*nr+j < n; j++ {
			for x := 0; x < k; x++ {
				deq[(pp*nr+j)*k+x] = block[x*nr+j]
			}
		}
	}
	for i := range w {
		col := i / k
		if d := math.Abs(float64(deq[i] - w[i])); d > float64(p.scale[col])/2+1e-7 {
			t.Fatalf("weight %d: %g dequantised to %g, more than half a step (%g)", i, w[i], deq[i], p.scale[col])
		}
	}
	want := make([]float32, m*n)
	naive(want, a, deq, m, k, n)
	got := make([]float32, m*n)
	gemm(got, n, a, k, m, &p)
	assertClose(t, "int8", got, want, 1e-4)
}

func assertClose(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	for i := range want {
		if d := math.Abs(float64(got[i] - want[i])); d > tol*math.Max(1, math.Abs(float64(want[i]))) {
			t.Fatalf("%s: element %d is %g, want %g", what, i, got[i], want[i])
		}
	}
}

package vecindex

import (
	"math"
	"math/rand/v2"
	"testing"
)

// kernelDims are row lengths around the assembly's blocks (32 bytes for
// int8, 16 floats): below, at and past a block, and none of them a
// multiple of 32 but 384, the model's width.
var kernelDims = []int{1, 5, 15, 16, 17, 31, 33, 63, 100, 383, 384, 385, 1000}

// int8Code returns a code in quantize's range -127..127, an extreme one in
// a fifth of the draws.
func int8Code(rng *rand.Rand) int8 {
	switch rng.IntN(10) {
	case 0:
		return 127
	case 1:
		return -127
	}
	return int8(rng.IntN(255) - 127)
}

// kernelRows returns rows rows of dim codes (row 0 all 127, row 1 all
// -127, row 2 alternating, the rest drawn), each followed by pad zero
// bytes, and their float values (code/127) unpadded.
func kernelRows(rng *rand.Rand, rows, dim, pad int) ([]int8, []float32) {
	stride := dim + pad
	codes := make([]int8, rows*stride)
	data := make([]float32, rows*dim)
	for r := range rows {
		for j := range dim {
			var c int8
			switch r {
			case 0:
				c = 127
			case 1:
				c = -127
			case 2:
				c = 127
				if j%2 == 1 {
					c = -127
				}
			default:
				c = int8Code(rng)
			}
			codes[r*stride+j] = c
			data[r*dim+j] = float32(c) / 127
		}
	}
	return codes, data
}

func refInt8(a, b []int8) int32 {
	var s int64
	for i := range a {
		s += int64(a[i]) * int64(b[i])
	}
	return int32(s)
}

func refF32(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// TestKernelsOnOddLengthsAndExtremes checks the kernels a search calls
// (dotsInt8, dotsInt8At, dotsF32At: the assembly on AMD64 with AVX2 when
// the length allows, the portable loops otherwise and on every other
// architecture) against a plain int64/float64 sum, on lengths that are not
// multiples of the assembly's blocks and on rows of extreme codes.
func TestKernelsOnOddLengthsAndExtremes(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const rows = 12
	for _, dim := range kernelDims {
		codes, data := kernelRows(rng, rows, dim, 0)
		q8, qf := make([]int8, dim), make([]float32, dim)
		for j := range dim {
			q8[j] = int8Code(rng)
			qf[j] = float32(q8[j]) / 127
		}
		// q all 127 and all -127: the largest sums either way.
		for _, q := range [][]int8{q8, fill(dim, 127), fill(dim, -127)} {
			seq := make([]int32, rows)
			dotsInt8(seq, codes, q)
			idx := []int32{rows - 1, 0, 1, 2, 5, 0, rows - 1}
			at := make([]int32, len(idx))
			dotsInt8At(at, codes, idx, q)
			for r := range rows {
				if want := refInt8(codes[r*dim:(r+1)*dim], q); seq[r] != want {
					t.Fatalf("dotsInt8, dim %d, row %d = %d, want %d", dim, r, seq[r], want)
				}
			}
			for i, r := range idx {
				if want := refInt8(codes[int(r)*dim:int(r+1)*dim], q); at[i] != want {
					t.Fatalf("dotsInt8At, dim %d, row %d = %d, want %d", dim, r, at[i], want)
				}
			}
		}
		idx := []int32{0, 1, 2, rows - 1, 3, 3}
		got := make([]float32, len(idx))
		dotsF32At(got, data, idx, qf)
		for i, r := range idx {
			want := refF32(data[int(r)*dim:int(r+1)*dim], qf)
			if math.Abs(float64(got[i])-want) > 1e-4*float64(dim) {
				t.Fatalf("dotsF32At, dim %d, row %d = %g, want %g", dim, r, got[i], want)
			}
		}
	}
}

func fill(n int, v int8) []int8 {
	s := make([]int8, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// TestKernelsRefuseRowsOutsideTheMatrix passes a row index past the last
// row and a negative one: the kernels must panic, not read the memory
// beyond the codes (the assembly would, unchecked).
func TestKernelsRefuseRowsOutsideTheMatrix(t *testing.T) {
	const dim, rows = 64, 4
	codes := make([]int8, rows*dim)
	data := make([]float32, rows*dim)
	q8, qf := make([]int8, dim), make([]float32, dim)
	for _, bad := range []int32{rows, -1, math.MaxInt32} {
		for name, call := range map[string]func(){
			"dotsInt8At": func() { dotsInt8At(make([]int32, 2), codes, []int32{0, bad}, q8) },
			"dotsF32At":  func() { dotsF32At(make([]float32, 2), data, []int32{0, bad}, qf) },
		} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s with row %d of %d did not panic", name, bad, rows)
					}
				}()
				call()
			}()
		}
	}
}

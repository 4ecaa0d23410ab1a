//go:build amd64 && !purego

package vecindex

import (
	"math/rand/v2"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// TestDotsInt8AVX2MatchesPortable compares the assembly with the portable
// loop on random codes over the whole range, at every row count around the
// four-row pass and several lengths, extremes included.
func TestDotsInt8AVX2MatchesPortable(t *testing.T) {
	testenv.Platform(t, hasInt8SIMD, "this CPU has no AVX2: the assembly cannot run here")
	rng := rand.New(rand.NewPCG(7, 8))
	code := func() int8 {
		switch rng.IntN(10) {
		case 0:
			return 127
		case 1:
			return -127
		}
		return int8(rng.IntN(255) - 127)
	}
	for _, dim := range []int{32, 64, 96, 384, 768, 1024} {
		for rows := range 11 {
			codes := make([]int8, rows*dim)
			q := make([]int8, dim)
			for i := range codes {
				codes[i] = code()
			}
			for i := range q {
				q[i] = code()
			}
			want := make([]int32, rows)
			got := make([]int32, rows)
			dotsInt8Go(want, codes, q)
			dotsInt8AVX2(got, codes, q)
			for r := range rows {
				if got[r] != want[r] {
					t.Fatalf("dim %d, %d rows: row %d = %d, portable %d", dim, rows, r, got[r], want[r])
				}
			}
		}
	}
	// The largest sums: every product 127·127 or -127·127.
	dim := 1024
	codes := make([]int8, 5*dim)
	q := make([]int8, dim)
	for i := range codes {
		codes[i] = 127
		if (i/dim)%2 == 1 {
			codes[i] = -127
		}
	}
	for i := range q {
		q[i] = 127
	}
	got := make([]int32, 5)
	dotsInt8AVX2(got, codes, q)
	for r, g := range got {
		want := int32(dim * 127 * 127)
		if r%2 == 1 {
			want = -want
		}
		if g != want {
			t.Errorf("row %d of extremes = %d, want %d", r, g, want)
		}
	}
}

// TestDotsAtMatchPortable compares the gathering kernels (scattered rows,
// repeated ones, the first and last row) with the portable loops.
func TestDotsAtMatchPortable(t *testing.T) {
	testenv.Platform(t, hasInt8SIMD && hasF32SIMD, "this CPU has no AVX2 and FMA: the assembly cannot run here")
	rng := rand.New(rand.NewPCG(9, 10))
	for _, dim := range []int{32, 64, 384, 1024} {
		const rows = 50
		codes := make([]int8, rows*dim)
		data := make([]float32, rows*dim)
		for i := range codes {
			codes[i] = int8(rng.IntN(255) - 127)
			data[i] = float32(codes[i]) / 127
		}
		q8 := codes[3*dim : 4*dim]
		qf := data[7*dim : 8*dim]
		for _, n := range []int{0, 1, 2, 3, 17, 40} {
			idx := make([]int32, n)
			for i := range idx {
				idx[i] = int32(rng.IntN(rows))
			}
			if n > 2 {
				idx[0], idx[1], idx[2] = 0, rows-1, rows-1
			}
			w8, g8 := make([]int32, n), make([]int32, n)
			dotsInt8AtGo(w8, codes, idx, q8)
			dotsInt8AtAVX2(g8, codes, idx, q8)
			wf, gf := make([]float32, n), make([]float32, n)
			dotsF32AtGo(wf, data, idx, qf)
			dotsF32AtAVX2(gf, data, idx, qf)
			for i := range n {
				if g8[i] != w8[i] {
					t.Fatalf("int8 dim %d, %d rows: %d = %d, portable %d", dim, n, i, g8[i], w8[i])
				}
				if d := gf[i] - wf[i]; d > 1e-3 || d < -1e-3 {
					t.Fatalf("float dim %d, %d rows: %d = %g, portable %g", dim, n, i, gf[i], wf[i])
				}
			}
		}
	}
}

// TestAVX2OnPaddedOddLengths runs the assembly as Compact calls it: rows
// of any length zero-padded to a multiple of 32 bytes (of 16 floats for
// dotsF32AtAVX2), against the portable loops on the unpadded rows, with
// extreme rows and queries among them.
func TestAVX2OnPaddedOddLengths(t *testing.T) {
	testenv.Platform(t, hasInt8SIMD && hasF32SIMD, "this CPU has no AVX2 and FMA: the assembly cannot run here")
	rng := rand.New(rand.NewPCG(23, 24))
	const rows = 9
	for _, dim := range kernelDims {
		stride := (dim + 31) &^ 31
		padded, _ := kernelRows(rng, rows, dim, stride-dim)
		q := make([]int8, stride)
		for j := range dim {
			q[j] = int8Code(rng)
		}
		if dim%3 == 0 {
			copy(q, fill(dim, -127))
		}
		seq := make([]int32, rows)
		dotsInt8AVX2(seq, padded, q)
		idx := []int32{rows - 1, 2, 0, 1, 1, 4}
		at := make([]int32, len(idx))
		dotsInt8AtAVX2(at, padded, idx, q)
		for r := range rows {
			if want := dotInt8Go(padded[r*stride:r*stride+dim], q[:dim]); seq[r] != want {
				t.Fatalf("dotsInt8AVX2, dim %d padded to %d, row %d = %d, portable %d", dim, stride, r, seq[r], want)
			}
		}
		for i, r := range idx {
			o := int(r) * stride
			if want := dotInt8Go(padded[o:o+dim], q[:dim]); at[i] != want {
				t.Fatalf("dotsInt8AtAVX2, dim %d padded to %d, row %d = %d, portable %d", dim, stride, r, at[i], want)
			}
		}

		fstride := (dim + 15) &^ 15
		data := make([]float32, rows*fstride)
		qf := make([]float32, fstride)
		for r := range rows {
			for j := range dim {
				data[r*fstride+j] = float32(int8Code(rng)) / 127
			}
		}
		for j := range dim {
			qf[j] = float32(int8Code(rng)) / 127
		}
		gf := make([]float32, len(idx))
		dotsF32AtAVX2(gf, data, idx, qf)
		for i, r := range idx {
			o := int(r) * fstride
			want := refF32(data[o:o+dim], qf[:dim])
			if d := float64(gf[i]) - want; d > 1e-4*float64(dim) || d < -1e-4*float64(dim) {
				t.Fatalf("dotsF32AtAVX2, dim %d padded to %d, row %d = %g, want %g", dim, fstride, r, gf[i], want)
			}
		}
	}
}

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

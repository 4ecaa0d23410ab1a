//go:build goexperiment.simd && amd64

package vecindex

import "simd/archsimd"

// hasInt8SIMD reports whether dotsInt8 runs AVX2 code (built with
// GOEXPERIMENT=simd on a CPU with AVX2).
var hasInt8SIMD = archsimd.X86.AVX2()

// dotsInt8 writes to dst the dot product of q with each len(q)-long row of
// codes, exact in int32. Codes lie in -127..127, so |a|·sign(b,a) pairs
// never saturate VPMADDUBSW's int16 sums (2·127·127 < 32768).
func dotsInt8(dst []int32, codes, q []int8) {
	dim := len(q)
	if !hasInt8SIMD || dim%32 != 0 {
		dotsInt8Go(dst, codes, q)
		return
	}
	ones := archsimd.BroadcastInt16x16(1)
	var lanes [8]int32
	for r := range dst {
		row := codes[r*dim : (r+1)*dim : (r+1)*dim]
		var acc archsimd.Int32x8
		for i := 0; i+32 <= dim; i += 32 {
			x := archsimd.LoadInt8x32Slice(q[i : i+32])
			y := archsimd.LoadInt8x32Slice(row[i : i+32])
			p := x.Abs().AsUint8x32().DotProductPairsSaturated(y.CopySign(x))
			acc = acc.Add(p.DotProductPairs(ones))
		}
		acc.Store(&lanes)
		dst[r] = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))
	}
}

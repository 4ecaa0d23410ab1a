package vecindex

import (
	"github.com/viterin/vek"
	"github.com/viterin/vek/vek32"
)

// kernel computes dot products. With AVX2 and FMA (vek's assembly) it uses
// vek; elsewhere an unrolled Go loop with eight accumulators, which the Go
// compiler keeps in registers. Both accumulate in float32.
type kernel struct {
	simd bool
}

func newKernel(portable bool) kernel {
	return kernel{simd: !portable && vek.Info().Acceleration}
}

// scoreBlock writes the dot product of q with each row of rows (a
// len(dst)-by-len(q) matrix) into dst. vek splits a product of 100,000
// multiplications or more over all cores itself; callers keep blocks
// smaller (blockRows) so that they decide the parallelism.
func (k kernel) scoreBlock(dst, rows, q []float32) {
	if k.simd && len(q) > 0 {
		vek32.MatMul_Into(dst, rows, q, len(q))
		return
	}
	dim := len(q)
	for i := range dst {
		dst[i] = dotGo(rows[i*dim:(i+1)*dim:(i+1)*dim], q)
	}
}

// blockRows is how many rows of dim floats one scoreBlock call takes.
func blockRows(dim int) int {
	return max(1, min(256, 90_000/max(dim, 1)))
}

// dotGo is the portable dot product.
func dotGo(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
		s4 += a[i+4] * b[i+4]
		s5 += a[i+5] * b[i+5]
		s6 += a[i+6] * b[i+6]
		s7 += a[i+7] * b[i+7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// dotsInt8Go is the portable dotsInt8.
func dotsInt8Go(dst []int32, codes, q []int8) {
	dim := len(q)
	for r := range dst {
		dst[r] = dotInt8Go(codes[r*dim:(r+1)*dim:(r+1)*dim], q)
	}
}

// dotInt8Go is the portable int8 dot product, exact in int32 (a row of up
// to 133,000 values cannot overflow).
func dotInt8Go(a, b []int8) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		s0 += int32(a[i])*int32(b[i]) + int32(a[i+4])*int32(b[i+4])
		s1 += int32(a[i+1])*int32(b[i+1]) + int32(a[i+5])*int32(b[i+5])
		s2 += int32(a[i+2])*int32(b[i+2]) + int32(a[i+6])*int32(b[i+6])
		s3 += int32(a[i+3])*int32(b[i+3]) + int32(a[i+7])*int32(b[i+7])
	}
	for ; i < len(a); i++ {
		s0 += int32(a[i]) * int32(b[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// dotsInt8AtGo is the portable dotsInt8At.
func dotsInt8AtGo(dst []int32, codes []int8, idx []int32, q []int8) {
	dim := len(q)
	for i, r := range idx {
		o := int(r) * dim
		dst[i] = dotInt8Go(codes[o:o+dim:o+dim], q)
	}
}

// dotsF32AtGo is the portable dotsF32At.
func dotsF32AtGo(dst []float32, data []float32, idx []int32, q []float32) {
	dim := len(q)
	for i, r := range idx {
		o := int(r) * dim
		dst[i] = dotGo(data[o:o+dim:o+dim], q)
	}
}

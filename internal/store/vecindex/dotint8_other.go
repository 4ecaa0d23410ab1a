//go:build !amd64 || purego

package vecindex

// hasInt8SIMD is false: only amd64 has assembly kernels.
const hasInt8SIMD = false

// dotsInt8 writes to dst the dot product of q with each len(q)-long row of
// codes, exact in int32.
func dotsInt8(dst []int32, codes, q []int8) { dotsInt8Go(dst, codes, q) }

// dotsInt8At writes to dst[i] the dot product of q with row idx[i] of codes.
func dotsInt8At(dst []int32, codes []int8, idx []int32, q []int8) {
	dotsInt8AtGo(dst, codes, idx[:len(dst)], q)
}

// dotsF32At writes to dst[i] the dot product of q with row idx[i] of data.
func dotsF32At(dst []float32, data []float32, idx []int32, q []float32) {
	dotsF32AtGo(dst, data, idx[:len(dst)], q)
}

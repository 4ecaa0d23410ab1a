//go:build !amd64 || purego

package vecindex

// hasInt8SIMD is false: only amd64 has assembly kernels.
const hasInt8SIMD = false

// dotsInt8 writes to dst the dot product of q with each len(q)-long row of
// codes, exact in int32.
func dotsInt8(dst []int32, codes, q []int8) { dotsInt8Go(dst, codes, q) }

//go:build !(goexperiment.simd && amd64)

package vecindex

// hasInt8SIMD reports whether dotsInt8 runs SIMD code: only in a build
// with GOEXPERIMENT=simd.
const hasInt8SIMD = false

// dotsInt8 writes to dst the dot product of q with each len(q)-long row of
// codes, exact in int32.
func dotsInt8(dst []int32, codes, q []int8) { dotsInt8Go(dst, codes, q) }

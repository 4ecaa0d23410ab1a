//go:build !amd64

package local

// kernel is the portable micro-kernel: there is no assembly for this
// architecture.
var kernel = kernelGo

var (
	gelu   = geluGo
	expSum = expSumGo
)

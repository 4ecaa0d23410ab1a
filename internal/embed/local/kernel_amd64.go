package local

import "golang.org/x/sys/cpu"

//go:generate sh -c "cd asm && go run . -out ../kernel_amd64.s -stubs ../kernel_stubs_amd64.go -pkg local"

// kernel is the micro-kernel in use: the avo-generated AVX2/FMA one where
// the CPU has both, else the portable one.
var kernel = kernelGo

// gelu and expSum are the vector forms of the GELU and of the softmax's
// exponentials, in assembly beside kernelFMA.
var (
	gelu   = geluGo
	expSum = expSumGo
)

func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		kernel = kernelAsm
		gelu = geluAsm
		expSum = expSumAsm
	}
}

func geluAsm(x []float32) {
	n := len(x) &^ 7
	if n > 0 {
		geluFMA(&x[0], uintptr(n))
	}
	geluGo(x[n:])
}

func expSumAsm(x []float32, hi, scale float32) float32 {
	n := len(x) &^ 7
	var sum float32
	if n > 0 {
		sum = expSumFMA(&x[0], uintptr(n), hi, scale)
	}
	return sum + expSumGo(x[n:], hi, scale)
}

// kernelAsm checks that the tile and panel lie inside their slices (the
// assembly does not) and calls kernelFMA.
func kernelAsm(a []float32, lda int, b []float32, c []float32, ldc int, kk int) {
	if kk <= 0 {
		return
	}
	if len(a) < (mr-1)*lda+kk || len(b) < kk*nr || len(c) < (mr-1)*ldc+nr {
		panic("local: micro-kernel operands out of range")
	}
	kernelFMA(&a[0], uintptr(lda), &b[0], &c[0], uintptr(ldc), uintptr(kk))
}

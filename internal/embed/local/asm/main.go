// Command asm generates the amd64 micro-kernels of package local with avo:
//
//	cd internal/embed/local/asm && go run . -out ../kernel_amd64.s -stubs ../kernel_stubs_amd64.go -pkg local
//
// It lives in a module of its own so that avo is a dependency of the
// generator only, never of sagasu.
package main

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

const (
	mr = 6  // rows of A
	nr = 16 // columns of B: two YMM registers of 8 floats
)

func main() {
	ConstraintExpr("amd64")
	kernelFMA()
	geluFMA()
	expSumFMA()
	Generate()
}

// kernelFMA: C[6×16] += A[6×k]·B[k×16]. A's rows are lda floats apart, B is
// a packed panel (16 floats a row), C's rows ldc floats apart. Twelve YMM
// accumulators hold the tile; each step loads one row of B (two registers),
// broadcasts one float of each row of A and issues twelve FMAs. The loop is
// unrolled twice.
func kernelFMA() {
	TEXT("kernelFMA", NOSPLIT, "func(a *float32, lda uintptr, b *float32, c *float32, ldc uintptr, k uintptr)")
	Doc("kernelFMA adds A·B to a 6×16 tile of C (AVX2 and FMA).")
	a := GP64()
	Load(Param("a"), a)
	lda := Load(Param("lda"), GP64())
	b := Load(Param("b"), GP64())
	k := Load(Param("k"), GP64())
	SHLQ(Imm(2), lda) // floats to bytes

	// Row pointers of A.
	rows := make([]reg.GPVirtual, mr)
	rows[0] = a
	for r := 1; r < mr; r++ {
		rows[r] = GP64()
		LEAQ(Mem{Base: rows[r-1], Index: lda, Scale: 1}, rows[r])
	}

	acc := make([]reg.VecVirtual, 2*mr)
	for i := range acc {
		acc[i] = YMM()
		VXORPS(acc[i], acc[i], acc[i])
	}
	b0, b1, x := YMM(), YMM(), YMM()

	step := func(off int) {
		VMOVUPS(Mem{Base: b, Disp: off * nr * 4}, b0)
		VMOVUPS(Mem{Base: b, Disp: off*nr*4 + 32}, b1)
		for r := 0; r < mr; r++ {
			VBROADCASTSS(Mem{Base: rows[r], Disp: off * 4}, x)
			VFMADD231PS(b0, x, acc[2*r])
			VFMADD231PS(b1, x, acc[2*r+1])
		}
	}
	advance := func(n int) {
		for r := 0; r < mr; r++ {
			ADDQ(Imm(uint64(4*n)), rows[r])
		}
		ADDQ(Imm(uint64(4*nr*n)), b)
	}

	Label("pairs")
	CMPQ(k, Imm(2))
	JB(LabelRef("single"))
	step(0)
	step(1)
	advance(2)
	SUBQ(Imm(2), k)
	JMP(LabelRef("pairs"))

	Label("single")
	TESTQ(k, k)
	JZ(LabelRef("store"))
	step(0)

	Label("store")
	c := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	SHLQ(Imm(2), ldc)
	for r := 0; r < mr; r++ {
		VADDPS(Mem{Base: c}, acc[2*r], acc[2*r])
		VMOVUPS(acc[2*r], Mem{Base: c})
		VADDPS(Mem{Base: c, Disp: 32}, acc[2*r+1], acc[2*r+1])
		VMOVUPS(acc[2*r+1], Mem{Base: c, Disp: 32})
		if r < mr-1 {
			ADDQ(ldc, c)
		}
	}
	VZEROUPPER()
	RET()
}

// vconst defines 32 bytes of read-only data holding bits in all eight
// lanes and returns it as a memory operand: constants live in memory, not
// registers, so the kernels need no more than the 16 YMM registers AVX2
// has.
func vconst(name string, bits uint32) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	for i := 0; i < 8; i++ {
		DATA(4*i, U32(bits))
	}
	return m
}

func fconst(name string, f float32) Mem { return vconst(name, math.Float32bits(f)) }

// expConsts are the constants of exp8.
type expConsts struct {
	lo, log2e, ln2hi, ln2lo, bias, one Mem
	c                                  [5]Mem // 1/720, 1/120, 1/24, 1/6, 1/2
}

var exps *expConsts

func expConstants() *expConsts {
	if exps == nil {
		exps = &expConsts{lo: fconst("expLo", -87), log2e: fconst("expLog2e", 1.44269504088896341),
			ln2hi: fconst("expLn2hi", 0.693359375), ln2lo: fconst("expLn2lo", -2.12194440e-4),
			bias: vconst("expBias", 127), one: fconst("one", 1)}
		for i, v := range []float32{1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5} {
			exps.c[i] = fconst(fmt.Sprintf("expC%d", i), v)
		}
	}
	return exps
}

// exp8 sets z to e^z for z ≤ 0 the way expf in mathf.go computes it:
// z = k·ln2 + r, e^r by a degree-6 polynomial, 2^k in the exponent bits;
// below -87 the result is (nearly) 0. It uses k and r as scratch.
func exp8(e *expConsts, z, k, r reg.VecVirtual) {
	VMAXPS(e.lo, z, z)
	VMULPS(e.log2e, z, k)
	VCVTPS2DQ(k, k) // round to nearest
	VCVTDQ2PS(k, r)
	VFNMADD231PS(e.ln2hi, r, z) // z -= k·ln2hi
	VFNMADD231PS(e.ln2lo, r, z) // z -= k·ln2lo
	VMOVUPS(e.c[0], r)
	for i := 1; i < 5; i++ {
		VFMADD213PS(e.c[i], z, r) // r = r·z + c[i]
	}
	VFMADD213PS(e.one, z, r) // r = r·z + 1
	VFMADD213PS(e.one, z, r) // r = r·z + 1
	VPADDD(e.bias, k, k)
	VPSLLD(Imm(23), k, k)
	VMULPS(k, r, z)
}

// geluFMA: x = x/2·(1 + erf(x/√2)) for n floats (n a multiple of 8), erf
// by Abramowitz and Stegun's 7.1.26 as erff in mathf.go.
func geluFMA() {
	TEXT("geluFMA", NOSPLIT, "func(x *float32, n uintptr)")
	Doc("geluFMA applies BERT's GELU to n floats, n a multiple of 8 (AVX2 and FMA).")
	x := GP64()
	Load(Param("x"), x)
	n := GP64()
	Load(Param("n"), n)
	e := expConstants()
	rsqrt2, half, p := fconst("rsqrt2", 1/math.Sqrt2), fconst("half", 0.5), fconst("erfP", 0.3275911)
	var a []Mem
	for i, v := range []float32{1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592} {
		a = append(a, fconst(fmt.Sprintf("erfA%d", 5-i), v))
	}
	absMask := vconst("absMask", 0x7fffffff)

	v, u, au, t, poly, z, k, r := YMM(), YMM(), YMM(), YMM(), YMM(), YMM(), YMM(), YMM()
	Label("gelu")
	CMPQ(n, Imm(8))
	JB(LabelRef("geludone"))
	VMOVUPS(Mem{Base: x}, v)
	VMULPS(rsqrt2, v, u)
	VANDPS(absMask, u, au)
	// t = 1/(1 + p·|u|)
	VMOVUPS(e.one, poly)
	VFMADD231PS(p, au, poly)
	VMOVUPS(e.one, t)
	VDIVPS(poly, t, t)
	// poly = ((((a5 t + a4) t + a3) t + a2) t + a1) t
	VMOVUPS(a[0], poly)
	for i := 1; i < 5; i++ {
		VFMADD213PS(a[i], t, poly)
	}
	VMULPS(t, poly, poly)
	// z = e^(-u²)
	VMULPS(au, au, z)
	VXORPS(r, r, r)
	VSUBPS(z, r, z)
	exp8(e, z, k, r)
	// erf(|u|) = 1 - poly·z, then the sign of u.
	VFNMADD213PS(e.one, z, poly) // poly = 1 - poly·z
	VANDPS(absMask, u, r)
	VXORPS(u, r, r) // r = the sign bit of u
	VXORPS(r, poly, poly)
	// x/2 · (1 + erf)
	VADDPS(e.one, poly, poly)
	VMULPS(half, v, v)
	VMULPS(poly, v, v)
	VMOVUPS(v, Mem{Base: x})
	ADDQ(Imm(32), x)
	SUBQ(Imm(8), n)
	JMP(LabelRef("gelu"))
	Label("geludone")
	VZEROUPPER()
	RET()
}

// expSumFMA: x = e^((x - hi)·scale) for n floats (n a multiple of 8),
// returning their sum: the softmax's exponentials.
func expSumFMA() {
	TEXT("expSumFMA", NOSPLIT, "func(x *float32, n uintptr, hi float32, scale float32) float32")
	Doc("expSumFMA replaces n floats (a multiple of 8) by e^((x-hi)·scale) and returns their sum (AVX2 and FMA).")
	x := GP64()
	Load(Param("x"), x)
	n := GP64()
	Load(Param("n"), n)
	hiS, scaleS := XMM(), XMM()
	Load(Param("hi"), hiS)
	Load(Param("scale"), scaleS)
	hi, scale := YMM(), YMM()
	VBROADCASTSS(hiS, hi)
	VBROADCASTSS(scaleS, scale)
	e := expConstants()
	sum, z, k, r := YMM(), YMM(), YMM(), YMM()
	VXORPS(sum, sum, sum)
	Label("exp")
	CMPQ(n, Imm(8))
	JB(LabelRef("expdone"))
	VMOVUPS(Mem{Base: x}, z)
	VSUBPS(hi, z, z)
	VMULPS(scale, z, z)
	exp8(e, z, k, r)
	VMOVUPS(z, Mem{Base: x})
	VADDPS(z, sum, sum)
	ADDQ(Imm(32), x)
	SUBQ(Imm(8), n)
	JMP(LabelRef("exp"))
	Label("expdone")
	// Horizontal sum of the eight lanes.
	lo := XMM()
	VEXTRACTF128(Imm(1), sum, lo)
	VADDPS(lo, sum.AsX(), lo)
	VMOVHLPS(lo, lo, r.AsX())
	VADDPS(r.AsX(), lo, lo)
	VPSHUFD(Imm(1), lo, r.AsX())
	VADDSS(r.AsX(), lo, lo)
	Store(lo, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// Command asm generates vecindex's AVX2 kernels with avo. It is a module of
// its own so that sagasu's module does not depend on avo; the generated
// assembly and its Go declarations are committed. Regenerate with
//
//	cd internal/store/vecindex/asm && go run . -out ../dot_amd64.s -stubs ../dot_amd64_stubs.go -pkg vecindex
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// rowsPerPass is how many rows share one load of each query block.
const rowsPerPass = 4

func main() {
	ConstraintExpr("amd64,!purego")
	dotsInt8()
	Generate()
}

// dotsInt8 writes to dst[r] the dot product of q with row r of codes (rows
// of len(q) bytes, len(q) a multiple of 32, codes in -127..127), exact in
// int32.
//
// VPMADDUBSW multiplies unsigned by signed bytes, so each product a·b is
// computed as |a| · (b·sign(a)): |q| once per block, the sign applied to
// the row with VPSIGNB. The pairs it sums stay within int16 (2·127·127 <
// 32768) because no code is -128; VPMADDWD by ones widens them to int32.
func dotsInt8() {
	TEXT("dotsInt8AVX2", NOSPLIT, "func(dst []int32, codes []int8, q []int8)")
	Doc("dotsInt8AVX2 writes to dst[r] the dot product of q with the r-th len(q)-byte row of codes; len(q) must be a multiple of 32 and codes and q must lie in -127..127.")
	dst := Load(Param("dst").Base(), GP64())
	rows := Load(Param("dst").Len(), GP64())
	codes := Load(Param("codes").Base(), GP64())
	q := Load(Param("q").Base(), GP64())
	dim := Load(Param("q").Len(), GP64())

	ones := YMM()
	VPCMPEQW(ones, ones, ones)
	VPSRLW(U8(15), ones, ones) // sixteen int16 ones

	// Four rows per pass: they share the loads of q and |q|.
	Label("quad")
	CMPQ(rows, U8(rowsPerPass))
	JL(LabelRef("single"))
	{
		acc := make([]VecVirtual, rowsPerPass)
		for i := range acc {
			acc[i] = YMM()
			VPXOR(acc[i], acc[i], acc[i])
		}
		row := make([]GPVirtual, rowsPerPass)
		row[0] = GP64()
		MOVQ(codes, row[0])
		for i := 1; i < rowsPerPass; i++ {
			row[i] = GP64()
			LEAQ(Mem{Base: row[i-1], Index: dim, Scale: 1}, row[i])
		}
		off := GP64()
		XORQ(off, off)
		Label("quadblock")
		qv, qa := YMM(), YMM()
		VMOVDQU(Mem{Base: q, Index: off, Scale: 1}, qv)
		VPABSB(qv, qa)
		for i := range acc {
			r := YMM()
			VMOVDQU(Mem{Base: row[i], Index: off, Scale: 1}, r)
			VPSIGNB(qv, r, r)
			VPMADDUBSW(r, qa, r)
			VPMADDWD(ones, r, r)
			VPADDD(r, acc[i], acc[i])
		}
		ADDQ(U8(32), off)
		CMPQ(off, dim)
		JL(LabelRef("quadblock"))
		for i := range acc {
			reduce(acc[i], Mem{Base: dst, Disp: 4 * i})
		}
		LEAQ(Mem{Base: row[rowsPerPass-1], Index: dim, Scale: 1}, codes)
		ADDQ(U8(4*rowsPerPass), dst)
		SUBQ(U8(rowsPerPass), rows)
		JMP(LabelRef("quad"))
	}

	Label("single")
	TESTQ(rows, rows)
	JZ(LabelRef("done"))
	{
		acc := YMM()
		VPXOR(acc, acc, acc)
		off := GP64()
		XORQ(off, off)
		Label("singleblock")
		qv, qa, r := YMM(), YMM(), YMM()
		VMOVDQU(Mem{Base: q, Index: off, Scale: 1}, qv)
		VPABSB(qv, qa)
		VMOVDQU(Mem{Base: codes, Index: off, Scale: 1}, r)
		VPSIGNB(qv, r, r)
		VPMADDUBSW(r, qa, r)
		VPMADDWD(ones, r, r)
		VPADDD(r, acc, acc)
		ADDQ(U8(32), off)
		CMPQ(off, dim)
		JL(LabelRef("singleblock"))
		reduce(acc, Mem{Base: dst})
		ADDQ(dim, codes)
		ADDQ(U8(4), dst)
		DECQ(rows)
		JMP(LabelRef("single"))
	}

	Label("done")
	VZEROUPPER()
	RET()
}

// reduce stores the sum of acc's eight int32 lanes at m.
func reduce(acc VecVirtual, m Mem) {
	hi := XMM()
	VEXTRACTI128(U8(1), acc, hi)
	lo := acc.AsX()
	VPADDD(hi, lo, lo)
	sh := XMM()
	VPSHUFD(U8(0x4e), lo, sh) // swap 64-bit halves
	VPADDD(sh, lo, lo)
	VPSHUFD(U8(0xb1), lo, sh) // swap 32-bit pairs
	VPADDD(sh, lo, lo)
	VMOVD(lo, m)
}

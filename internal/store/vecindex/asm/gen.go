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
	dotsInt8At()
	dotsF32At()
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

// prefetchRow asks for the cache lines of the row of bytes bytes at base
// (a multiple of 64 is read whole; the last partial line too).
func prefetchRow(base, bytes Register) {
	off := GP64()
	XORQ(off, off)
	lbl := "pf" + nextLabel()
	Label(lbl)
	PREFETCHT0(Mem{Base: base, Index: off, Scale: 1})
	ADDQ(U8(64), off)
	CMPQ(off, bytes)
	JL(LabelRef(lbl))
}

var labels int

func nextLabel() string {
	labels++
	return string(rune('a'+labels/26)) + string(rune('a'+labels%26))
}

// dotsInt8At writes to dst[i] the dot product of q with row idx[i] of
// codes (rows of len(q) bytes), prefetching the next row while it
// computes one: a graph search scores the unvisited neighbours of a node
// at once, rows scattered over memory, so the wait for memory overlaps
// the arithmetic.
func dotsInt8At() {
	TEXT("dotsInt8AtAVX2", NOSPLIT, "func(dst []int32, codes []int8, idx []int32, q []int8)")
	Doc("dotsInt8AtAVX2 writes to dst[i] the dot product of q with row idx[i] of codes (rows of len(q) bytes); len(q) must be a multiple of 32, len(idx) at least len(dst), every row within codes and codes and q within -127..127.")
	dst := Load(Param("dst").Base(), GP64())
	n := Load(Param("dst").Len(), GP64())
	codes := Load(Param("codes").Base(), GP64())
	idx := Load(Param("idx").Base(), GP64())
	q := Load(Param("q").Base(), GP64())
	dim := Load(Param("q").Len(), GP64())

	ones := YMM()
	VPCMPEQW(ones, ones, ones)
	VPSRLW(U8(15), ones, ones)

	TESTQ(n, n)
	JZ(LabelRef("i8done"))
	// The first row's lines.
	{
		r0 := GP64()
		MOVLQSX(Mem{Base: idx}, r0)
		IMULQ(dim, r0)
		ADDQ(codes, r0)
		prefetchRow(r0, dim)
	}
	Label("i8row")
	{
		row := GP64()
		MOVLQSX(Mem{Base: idx}, row)
		IMULQ(dim, row)
		ADDQ(codes, row)
		// The next row's lines, while this one is computed.
		CMPQ(n, U8(1))
		JE(LabelRef("i8compute"))
		nx := GP64()
		MOVLQSX(Mem{Base: idx, Disp: 4}, nx)
		IMULQ(dim, nx)
		ADDQ(codes, nx)
		prefetchRow(nx, dim)
		Label("i8compute")
		acc := YMM()
		VPXOR(acc, acc, acc)
		off := GP64()
		XORQ(off, off)
		Label("i8block")
		qv, qa, r := YMM(), YMM(), YMM()
		VMOVDQU(Mem{Base: q, Index: off, Scale: 1}, qv)
		VPABSB(qv, qa)
		VMOVDQU(Mem{Base: row, Index: off, Scale: 1}, r)
		VPSIGNB(qv, r, r)
		VPMADDUBSW(r, qa, r)
		VPMADDWD(ones, r, r)
		VPADDD(r, acc, acc)
		ADDQ(U8(32), off)
		CMPQ(off, dim)
		JL(LabelRef("i8block"))
		reduce(acc, Mem{Base: dst})
		ADDQ(U8(4), dst)
		ADDQ(U8(4), idx)
		DECQ(n)
		JNZ(LabelRef("i8row"))
	}
	Label("i8done")
	VZEROUPPER()
	RET()
}

// dotsF32At is dotsInt8At on float32 rows (FMA), for comparison and for
// exact scores of scattered rows.
func dotsF32At() {
	TEXT("dotsF32AtAVX2", NOSPLIT, "func(dst []float32, data []float32, idx []int32, q []float32)")
	Doc("dotsF32AtAVX2 writes to dst[i] the dot product of q with row idx[i] of data (rows of len(q) floats); len(q) must be a multiple of 16, len(idx) at least len(dst) and every row within data.")
	dst := Load(Param("dst").Base(), GP64())
	n := Load(Param("dst").Len(), GP64())
	data := Load(Param("data").Base(), GP64())
	idx := Load(Param("idx").Base(), GP64())
	q := Load(Param("q").Base(), GP64())
	dim := Load(Param("q").Len(), GP64())
	bytes := GP64()
	LEAQ(Mem{Base: dim, Index: dim, Scale: 2}, bytes) // 3·dim
	ADDQ(dim, bytes)                                  // 4·dim

	TESTQ(n, n)
	JZ(LabelRef("f32done"))
	{
		r0 := GP64()
		MOVLQSX(Mem{Base: idx}, r0)
		IMULQ(bytes, r0)
		ADDQ(data, r0)
		prefetchRow(r0, bytes)
	}
	Label("f32row")
	{
		row := GP64()
		MOVLQSX(Mem{Base: idx}, row)
		IMULQ(bytes, row)
		ADDQ(data, row)
		CMPQ(n, U8(1))
		JE(LabelRef("f32compute"))
		nx := GP64()
		MOVLQSX(Mem{Base: idx, Disp: 4}, nx)
		IMULQ(bytes, nx)
		ADDQ(data, nx)
		prefetchRow(nx, bytes)
		Label("f32compute")
		a0, a1 := YMM(), YMM()
		VXORPS(a0, a0, a0)
		VXORPS(a1, a1, a1)
		off := GP64()
		XORQ(off, off)
		Label("f32block")
		r0, r1 := YMM(), YMM()
		VMOVUPS(Mem{Base: row, Index: off, Scale: 1}, r0)
		VMOVUPS(Mem{Base: row, Index: off, Scale: 1, Disp: 32}, r1)
		VFMADD231PS(Mem{Base: q, Index: off, Scale: 1}, r0, a0)
		VFMADD231PS(Mem{Base: q, Index: off, Scale: 1, Disp: 32}, r1, a1)
		ADDQ(U8(64), off)
		CMPQ(off, bytes)
		JL(LabelRef("f32block"))
		VADDPS(a1, a0, a0)
		hi := XMM()
		VEXTRACTF128(U8(1), a0, hi)
		lo := a0.AsX()
		VADDPS(hi, lo, lo)
		sh := XMM()
		VPERMILPS(U8(0x4e), lo, sh)
		VADDPS(sh, lo, lo)
		VPERMILPS(U8(0xb1), lo, sh)
		VADDPS(sh, lo, lo)
		VMOVSS(lo, Mem{Base: dst})
		ADDQ(U8(4), dst)
		ADDQ(U8(4), idx)
		DECQ(n)
		JNZ(LabelRef("f32row"))
	}
	Label("f32done")
	VZEROUPPER()
	RET()
}

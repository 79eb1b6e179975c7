package main

import (
	"math"
	"strconv"

	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The constants of gelu32, geluGrad32 and twoPhi32 (tensor/special.go,
// tensor/activation.go), as the scalar code writes them.
var (
	gehalf, gemhalf, gersqrt2, getwo, gec126, geisq2pi, gelim Mem
	genr                                                      []Mem
)

func geluConstants() {
	gehalf = splat32("gehalf", 0.5)
	gemhalf = splat32("gemhalf", -0.5)
	gersqrt2 = splat32("gersqrt2", 1/math.Sqrt2)
	getwo = splat32("getwo", 2)
	gec126 = splat32("gec126", 1.26551223)
	geisq2pi = splat32("geisq2pi", 0.3989422804014327)
	gelim = splat32("gelim", 12)
	// twoPhi32's coefficients, all added (p − c as p + (−c) rounds alike).
	for i, c := range []float32{0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807,
		-0.18628806, 0.09678418, 0.37409196, 1.00002368} {
		genr = append(genr, splat32("genr"+strconv.Itoa(i), c))
	}
}

// twoPhi emits twoPhi32(x, h) for x in Y0, |x| in Y1 and h in Y12 into
// Y14, using Y13, Y15 and exp32Core's registers: e = erfc(|x|/√2) by the
// Numerical Recipes fit, then e where x has its sign bit set and 2 − e
// elsewhere.
func twoPhi() {
	a.VMULPS(gersqrt2, Y1, Y13)
	a.VMULPS(gehalf, Y13, Y13)
	a.VADDPS(sgone, Y13, Y13)
	a.VMOVUPS(sgone, Y14)
	a.VDIVPS(Y13, Y14, Y14)
	a.VMULPS(genr[0], Y14, Y15)
	for _, c := range genr[1:] {
		a.VADDPS(c, Y15, Y15)
		a.VMULPS(Y14, Y15, Y15)
	}
	a.VSUBPS(gec126, Y12, Y13)
	a.VADDPS(Y15, Y13, Y13)
	exp32Core(Y13)
	a.VMULPS(Y4, Y14, Y14)
	a.VMOVUPS(getwo, Y13)
	a.VSUBPS(Y14, Y13, Y13)
	a.VBLENDVPS(Y0, Y14, Y13, Y14)
}

// geluKernels emits geluAVX2 and geluGradAVX2.
func geluKernels() {
	geluConstants()

	text("geluAVX2", "func(d, x *float32, n int) int")
	a.Comment("geluAVX2 computes gelu32 on blocks of 8 while every |x| ≤ 12 and returns how",
		"many elements it wrote: a multiple of 8, stopping at the first block holding a",
		"larger |x| or a NaN, or at the last full block, with the scalar code's",
		"operations in its order.")
	a.Load(a.Param("d"), RDI)
	a.Load(a.Param("x"), RSI)
	a.Load(a.Param("n"), RCX)
	a.XORQ(RAX, RAX)
	guardedLoop("geloop", "gedone", gelim, RDX, func() {
		a.Comment("(0.5·x)·twoPhi32(x, (−0.5·x)·x)")
		a.VMULPS(gemhalf, Y0, Y12)
		a.VMULPS(Y0, Y12, Y12)
		twoPhi()
		a.VMULPS(gehalf, Y0, Y10)
		a.VMULPS(Y14, Y10, Y11)
		a.VMOVUPS(Y11, at(RDI, 4, 0))
	})
	done("gedone")

	text("geluGradAVX2", "func(d, v, x *float32, n int) int")
	a.Comment("geluGradAVX2 computes geluGrad32, v·(Φ(x) + x·φ(x)), on blocks of 8 while",
		"every |x| ≤ 12 and returns how many elements it wrote (a multiple of 8).")
	a.Load(a.Param("d"), RDI)
	a.Load(a.Param("v"), RDX)
	a.Load(a.Param("x"), RSI)
	a.Load(a.Param("n"), RCX)
	a.XORQ(RAX, RAX)
	guardedLoop("gegloop", "gegdone", gelim, RBX, func() {
		a.Comment("h = (−0.5·x)·x, φ term = (x·(1/√(2π)))·exp32Core(h)")
		a.VMULPS(gemhalf, Y0, Y12)
		a.VMULPS(Y0, Y12, Y12)
		a.VMULPS(geisq2pi, Y0, Y10)
		exp32Core(Y12)
		a.VMULPS(Y4, Y10, Y10)
		a.Comment("0.5·twoPhi32(x, h) + φ term, times v")
		twoPhi()
		a.VMULPS(gehalf, Y14, Y14)
		a.VADDPS(Y10, Y14, Y14)
		a.VMULPS(at(RDX, 4, 0), Y14, Y14)
		a.VMOVUPS(Y14, at(RDI, 4, 0))
	})
	done("gegdone")
}

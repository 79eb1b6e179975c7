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
	gehalf, gemhalf, gehrsqrt2, getwo, gec126, geisq2pi, gelim Mem
	genr                                                       []Mem
)

func geluConstants() {
	if gehalf.Symbol.Name != "" {
		return
	}
	gehalf = splat32("gehalf", 0.5)
	gemhalf = splat32("gemhalf", -0.5)
	gehrsqrt2 = splat32("gehrsqrt2", 0.5/math.Sqrt2)
	getwo = splat32("getwo", 2)
	gec126 = splat32("gec126", 1.26551223)
	geisq2pi = splat32("geisq2pi", 0.3989422804014327)
	gelim = splat32("gelim", 12)
	// twoPhi32's coefficients c0-c8, highest power first, with their signs.
	for i, c := range []float32{0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807,
		-0.18628806, 0.09678418, 0.37409196, 1.00002368} {
		genr = append(genr, splat32("genr"+strconv.Itoa(i), c))
	}
}

// twoPhi emits twoPhi32(x, h) for x in v(0), |x| in v(1) and h in v(12)
// into v(14), using v(2)-v(7), v(13), v(15) and exp32Core's registers:
// e = erfc(|x|/√2) by the Numerical Recipes fit, its polynomial
// t·((a0 + a1·t²) + (a2 + a3·t²)·t⁴ + c0·t⁸) in Estrin's form with
// linear pieces a0-a3, then e where x has its sign bit set and 2 − e
// elsewhere.
func twoPhi() {
	vmul(gehrsqrt2, v(1), v(13))
	vadd(sgone, v(13), v(13))
	vconst(sgone, v(14))
	vdiv(v(13), v(14), v(14))
	for i, r := range []int{2, 3, 4, 5} { // a_i = c(7−2i)·t + c(8−2i)
		vmul(genr[7-2*i], v(14), v(r))
		vadd(genr[8-2*i], v(r), v(r))
	}
	vmul(v(14), v(14), v(6))
	vmul(v(6), v(6), v(7))
	vmul(v(6), v(3), v(3))
	vadd(v(3), v(2), v(2))
	vmul(v(6), v(5), v(5))
	vadd(v(5), v(4), v(4))
	vmul(v(7), v(4), v(4))
	vadd(v(4), v(2), v(2))
	vmul(v(7), v(7), v(15))
	vmul(genr[0], v(15), v(15))
	vadd(v(15), v(2), v(2))
	vmul(v(14), v(2), v(15))
	vsub(gec126, v(12), v(13))
	vadd(v(15), v(13), v(13))
	exp32Core(v(13))
	vmul(v(4), v(14), v(14))
	vconst(getwo, v(13))
	vsub(v(14), v(13), v(13))
	blendSign(v(0), v(14), v(13), v(14))
}

// geluKernels emits gelu and geluGrad at the current width.
func geluKernels() {
	geluConstants()
	lanes := strconv.Itoa(w.lanes)

	text(name("gelu"), "func(d, x *float32, n int) int")
	a.Comment(name("gelu")+" computes gelu32 on blocks of "+lanes+" while every |x| ≤ 12 and returns how",
		"many elements it wrote: a multiple of "+lanes+", stopping at the first block holding a",
		"larger |x| or a NaN, or at the last full block, with the scalar code's",
		"operations in its order.")
	a.Load(a.Param("d"), RDI)
	a.Load(a.Param("x"), RSI)
	a.Load(a.Param("n"), RCX)
	a.XORQ(RAX, RAX)
	guardedLoop(label("geloop"), label("gedone"), gelim, RDX, func() {
		a.Comment("(0.5·x)·twoPhi32(x, (−0.5·x)·x)")
		vmul(gemhalf, v(0), v(12))
		vmul(v(0), v(12), v(12))
		twoPhi()
		vmul(gehalf, v(0), v(10))
		vmul(v(14), v(10), v(11))
		a.VMOVUPS(v(11), at(RDI, 4, 0))
	})
	done(label("gedone"))

	text(name("geluGrad"), "func(d, v, x *float32, n int) int")
	a.Comment(name("geluGrad")+" computes geluGrad32, v·(Φ(x) + x·φ(x)), on blocks of "+lanes+" while",
		"every |x| ≤ 12 and returns how many elements it wrote (a multiple of "+lanes+").")
	a.Load(a.Param("d"), RDI)
	a.Load(a.Param("v"), RDX)
	a.Load(a.Param("x"), RSI)
	a.Load(a.Param("n"), RCX)
	a.XORQ(RAX, RAX)
	guardedLoop(label("gegloop"), label("gegdone"), gelim, RBX, func() {
		a.Comment("h = (−0.5·x)·x, φ term = (x·(1/√(2π)))·exp32Core(h)")
		vmul(gemhalf, v(0), v(12))
		vmul(v(0), v(12), v(12))
		vmul(geisq2pi, v(0), v(10))
		exp32Core(v(12))
		vmul(v(4), v(10), v(10))
		a.Comment("0.5·twoPhi32(x, h) + φ term, times v")
		twoPhi()
		vmul(gehalf, v(14), v(14))
		vadd(v(10), v(14), v(14))
		vmul(at(RDX, 4, 0), v(14), v(14))
		a.VMOVUPS(v(14), at(RDI, 4, 0))
	})
	done(label("gegdone"))
}

package main

import (
	"math"
	"strconv"

	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The constants of gelu32, geluGrad32, erfFit32 and erfcNR32
// (tensor/special.go, tensor/activation.go), as the scalar code writes them.
var (
	gehalf, gemhalf, gersqrt2, gemrsqrt2, gelo, gehi, gec126, geisq2pi, gelim Mem
	gep, geq                                                                  []Mem
	genr                                                                      []Mem
)

func geluConstants() {
	gehalf = splat32("gehalf", 0.5)
	gemhalf = splat32("gemhalf", -0.5)
	gersqrt2 = splat32("gersqrt2", 1/math.Sqrt2)
	gemrsqrt2 = splat32("gemrsqrt2", -1/math.Sqrt2)
	gelo = splat32("gelo", -3.92)
	gehi = splat32("gehi", 3.92)
	gec126 = splat32("gec126", 1.26551223)
	geisq2pi = splat32("geisq2pi", 0.3989422804014327)
	gelim = splat32("gelim", 12)
	for i, c := range []float32{-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
		-5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02} {
		gep = append(gep, splat32("gep"+strconv.Itoa(i), c))
	}
	for i, c := range []float32{-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
		-7.37332916720468e-03, -1.42647390514189e-02} {
		geq = append(geq, splat32("geq"+strconv.Itoa(i), c))
	}
	// erfcNR32's coefficients, all added (p − c as p + (−c) rounds alike).
	for i, c := range []float32{0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807,
		-0.18628806, 0.09678418, 0.37409196, 1.00002368} {
		genr = append(genr, splat32("genr"+strconv.Itoa(i), c))
	}
}

// erfFitRight emits erfFit32(x·(1/√2)) for x in Y0 into Y8, using Y6, Y7
// and Y9.
func erfFitRight() {
	a.VMULPS(gersqrt2, Y0, Y6)
	a.VMAXPS(gelo, Y6, Y6)
	a.VMINPS(gehi, Y6, Y6)
	a.VMULPS(Y6, Y6, Y7)
	a.VMULPS(gep[0], Y7, Y8)
	a.VADDPS(gep[1], Y8, Y8)
	horner(Y7, Y8, gep[2:]...)
	a.VMULPS(geq[0], Y7, Y9)
	a.VADDPS(geq[1], Y9, Y9)
	horner(Y7, Y9, geq[2:]...)
	a.VMULPS(Y8, Y6, Y8)
	a.VDIVPS(Y9, Y8, Y8)
}

// erfcLeft emits erfcNR32(x, h) for x in Y0 and h in Y12 into Y14, using
// Y13, Y15 and exp32Core's registers.
func erfcLeft() {
	a.VMULPS(gemrsqrt2, Y0, Y13)
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
}

// geluKernels emits geluAVX2 and geluGradAVX2.
func geluKernels() {
	geluConstants()

	text("geluAVX2", "func(d, x *float32, n int) int")
	a.Comment("geluAVX2 computes gelu32 on blocks of 8 while every |x| ≤ 12 and returns how",
		"many elements it wrote: a multiple of 8, stopping at the first block holding a",
		"larger |x| or a NaN, or at the last full block. Both branches are computed and",
		"blended by x ≥ −0.5, with the scalar code's operations in its order.")
	a.Load(a.Param("d"), RDI)
	a.Load(a.Param("x"), RSI)
	a.Load(a.Param("n"), RCX)
	a.XORQ(RAX, RAX)
	guardedLoop("geloop", "gedone", gelim, RDX, func() {
		a.Comment("x ≥ −0.5: (0.5·x)·(1 + erfFit32(x/√2))")
		erfFitRight()
		a.VMULPS(gehalf, Y0, Y10)
		a.VADDPS(sgone, Y8, Y8)
		a.VMULPS(Y8, Y10, Y11)
		a.Comment("x < −0.5: (0.5·x)·erfcNR32(x, (−0.5·x)·x)")
		a.VMULPS(gemhalf, Y0, Y12)
		a.VMULPS(Y0, Y12, Y12)
		erfcLeft()
		a.VMULPS(Y14, Y10, Y14)
		a.VCMPPS(U8(13), gemhalf, Y0, Y15)
		a.VBLENDVPS(Y15, Y11, Y14, Y11)
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
		a.Comment("x ≥ −0.5: 0.5·(1 + erfFit32(x/√2)) + φ term")
		erfFitRight()
		a.VADDPS(sgone, Y8, Y8)
		a.VMULPS(gehalf, Y8, Y8)
		a.VADDPS(Y10, Y8, Y11)
		a.Comment("x < −0.5: 0.5·erfcNR32(x, h) + φ term")
		erfcLeft()
		a.VMULPS(gehalf, Y14, Y14)
		a.VADDPS(Y10, Y14, Y14)
		a.VCMPPS(U8(13), gemhalf, Y0, Y15)
		a.VBLENDVPS(Y15, Y11, Y14, Y11)
		a.VMULPS(at(RDX, 4, 0), Y11, Y11)
		a.VMOVUPS(Y11, at(RDI, 4, 0))
	})
	done("gegdone")
}

package main

import (
	"strconv"

	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The constants of exp32Core (tensor/special.go) and of the kernels built
// on it, as the scalar code writes them.
var (
	sgabs, sgsign, sglim, sglog2e, sground, sgc1, sgc2 Mem
	sgp                                                [6]Mem
	sgone, sg127, thtwo                                Mem
)

func exp32Constants() {
	sgabs = splat32Bits("sgabs", 0x7fffffff)
	sgsign = splat32Bits("sgsign", 0x80000000)
	sglim = splat32("sglim", 87)
	sglog2e = splat32("sglog2e", 1.44269504088896341)
	sground = splat32("sground", 12582912)
	sgc1 = splat32("sgc1", 0.693359375)
	sgc2 = splat32("sgc2", -2.12194440e-4)
	for i, p := range []float32{1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1} {
		sgp[i] = splat32("sgp"+strconv.Itoa(i), p)
	}
	sgone = splat32("sgone", 1)
	sg127 = splat32Bits("sg127", 127)
}

// horner emits acc = acc·x + c for each c in turn.
func horner(x, acc VecPhysical, cs ...Mem) {
	for _, c := range cs {
		a.VMULPS(x, acc, acc)
		a.VADDPS(c, acc, acc)
	}
}

// exp32Core emits exp32Core(t) for the 8 lanes of t into Y4, using Y2, Y3
// and Y5: k = t·log2e rounded by adding and subtracting 1.5·2²³,
// r = t − k·c1 − k·c2, y = p(r)·r·r + r + 1, then y·2ᵏ with 2ᵏ built from
// its exponent bits. Four kernels share it.
func exp32Core(t VecPhysical) {
	a.VMULPS(sglog2e, t, Y2)
	a.VADDPS(sground, Y2, Y2)
	a.VSUBPS(sground, Y2, Y2)
	a.VMULPS(sgc1, Y2, Y3)
	a.VSUBPS(Y3, t, Y3)
	a.VMULPS(sgc2, Y2, Y4)
	a.VSUBPS(Y4, Y3, Y3)
	a.VMULPS(sgp[0], Y3, Y4)
	a.VADDPS(sgp[1], Y4, Y4)
	horner(Y3, Y4, sgp[2:]...)
	a.VMULPS(Y3, Y4, Y4)
	a.VMULPS(Y3, Y4, Y4)
	a.VADDPS(Y3, Y4, Y4)
	a.VADDPS(sgone, Y4, Y4)
	a.VCVTTPS2DQ(Y2, Y5)
	a.VPADDD(sg127, Y5, Y5)
	a.VPSLLD(U8(23), Y5, Y5)
	a.VMULPS(Y5, Y4, Y4)
}

// guardedLoop emits the head of a loop over blocks of 8 float32 that
// stops at the last full block (tmp holds AX+8) or at the first block of
// x (SI) holding an |x| above lim or a NaN. It leaves x in Y0 and |x| in
// Y1, then emits body, which must store the block; AX counts the elements
// written.
func guardedLoop(name, exit string, lim Mem, tmp GPPhysical, body func()) {
	a.Label(name)
	a.LEAQ(Mem{Base: RAX, Disp: 8}, tmp)
	a.CMPQ(tmp, RCX)
	a.JGT(LabelRef(exit))
	a.VMOVUPS(at(RSI, 4, 0), Y0)
	a.VANDPS(sgabs, Y0, Y1)
	a.VCMPPS(U8(2), lim, Y1, Y2)
	a.VMOVMSKPS(Y2, EBX)
	a.CMPL(EBX, U32(0xff))
	a.JNE(LabelRef(exit))
	body()
	a.ADDQ(U32(8), RAX)
	a.JMP(LabelRef(name))
}

// expNegAbs emits e = exp32Core(−|x|) into Y4 (|x| in Y1 becomes −|x|).
func expNegAbs() {
	a.VXORPS(sgsign, Y1, Y1)
	exp32Core(Y1)
}

// exp32Kernels emits the shared constants, sigmoidAVX2 and tanhAVX2.
func exp32Kernels() {
	exp32Constants()

	text("sigmoidAVX2", "func(d, x *float32, n int) int")
	a.Comment("sigmoidAVX2 computes sigmoidRun32 on blocks of 8 while every |x| ≤ 87 (the",
		"range in which the scalar code inlines exp32Core) and returns how many elements",
		"it wrote: a multiple of 8, stopping at the first block holding a larger |x| or a",
		"NaN, or at the last full block.")
	a.Load(a.Param("d"), RDI)
	a.Load(a.Param("x"), RSI)
	a.Load(a.Param("n"), RCX)
	a.XORQ(RAX, RAX)
	guardedLoop("sgloop", "sgdone", sglim, RDX, func() {
		expNegAbs()
		a.Comment("numerator 1, or e where x has its sign bit set; divide by 1 + e")
		a.VMOVUPS(sgone, Y6)
		a.VBLENDVPS(Y0, Y4, Y6, Y6)
		a.VADDPS(sgone, Y4, Y7)
		a.VDIVPS(Y7, Y6, Y6)
		a.VMOVUPS(Y6, at(RDI, 4, 0))
	})
	done("sgdone")

	tht := [5]Mem{}
	for i, c := range []float32{-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1, -3.33332819422e-1} {
		tht[i] = splat32("tht"+strconv.Itoa(i), c)
	}
	thcut := splat32("thcut", 0.625)
	thlim := splat32("thlim", 44)
	thtwo = splat32("thtwo", 2)

	text("tanhAVX2", "func(d, x *float32, n int) int")
	a.Comment("tanhAVX2 computes tanhRun32 (tanh32 per element) on blocks of 8 while every",
		"|x| ≤ 44, so that exp32(2|x|) stays on exp32Core's normal path, and returns how",
		"many elements it wrote (a multiple of 8; it stops at a block with a larger |x|",
		"or a NaN). Both branches of tanh32 are computed and blended by |x| ≥ 0.625.")
	a.Load(a.Param("d"), RDI)
	a.Load(a.Param("x"), RSI)
	a.Load(a.Param("n"), RCX)
	a.XORQ(RAX, RAX)
	guardedLoop("thloop", "thdone", thlim, RDX, func() {
		a.Comment("Large |x|: t = 1 − 2/(exp32(z+z) + 1), with x's sign.")
		a.VADDPS(Y1, Y1, Y8)
		exp32Core(Y8)
		a.VADDPS(sgone, Y4, Y4)
		a.VMOVUPS(thtwo, Y5)
		a.VDIVPS(Y4, Y5, Y5)
		a.VMOVUPS(sgone, Y6)
		a.VSUBPS(Y5, Y6, Y6)
		a.VANDPS(sgsign, Y0, Y7)
		a.VXORPS(Y7, Y6, Y6)

		a.Comment("Small |x|: s = x²; ((((t0·s+t1)·s+t2)·s+t3)·s+t4)·s·x + x.")
		a.VMULPS(Y0, Y0, Y7)
		a.VMULPS(tht[0], Y7, Y8)
		a.VADDPS(tht[1], Y8, Y8)
		horner(Y7, Y8, tht[2:]...)
		a.VMULPS(Y7, Y8, Y8)
		a.VMULPS(Y0, Y8, Y8)
		a.VADDPS(Y0, Y8, Y8)

		a.VCMPPS(U8(13), thcut, Y1, Y9)
		a.VBLENDVPS(Y9, Y6, Y8, Y8)
		a.VMOVUPS(Y8, at(RDI, 4, 0))
	})
	done("thdone")
}

// sigmoidGradKernel emits sigmoidGradAVX2.
func sigmoidGradKernel() {
	text("sigmoidGradAVX2", "func(d, v, x *float32, n int) int")
	a.Comment("sigmoidGradAVX2 computes sigmoidGradRun32, d = v·(σ(x)·σ(−x)), on blocks of 8",
		"while every |x| ≤ 87 and returns how many elements it wrote (a multiple of 8).")
	a.Load(a.Param("d"), RDI)
	a.Load(a.Param("v"), RDX)
	a.Load(a.Param("x"), RSI)
	a.Load(a.Param("n"), RCX)
	a.XORQ(RAX, RAX)
	guardedLoop("sggloop", "sggdone", sglim, RBX, func() {
		expNegAbs()
		a.Comment("σ(x) has numerator e where x's sign bit is set, else 1; σ(−x) the",
			"other one. Both divide by 1 + e.")
		a.VMOVUPS(sgone, Y6)
		a.VBLENDVPS(Y0, Y4, Y6, Y7)
		a.VBLENDVPS(Y0, Y6, Y4, Y8)
		a.VADDPS(sgone, Y4, Y9)
		a.VDIVPS(Y9, Y7, Y7)
		a.VDIVPS(Y9, Y8, Y8)
		a.VMULPS(Y8, Y7, Y7)
		a.VMULPS(at(RDX, 4, 0), Y7, Y7)
		a.VMOVUPS(Y7, at(RDI, 4, 0))
	})
	done("sggdone")
}

// softplusKernel emits softplusAVX2.
func softplusKernel() {
	// 1/k for odd k: the series of log1pUnit32 (tensor/special.go).
	spc := map[int]Mem{}
	for i, c := range []float32{1.0 / 3, 1.0 / 5, 1.0 / 7, 1.0 / 9, 1.0 / 11, 1.0 / 13, 1.0 / 15} {
		k := 2*i + 3
		spc[k] = splat32("spc"+strconv.Itoa(k), c)
	}

	text("softplusAVX2", "func(d, x *float32, n int) int")
	a.Comment("softplusAVX2 computes softplus32 = max(x, 0) + log1pUnit32(e^-|x|) on blocks of 8",
		"while every |x| ≤ 87 (e^-|x| as in sigmoidAVX2) and returns how many elements it",
		"wrote: a multiple of 8, stopping at the first block holding a larger |x| or a NaN,",
		"or at the last full block. The operations and their order are those of the",
		"scalar code, so results match bit for bit.")
	a.Load(a.Param("d"), RDI)
	a.Load(a.Param("x"), RSI)
	a.Load(a.Param("n"), RCX)
	a.XORQ(RAX, RAX)
	guardedLoop("sploop", "spdone", sglim, RDX, func() {
		expNegAbs()
		a.Comment("d = 2+e, s = e/d, r = (2−d)+e, s2 = s·s, c = s·(1−s)·r, t = s+s")
		a.VADDPS(thtwo, Y4, Y6)
		a.VDIVPS(Y6, Y4, Y7)
		a.VMOVUPS(thtwo, Y12)
		a.VSUBPS(Y6, Y12, Y12)
		a.VADDPS(Y4, Y12, Y12)
		a.VMULPS(Y7, Y7, Y8)
		a.VMOVUPS(sgone, Y13)
		a.VSUBPS(Y7, Y13, Y13)
		a.VMULPS(Y13, Y7, Y13)
		a.VMULPS(Y12, Y13, Y13)
		a.VADDPS(Y7, Y7, Y7)

		a.Comment("q = ((((((c15·s2+c13)·s2+c11)·s2+c9)·s2+c7)·s2+c5)·s2 + c3")
		a.VMOVUPS(spc[15], Y9)
		horner(Y8, Y9, spc[13], spc[11], spc[9], spc[7], spc[5], spc[3])

		a.Comment("log1p(e) = t + ((t·s2)·q − c); result max(x, 0) + log1p(e)")
		a.VMULPS(Y8, Y7, Y10)
		a.VMULPS(Y9, Y10, Y10)
		a.VSUBPS(Y13, Y10, Y10)
		a.VADDPS(Y10, Y7, Y10)
		a.VXORPS(Y11, Y11, Y11)
		a.VMAXPS(Y11, Y0, Y11)
		a.VADDPS(Y10, Y11, Y11)
		a.VMOVUPS(Y11, at(RDI, 4, 0))
	})
	done("spdone")
}

// expShiftKernel emits expShiftAVX2, the exponentials of a softmax row.
func expShiftKernel() {
	text("expShiftAVX2", "func(d, x *float32, n int, m float32) int")
	a.Comment("expShiftAVX2 sets d[i] = exp32Core(x[i] − m) on blocks of 8 while every",
		"|x[i] − m| ≤ 87 (where the scalar code, expShift32, inlines exp32Core) and returns",
		"how many elements it wrote: a multiple of 8, stopping at the first block out of",
		"that range or holding a NaN, or at the last full block.")
	a.Load(a.Param("d"), RDI)
	a.Load(a.Param("x"), RSI)
	a.Load(a.Param("n"), RCX)
	a.Load(a.Param("m"), X9)
	a.VBROADCASTSS(X9, Y9)
	a.XORQ(RAX, RAX)
	a.Label("esloop")
	a.LEAQ(Mem{Base: RAX, Disp: 8}, RDX)
	a.CMPQ(RDX, RCX)
	a.JGT(LabelRef("esdone"))
	a.VMOVUPS(at(RSI, 4, 0), Y0)
	a.VSUBPS(Y9, Y0, Y0)
	a.VANDPS(sgabs, Y0, Y1)
	a.VCMPPS(U8(2), sglim, Y1, Y2)
	a.VMOVMSKPS(Y2, EBX)
	a.CMPL(EBX, U32(0xff))
	a.JNE(LabelRef("esdone"))
	exp32Core(Y0)
	a.VMOVUPS(Y4, at(RDI, 4, 0))
	a.ADDQ(U32(8), RAX)
	a.JMP(LabelRef("esloop"))
	done("esdone")
}

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
		vmul(x, acc, acc)
		vadd(c, acc, acc)
	}
}

// exp32Core emits exp32Core(t) for the lanes of t into v(4), using v(2),
// v(3), v(5), v(6) and v(7): k = t·log2e rounded by adding and
// subtracting 1.5·2²³, r = t − k·c1 − k·c2, 2ᵏ built from k's exponent
// bits, the polynomial in Estrin's form P = (A + B·r²) + C·r⁴ with
// A = p4·r + p5, B = p2·r + p3 and C = p0·r + p1, then
// y = P·r² + r + 1 and y·2ᵏ. The kernels of exp32.go and gelu.go share
// it; t is read only before
// r is formed.
func exp32Core(t VecPhysical) {
	vmul(sglog2e, t, v(2))
	vadd(sground, v(2), v(2))
	vsub(sground, v(2), v(2))
	vmul(sgc1, v(2), v(3))
	vsub(v(3), t, v(3))
	vmul(sgc2, v(2), v(4))
	vsub(v(4), v(3), v(3))
	a.VCVTTPS2DQ(v(2), v(5))
	vpaddd(sg127, v(5), v(5))
	a.VPSLLD(U8(23), v(5), v(5))
	vmul(sgp[4], v(3), v(4))
	vadd(sgp[5], v(4), v(4))
	vmul(sgp[2], v(3), v(2))
	vadd(sgp[3], v(2), v(2))
	vmul(sgp[0], v(3), v(6))
	vadd(sgp[1], v(6), v(6))
	vmul(v(3), v(3), v(7))
	vmul(v(7), v(2), v(2))
	vadd(v(2), v(4), v(4))
	vmul(v(7), v(7), v(2))
	vmul(v(2), v(6), v(6))
	vadd(v(6), v(4), v(4))
	vmul(v(7), v(4), v(4))
	vadd(v(3), v(4), v(4))
	vadd(sgone, v(4), v(4))
	vmul(v(5), v(4), v(4))
}

// guardedLoop emits the head of a loop over blocks of one register of
// float32 that stops at the last full block (tmp holds AX+lanes) or at
// the first block of x (SI) holding an |x| above lim or a NaN. It leaves
// x in v(0) and |x| in v(1), then emits body, which must store the block;
// AX counts the elements written.
func guardedLoop(loop, exit string, lim Mem, tmp GPPhysical, body func()) {
	a.Label(loop)
	a.LEAQ(Mem{Base: RAX, Disp: w.lanes}, tmp)
	a.CMPQ(tmp, RCX)
	a.JGT(LabelRef(exit))
	a.VMOVUPS(at(RSI, 4, 0), v(0))
	vand(sgabs, v(0), v(1))
	allLanes(lim, v(1), v(2), exit)
	body()
	a.ADDQ(U32(w.lanes), RAX)
	a.JMP(LabelRef(loop))
}

// expNegAbs emits e = exp32Core(−|x|) into v(4) (|x| in v(1) becomes −|x|).
func expNegAbs() {
	vxor(sgsign, v(1), v(1))
	exp32Core(v(1))
}

// Constants of tanh32 (tensor/special.go).
var (
	tht          [5]Mem
	thcut, thlim Mem
)

// exp32Kernels emits the shared constants (at the first width), then
// sigmoid and tanh at the current width.
func exp32Kernels() {
	if sgone.Symbol.Name == "" {
		exp32Constants()
	}
	lanes := strconv.Itoa(w.lanes)

	text(name("sigmoid"), "func(d, x *float32, n int) int")
	a.Comment(name("sigmoid")+" computes sigmoidRun32 on blocks of "+lanes+" while every |x| ≤ 87 (the",
		"range in which the scalar code inlines exp32Core) and returns how many elements",
		"it wrote: a multiple of "+lanes+", stopping at the first block holding a larger |x| or a",
		"NaN, or at the last full block.")
	a.Load(a.Param("d"), RDI)
	a.Load(a.Param("x"), RSI)
	a.Load(a.Param("n"), RCX)
	a.XORQ(RAX, RAX)
	guardedLoop(label("sgloop"), label("sgdone"), sglim, RDX, func() {
		expNegAbs()
		a.Comment("numerator 1, or e where x has its sign bit set; divide by 1 + e")
		vconst(sgone, v(6))
		blendSign(v(0), v(4), v(6), v(6))
		vadd(sgone, v(4), v(7))
		vdiv(v(7), v(6), v(6))
		a.VMOVUPS(v(6), at(RDI, 4, 0))
	})
	done(label("sgdone"))

	if thtwo.Symbol.Name == "" {
		for i, c := range []float32{-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1, -3.33332819422e-1} {
			tht[i] = splat32("tht"+strconv.Itoa(i), c)
		}
		thcut = splat32("thcut", 0.625)
		thlim = splat32("thlim", 44)
		thtwo = splat32("thtwo", 2)
	}

	text(name("tanh"), "func(d, x *float32, n int) int")
	a.Comment(name("tanh")+" computes tanhRun32 (tanh32 per element) on blocks of "+lanes+" while every",
		"|x| ≤ 44, so that exp32(2|x|) stays on exp32Core's normal path, and returns how",
		"many elements it wrote (a multiple of "+lanes+"; it stops at a block with a larger |x|",
		"or a NaN). Both branches of tanh32 are computed and blended by |x| ≥ 0.625.")
	a.Load(a.Param("d"), RDI)
	a.Load(a.Param("x"), RSI)
	a.Load(a.Param("n"), RCX)
	a.XORQ(RAX, RAX)
	guardedLoop(label("thloop"), label("thdone"), thlim, RDX, func() {
		a.Comment("Large |x|: t = 1 − 2/(exp32(z+z) + 1), with x's sign.")
		vadd(v(1), v(1), v(8))
		exp32Core(v(8))
		vadd(sgone, v(4), v(4))
		vconst(thtwo, v(5))
		vdiv(v(4), v(5), v(5))
		vconst(sgone, v(6))
		vsub(v(5), v(6), v(6))
		vand(sgsign, v(0), v(7))
		vxor(v(7), v(6), v(6))

		a.Comment("Small |x|: s = x²; ((((t0·s+t1)·s+t2)·s+t3)·s+t4)·s·x + x.")
		vmul(v(0), v(0), v(7))
		vmul(tht[0], v(7), v(8))
		vadd(tht[1], v(8), v(8))
		horner(v(7), v(8), tht[2:]...)
		vmul(v(7), v(8), v(8))
		vmul(v(0), v(8), v(8))
		vadd(v(0), v(8), v(8))

		blendCmp(U8(13), thcut, v(1), v(6), v(8), v(8), v(9))
		a.VMOVUPS(v(8), at(RDI, 4, 0))
	})
	done(label("thdone"))
}

// sigmoidGradKernel emits sigmoidGrad at the current width.
func sigmoidGradKernel() {
	lanes := strconv.Itoa(w.lanes)
	text(name("sigmoidGrad"), "func(d, v, x *float32, n int) int")
	a.Comment(name("sigmoidGrad")+" computes sigmoidGradRun32, d = v·(σ(x)·σ(−x)), on blocks of "+lanes,
		"while every |x| ≤ 87 and returns how many elements it wrote (a multiple of "+lanes+").")
	a.Load(a.Param("d"), RDI)
	a.Load(a.Param("v"), RDX)
	a.Load(a.Param("x"), RSI)
	a.Load(a.Param("n"), RCX)
	a.XORQ(RAX, RAX)
	guardedLoop(label("sggloop"), label("sggdone"), sglim, RBX, func() {
		expNegAbs()
		a.Comment("σ(x) has numerator e where x's sign bit is set, else 1; σ(−x) the",
			"other one. Both divide by 1 + e.")
		vconst(sgone, v(6))
		blendSign(v(0), v(4), v(6), v(7))
		blendSign(v(0), v(6), v(4), v(8))
		vadd(sgone, v(4), v(9))
		vdiv(v(9), v(7), v(7))
		vdiv(v(9), v(8), v(8))
		vmul(v(8), v(7), v(7))
		vmul(at(RDX, 4, 0), v(7), v(7))
		a.VMOVUPS(v(7), at(RDI, 4, 0))
	})
	done(label("sggdone"))
}

// Constants of log1pUnit32's series (tensor/special.go): 1/k for odd k.
var spc = map[int]Mem{}

// softplusKernel emits softplus at the current width.
func softplusKernel() {
	if len(spc) == 0 {
		for i, c := range []float32{1.0 / 3, 1.0 / 5, 1.0 / 7, 1.0 / 9, 1.0 / 11, 1.0 / 13, 1.0 / 15} {
			k := 2*i + 3
			spc[k] = splat32("spc"+strconv.Itoa(k), c)
		}
	}
	lanes := strconv.Itoa(w.lanes)

	text(name("softplus"), "func(d, x *float32, n int) int")
	a.Comment(name("softplus")+" computes softplus32 = max(x, 0) + log1pUnit32(e^-|x|) on blocks of "+lanes,
		"while every |x| ≤ 87 (e^-|x| as in sigmoid) and returns how many elements it",
		"wrote: a multiple of "+lanes+", stopping at the first block holding a larger |x| or a NaN,",
		"or at the last full block. The operations and their order are those of the",
		"scalar code, so results match bit for bit.")
	a.Load(a.Param("d"), RDI)
	a.Load(a.Param("x"), RSI)
	a.Load(a.Param("n"), RCX)
	a.XORQ(RAX, RAX)
	guardedLoop(label("sploop"), label("spdone"), sglim, RDX, func() {
		expNegAbs()
		a.Comment("d = 2+e, s = e/d, r = (2−d)+e, s2 = s·s, c = s·(1−s)·r, t = s+s")
		vadd(thtwo, v(4), v(6))
		vdiv(v(6), v(4), v(7))
		vconst(thtwo, v(12))
		vsub(v(6), v(12), v(12))
		vadd(v(4), v(12), v(12))
		vmul(v(7), v(7), v(8))
		vconst(sgone, v(13))
		vsub(v(7), v(13), v(13))
		vmul(v(13), v(7), v(13))
		vmul(v(12), v(13), v(13))
		vadd(v(7), v(7), v(7))

		a.Comment("q = ((((((c15·s2+c13)·s2+c11)·s2+c9)·s2+c7)·s2+c5)·s2 + c3")
		vconst(spc[15], v(9))
		horner(v(8), v(9), spc[13], spc[11], spc[9], spc[7], spc[5], spc[3])

		a.Comment("log1p(e) = t + ((t·s2)·q − c); result max(x, 0) + log1p(e)")
		vmul(v(8), v(7), v(10))
		vmul(v(9), v(10), v(10))
		vsub(v(13), v(10), v(10))
		vadd(v(10), v(7), v(10))
		vxor(v(11), v(11), v(11))
		vmax(v(11), v(0), v(11))
		vadd(v(10), v(11), v(11))
		a.VMOVUPS(v(11), at(RDI, 4, 0))
	})
	done(label("spdone"))
}

// expShiftKernel emits expShift at the current width, the exponentials of
// a softmax row, and with sum set expShiftSum, which also adds each block
// of results into the eight float32 partial sums at acc (sum8's order: at
// AVX-512 the low eight lanes, then the high eight).
func expShiftKernel(sum bool) {
	lanes := strconv.Itoa(w.lanes)
	base, sig := "expShift", "func(d, x *float32, n int, m float32) int"
	if sum {
		base, sig = "expShiftSum", "func(d, x *float32, n int, m float32, acc *float32) int"
	}
	text(name(base), sig)
	a.Comment(name(base)+" sets d[i] = exp32Core(x[i] − m) on blocks of "+lanes+" while every",
		"|x[i] − m| ≤ 87 (where the scalar code, expShift32, inlines exp32Core) and returns",
		"how many elements it wrote: a multiple of "+lanes+", stopping at the first block out of",
		"that range or holding a NaN, or at the last full block.")
	if sum {
		a.Comment("It adds d[i] to acc[i mod 8] in order of i.")
	}
	a.Load(a.Param("d"), RDI)
	a.Load(a.Param("x"), RSI)
	a.Load(a.Param("n"), RCX)
	a.Load(a.Param("m"), X9)
	a.VBROADCASTSS(X9, v(9))
	if sum {
		a.Load(a.Param("acc"), R8)
		a.VMOVUPS(Mem{Base: R8}, Y10)
	}
	a.XORQ(RAX, RAX)
	loop, exit := label(base+"loop"), label(base+"done")
	if !sum {
		loop, exit = label("esloop"), label("esdone")
	}
	a.Label(loop)
	a.LEAQ(Mem{Base: RAX, Disp: w.lanes}, RDX)
	a.CMPQ(RDX, RCX)
	a.JGT(LabelRef(exit))
	a.VMOVUPS(at(RSI, 4, 0), v(0))
	vsub(v(9), v(0), v(0))
	vand(sgabs, v(0), v(1))
	allLanes(sglim, v(1), v(2), exit)
	exp32Core(v(0))
	a.VMOVUPS(v(4), at(RDI, 4, 0))
	if sum {
		a.VADDPS(Y4, Y10, Y10)
		if w.wide {
			a.VEXTRACTF64X4(U8(1), Z4, Y11)
			a.VADDPS(Y11, Y10, Y10)
		}
	}
	a.ADDQ(U32(w.lanes), RAX)
	a.JMP(LabelRef(loop))
	if sum {
		a.Label(exit)
		a.VMOVUPS(Y10, Mem{Base: R8})
		a.VZEROUPPER()
		a.Store(RAX, a.ReturnIndex(0))
		a.RET()
		return
	}
	done(exit)
}

// maxKernel emits maxAVX2F32, the vector pass of tensor's max8: running
// maxima of eight lanes, and a flag for any NaN, whose row the Go code
// then scans itself.
func maxKernel() {
	text("maxAVX2F32", "func(x *float32, n int, acc *float32) int")
	a.Comment("maxAVX2F32 sets acc[j] to the largest of acc[j] and x[i] for i ≡ j (mod 8), i",
		"below n rounded down to 8, and returns that count, or −1 if one of them is NaN",
		"(acc is then unspecified). Which of ±0 it keeps is unspecified.")
	a.Load(a.Param("x"), RSI)
	a.Load(a.Param("n"), RCX)
	a.Load(a.Param("acc"), RDI)
	a.VMOVUPS(Mem{Base: RDI}, Y0)
	a.VXORPS(Y1, Y1, Y1)
	a.XORQ(RAX, RAX)
	loop, exit, ok := "mxloop", "mxexit", "mxdone"
	a.Label(loop)
	a.LEAQ(Mem{Base: RAX, Disp: 8}, RDX)
	a.CMPQ(RDX, RCX)
	a.JGT(LabelRef(exit))
	a.VMOVUPS(at(RSI, 4, 0), Y2)
	a.VCMPPS(U8(3), Y2, Y2, Y3) // unordered: NaN
	a.VORPS(Y3, Y1, Y1)
	a.VMAXPS(Y2, Y0, Y0)
	a.ADDQ(U32(8), RAX)
	a.JMP(LabelRef(loop))
	a.Label(exit)
	a.VMOVUPS(Y0, Mem{Base: RDI})
	a.VMOVMSKPS(Y1, EBX)
	a.TESTL(EBX, EBX)
	a.JZ(LabelRef(ok))
	a.MOVQ(I32(-1), RAX)
	done(ok)
}

// tanhGradKernel emits tanhGrad at the current width: d = v·(1 − y·y),
// tanh's derivative rule given its output y, the operations of tanhGrad
// (tensor/activation.go) in their order. Every input is valid, so the loop
// runs over every full block.
func tanhGradKernel() {
	lanes := strconv.Itoa(w.lanes)
	text(name("tanhGrad"), "func(d, v, y *float32, n int) int")
	a.Comment(name("tanhGrad")+" sets d[i] = v[i]·(1 − y[i]·y[i]) for i below n rounded down to "+lanes,
		"and returns that count.")
	a.Load(a.Param("d"), RDI)
	a.Load(a.Param("v"), RDX)
	a.Load(a.Param("y"), RSI)
	a.Load(a.Param("n"), RCX)
	a.XORQ(RAX, RAX)
	vconst(sgone, v(3))
	loop, exit := label("tgloop"), label("tgdone")
	a.Label(loop)
	a.LEAQ(Mem{Base: RAX, Disp: w.lanes}, RBX)
	a.CMPQ(RBX, RCX)
	a.JGT(LabelRef(exit))
	a.VMOVUPS(at(RSI, 4, 0), v(0))
	vmul(v(0), v(0), v(0))
	vsub(v(0), v(3), v(1))
	vmul(at(RDX, 4, 0), v(1), v(1))
	a.VMOVUPS(v(1), at(RDI, 4, 0))
	a.ADDQ(U32(w.lanes), RAX)
	a.JMP(LabelRef(loop))
	done(exit)
}

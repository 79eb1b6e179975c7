package main

import (
	"fmt"
	"strconv"

	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// exp64Kernel emits expAVX2F64: exp64Core (tensor/unary.go) on blocks of
// 4 float64, two blocks per iteration while 8 remain.
func exp64Kernel() {
	lo := splat64("e64lo", -708)
	hi := splat64("e64hi", 709)
	log2e := splat64("e64log2e", 1.44269504088896338700e+00)
	round := splat64("e64round", 0x1.8p52)
	ln2hi := splat64("e64ln2hi", 6.93147180369123816490e-01)
	ln2lo := splat64("e64ln2lo", 1.90821492927058770002e-10)
	var p [6]Mem
	for i, c := range []float64{1.66666666666666657415e-01, -2.77777777770155933842e-03,
		6.61375632143793436117e-05, -1.65339022054652515390e-06, 4.13813679705723846039e-08} {
		p[i+1] = splat64("e64p"+strconv.Itoa(i+1), c)
	}
	two := splat64("e64two", 2)

	text("expAVX2F64", "func(d, x *float64, n int) int")
	a.Comment("expAVX2F64 computes exp64Core on blocks of 4 while every x is in [-708, 709] and",
		"returns how many elements it wrote: a multiple of 4, stopping at the first block",
		"holding an x outside that range or a NaN, or at the last full block. Every lane",
		"performs exp64Core's IEEE operations in the same order with the same constants",
		"(no FMA), so results match it bit for bit.",
		"k = round(x·log2e) comes from adding and subtracting 1.5·2⁵², which leaves k in",
		"the low mantissa bits of t = x·log2e + 1.5·2⁵²; shifting t's bits left by 52",
		"puts k in the exponent field, and a 64-bit integer add scales y by 2ᵏ. That",
		"needs no int64↔double conversion (AVX2 has none).",
		"",
		"The main loop interleaves two independent blocks (Y0–Y6 and Y7–Y13) so the long",
		"dependency chain of one (a division in it) overlaps the other; a block of 4 is",
		"done alone when fewer than 8 remain or the pair holds a bad argument. Per block:",
		"x, t, k, hi, lo, r, s in the seven registers, p and c reuse x's, r·c and the",
		"quotient k's, 2 − c s's. Y14 = 1, Y15 = 2.")
	a.Load(a.Param("d"), RDI)
	a.Load(a.Param("x"), RSI)
	a.Load(a.Param("n"), RCX)
	a.XORQ(RAX, RAX)
	a.VMOVUPD(f64.one, Y14)
	a.VMOVUPD(two, Y15)

	// The body for one block; y[0..6] are x, t, k, hi, lo, r, s.
	const x, t, k, h, l, r, s = 0, 1, 2, 3, 4, 5, 6
	body := []func(block){
		func(b block) { a.VMULPD(log2e, b.y[x], b.y[t]) },
		func(b block) { a.VADDPD(round, b.y[t], b.y[t]) },
		func(b block) { a.VSUBPD(round, b.y[t], b.y[k]) },
		func(b block) { a.VMULPD(ln2hi, b.y[k], b.y[h]) },
		func(b block) { a.VSUBPD(b.y[h], b.y[x], b.y[h]) },
		func(b block) { a.VMULPD(ln2lo, b.y[k], b.y[l]) },
		func(b block) { a.VSUBPD(b.y[l], b.y[h], b.y[r]) },
		func(b block) { a.VMULPD(b.y[r], b.y[r], b.y[s]) },
		func(b block) { a.VMULPD(p[5], b.y[s], b.y[x]) },
	}
	for _, c := range []Mem{p[4], p[3], p[2], p[1]} {
		body = append(body,
			func(b block) { a.VADDPD(c, b.y[x], b.y[x]) },
			func(b block) { a.VMULPD(b.y[x], b.y[s], b.y[x]) })
	}
	body = append(body,
		func(b block) { a.VSUBPD(b.y[x], b.y[r], b.y[x]) },
		func(b block) { a.VMULPD(b.y[x], b.y[r], b.y[k]) },
		func(b block) { a.VSUBPD(b.y[x], Y15, b.y[s]) },
		func(b block) { a.VDIVPD(b.y[s], b.y[k], b.y[k]) },
		func(b block) { a.VSUBPD(b.y[k], b.y[l], b.y[k]) },
		func(b block) { a.VSUBPD(b.y[h], b.y[k], b.y[k]) },
		func(b block) { a.VSUBPD(b.y[k], Y14, b.y[k]) },
		func(b block) { a.VPSLLQ(U8(52), b.y[t], b.y[t]) },
		func(b block) { a.VPADDQ(b.y[t], b.y[k], b.y[k]) },
		func(b block) { a.VMOVUPD(b.y[k], at(RDI, 8, b.off)) },
	)
	// inRange sets y[t] to the lanes of y[x] in [lo, hi], using y[k].
	inRange := func(b block) {
		a.VCMPPD(U8(13), lo, b.y[x], b.y[t])
		a.VCMPPD(U8(2), hi, b.y[x], b.y[k])
	}

	a.Label("e64loop8")
	a.LEAQ(Mem{Base: RAX, Disp: 8}, RDX)
	a.CMPQ(RDX, RCX)
	a.JGT(LabelRef("e64loop4"))
	two4 := blocks(2, 7)
	unrolled(two4, func(b block) { a.VMOVUPD(at(RSI, 8, b.off), b.y[x]) }, inRange)
	unrolled(two4, func(b block) { a.VANDPD(b.y[t], b.y[k], b.y[t]) })
	a.VANDPD(Y1, Y8, Y1)
	a.VMOVMSKPD(Y1, EBX)
	a.CMPL(EBX, U32(0xf))
	a.JNE(LabelRef("e64loop4"))
	a.Comment("t = x·log2e + round; k = t − round; hi = x − k·ln2hi; lo = k·ln2lo;",
		"r = hi − lo; s = r·r; p = (((s·p5+p4)·s+p3)·s+p2)·s+p1; c = r − s·p;",
		"y = 1 − ((lo − (r·c)/(2 − c)) − hi); y·2ᵏ by adding t's bits << 52.")
	unrolled(two4, body...)
	a.ADDQ(U32(8), RAX)
	a.JMP(LabelRef("e64loop8"))

	a.Label("e64loop4")
	a.LEAQ(Mem{Base: RAX, Disp: 4}, RDX)
	a.CMPQ(RDX, RCX)
	a.JGT(LabelRef("e64done"))
	one := blocks(1, 7)
	unrolled(one, func(b block) { a.VMOVUPD(at(RSI, 8, b.off), b.y[x]) }, inRange)
	a.VANDPD(Y1, Y2, Y1)
	a.VMOVMSKPD(Y1, EBX)
	a.CMPL(EBX, U32(0xf))
	a.JNE(LabelRef("e64done"))
	unrolled(one, body...)
	a.ADDQ(U32(4), RAX)
	a.JMP(LabelRef("e64loop8"))
	done("e64done")
}

// rotKernel emits rotAVX2F64, two blocks of 4 per iteration, then one.
func rotKernel() {
	text("rotAVX2F64", "func(zi, zj *float64, n int, c, s float64) int")
	a.Comment("rotAVX2F64 applies the plane rotation zj ← s·zi + c·zj, zi ← c·zi − s·zj (old zj)",
		"to i below n rounded down to 4 and returns that count. Each lane does the IEEE",
		"operations of rotBlocks' scalar loop (no FMA), so the results are the same bit",
		"for bit. Y14 = c, Y15 = s.")
	a.Load(a.Param("zi"), RSI)
	a.Load(a.Param("zj"), RDI)
	a.Load(a.Param("n"), RCX)
	a.VBROADCASTSD(addr(a.Param("c")), Y14)
	a.VBROADCASTSD(addr(a.Param("s")), Y15)
	a.XORQ(RAX, RAX)
	// Per block: zi, zj, s·zi + c·zj (and its c·zj), c·zi − s·zj (and its s·zj).
	const zi, zj, p, q, u, w = 0, 1, 2, 3, 4, 5
	body := func(bs []block) {
		unrolled(bs,
			func(b block) {
				a.VMOVUPD(at(RSI, 8, b.off), b.y[zi])
				a.VMOVUPD(at(RDI, 8, b.off), b.y[zj])
			},
			func(b block) {
				a.VMULPD(b.y[zi], Y15, b.y[p])
				a.VMULPD(b.y[zj], Y14, b.y[q])
			},
			func(b block) { a.VADDPD(b.y[q], b.y[p], b.y[p]) },
			func(b block) {
				a.VMULPD(b.y[zi], Y14, b.y[u])
				a.VMULPD(b.y[zj], Y15, b.y[w])
			},
			func(b block) { a.VSUBPD(b.y[w], b.y[u], b.y[u]) },
			func(b block) {
				a.VMOVUPD(b.y[p], at(RDI, 8, b.off))
				a.VMOVUPD(b.y[u], at(RSI, 8, b.off))
			})
	}
	countedLoop("rotavx2f64loop8", "rotavx2f64one", 8, func() { body(blocks(2, 6)) })
	a.Label("rotavx2f64one")
	countedLoop("rotavx2f64loop4", "rotavx2f64done", 4, func() { body(blocks(1, 6)) })
	done("rotavx2f64done")
}

// columnOps holds the instructions of the four-column kernels for one
// dtype: packed float64 on four lanes, or (f32) float32 on eight.
type columnOps struct {
	suffix, typ                    string
	elem                           uint8
	lanes                          int
	fma, mul, add, mov, xor, bcast func(...Op)
}

func columnOpsFor(f32 bool) columnOps {
	if f32 {
		return columnOps{suffix: "F32", typ: "float32", elem: 4, lanes: 8,
			fma: a.VFMADD231PS, mul: a.VMULPS, add: a.VADDPS, mov: a.VMOVUPS, xor: a.VXORPS, bcast: a.VBROADCASTSS}
	}
	return columnOps{suffix: "F64", typ: "float64", elem: 8, lanes: 4,
		fma: a.VFMADD231PD, mul: a.VMULPD, add: a.VADDPD, mov: a.VMOVUPD, xor: a.VXORPD, bcast: a.VBROADCASTSD}
}

// fourColumns turns the element stride in R8 into bytes and points R9,
// R10 and R11 at the second to fourth columns of the one at RSI; it
// returns the four base registers.
func fourColumns(o columnOps) []Register {
	if o.elem == 4 {
		a.SHLQ(U8(2), R8)
	} else {
		a.SHLQ(U8(3), R8)
	}
	a.LEAQ(Mem{Base: RSI, Index: R8, Scale: 1}, R9)
	a.LEAQ(Mem{Base: R9, Index: R8, Scale: 1}, R10)
	a.LEAQ(Mem{Base: R10, Index: R8, Scale: 1}, R11)
	return []Register{RSI, R9, R10, R11}
}

// colsKernels emits the two halves of symvKernel's loop as kernels of
// their own, for passes that need only one: dotColsAVX2F64 accumulates
// the four columns' dot products with x (two vectors of each in flight,
// so that eight FMA chains hide the instruction's latency), and
// axpyColsAVX2F64 updates y with the columns' combination, in the
// instructions (so the bits) of symvKernel's update. With f32 they are
// the float32 forms on eight lanes.
func colsKernels(f32 bool) {
	o := columnOpsFor(f32)
	suffix, elem, lanes, typ := o.suffix, o.elem, o.lanes, o.typ
	fma, mul, add, mov, xor, bcast := o.fma, o.mul, o.add, o.mov, o.xor, o.bcast
	label := "cols" + suffix
	var base []Register
	prologue := func() {
		a.Load(a.Param("a"), RSI)
		a.Load(a.Param("lda"), R8)
		a.Load(a.Param("n"), RCX)
		base = fourColumns(o)
		a.XORQ(RAX, RAX)
	}

	name := "dotColsAVX2" + suffix
	text(name, "func(a *"+typ+", lda int, x *"+typ+", n int, dots *"+typ+") int")
	a.Comment(name+" reads the four columns a[k·lda : k·lda+n] (k < 4) for i below n",
		fmt.Sprintf("rounded down to %d and accumulates the lanes of Σᵢ a[k·lda+i]·x[i] into", lanes),
		fmt.Sprintf("dots[%dk : %dk+%d] (overwritten; the caller adds the lanes); it returns the count", lanes, lanes, lanes),
		"of rows done.")
	prologue()
	a.Load(a.Param("x"), RDI)
	acc := []VecPhysical{Y0, Y1, Y2, Y3}
	acc2 := []VecPhysical{Y4, Y5, Y6, Y7}
	col := []VecPhysical{Y10, Y11, Y12, Y13}
	for k := 0; k < 4; k++ {
		xor(acc[k], acc[k], acc[k])
		xor(acc2[k], acc2[k], acc2[k])
	}
	countedLoop(label+"dotloop"+fmt.Sprint(2*lanes), label+"dotone", 2*lanes, func() {
		mov(at(RDI, elem, 0), Y8)
		mov(at(RDI, elem, 32), Y9)
		for k := 0; k < 4; k++ {
			mov(at(base[k], elem, 0), col[k])
			fma(col[k], Y8, acc[k])
		}
		for k := 0; k < 4; k++ {
			mov(at(base[k], elem, 32), col[k])
			fma(col[k], Y9, acc2[k])
		}
	})
	a.Label(label + "dotone")
	countedLoop(label+"dotloop"+fmt.Sprint(lanes), label+"dotdone", lanes, func() {
		mov(at(RDI, elem, 0), Y8)
		for k := 0; k < 4; k++ {
			mov(at(base[k], elem, 0), col[k])
			fma(col[k], Y8, acc[k])
		}
	})
	a.Label(label + "dotdone")
	a.Load(a.Param("dots"), R12)
	for k := 0; k < 4; k++ {
		add(acc2[k], acc[k], acc[k])
		mov(acc[k], Mem{Base: R12, Disp: 32 * k})
	}
	a.VZEROUPPER()
	a.Store(RAX, a.ReturnIndex(0))
	a.RET()

	name = "axpyColsAVX2" + suffix
	text(name, "func(a *"+typ+", lda int, y *"+typ+", n int, alpha *"+typ+") int")
	a.Comment(name+" reads the four columns a[k·lda : k·lda+n] (k < 4) for i below n",
		fmt.Sprintf("rounded down to %d and sets y[i] += Σₖ alpha[k]·a[k·lda+i], as symvCols%s does;", lanes, suffix),
		"it returns the count of rows done.")
	prologue()
	a.Load(a.Param("y"), RDX)
	a.Load(a.Param("alpha"), R12)
	alpha := []VecPhysical{Y4, Y5, Y6, Y7}
	for k := 0; k < 4; k++ {
		bcast(Mem{Base: R12, Disp: int(elem) * k}, alpha[k])
	}
	countedLoop(label+"axpyloop"+fmt.Sprint(lanes), label+"axpydone", lanes, func() {
		for k := 0; k < 4; k++ {
			mov(at(base[k], elem, 0), col[k])
		}
		mul(col[0], alpha[0], Y9)
		mul(col[2], alpha[2], Y14)
		fma(col[1], alpha[1], Y9)
		fma(col[3], alpha[3], Y14)
		add(Y14, Y9, Y9)
		add(at(RDX, elem, 0), Y9, Y9)
		mov(Y9, at(RDX, elem, 0))
	})
	done(label + "axpydone")
}

// symvKernel emits symvColsAVX2F64, the inner loop of the lower symmetric
// matrix-vector product: four columns are read once, each both as a row
// (a dot product with x) and as a column (an update of y). Unlike the
// elementwise kernels it uses FMA and its own summation order: no scalar
// loop is meant to match it bit for bit. With f32 it emits the float32
// form, symvColsAVX2F32: the same instructions on eight lanes.
func symvKernel(f32 bool) {
	o := columnOpsFor(f32)
	name, elem, lanes, label, typ := "symvColsAVX2F64", o.elem, o.lanes, "symv", o.typ
	if f32 {
		name, label = "symvColsAVX2F32", "symvf32"
	}
	fma, mul, add, mov, xor, bcast := o.fma, o.mul, o.add, o.mov, o.xor, o.bcast
	text(name, "func(a *"+typ+", lda int, x, y *"+typ+", n int, alpha, dots *"+typ+") int")
	a.Comment(name+" reads the four columns a[k·lda : k·lda+n] (k < 4) for i below n",
		fmt.Sprintf("rounded down to %d: it sets y[i] += Σₖ alpha[k]·a[k·lda+i], accumulates the lanes of", lanes),
		fmt.Sprintf("Σᵢ a[k·lda+i]·x[i] into dots[%dk : %dk+%d] (overwritten; the caller adds the lanes) and", lanes, lanes, lanes),
		"returns the count of rows done.")
	a.Load(a.Param("a"), RSI)
	a.Load(a.Param("lda"), R8)
	a.Load(a.Param("x"), RDI)
	a.Load(a.Param("y"), RDX)
	a.Load(a.Param("n"), RCX)
	a.Load(a.Param("alpha"), R12)
	base := fourColumns(o)
	acc := []VecPhysical{Y0, Y1, Y2, Y3}
	alpha := []VecPhysical{Y4, Y5, Y6, Y7}
	col := []VecPhysical{Y10, Y11, Y12, Y13}
	for k := 0; k < 4; k++ {
		xor(acc[k], acc[k], acc[k])
		bcast(Mem{Base: R12, Disp: int(elem) * k}, alpha[k])
	}
	a.XORQ(RAX, RAX)
	countedLoop(label+"loop"+fmt.Sprint(lanes), label+"done", lanes, func() {
		mov(at(RDI, elem, 0), Y8)
		for k := 0; k < 4; k++ {
			mov(at(base[k], elem, 0), col[k])
		}
		for k := 0; k < 4; k++ {
			fma(col[k], Y8, acc[k])
		}
		mul(col[0], alpha[0], Y9)
		mul(col[2], alpha[2], Y14)
		fma(col[1], alpha[1], Y9)
		fma(col[3], alpha[3], Y14)
		add(Y14, Y9, Y9)
		add(at(RDX, elem, 0), Y9, Y9)
		mov(Y9, at(RDX, elem, 0))
	})
	a.Label(label + "done")
	a.Load(a.Param("dots"), R12)
	for k := 0; k < 4; k++ {
		mov(acc[k], Mem{Base: R12, Disp: 32 * k})
	}
	a.VZEROUPPER()
	a.Store(RAX, a.ReturnIndex(0))
	a.RET()
}

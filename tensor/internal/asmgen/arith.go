package main

import (
	"strconv"
	"strings"

	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// width is what differs between the float32 and float64 forms of a
// kernel: the element size and the packed-single or packed-double opcodes.
type width struct {
	suffix                  string // of the kernel's name: F32 or F64
	elem                    uint8  // bytes per element
	lanes                   int    // elements per Y register
	add, sub, mul, max, xor func(a, b, c Op)
	cmp, blendv             func(a, b, c, d Op)
	one, negOne             Mem
}

var f32 = width{
	suffix: "F32", elem: 4, lanes: 8,
	add: vop(a.VADDPS), sub: vop(a.VSUBPS), mul: vop(a.VMULPS), max: vop(a.VMAXPS), xor: vop(a.VXORPS),
	cmp: vop4(a.VCMPPS), blendv: a.VBLENDVPS,
}

var f64 = width{
	suffix: "F64", elem: 8, lanes: 4,
	add: vop(a.VADDPD), sub: vop(a.VSUBPD), mul: vop(a.VMULPD), max: vop(a.VMAXPD), xor: vop(a.VXORPD),
	cmp: vop4(a.VCMPPD), blendv: a.VBLENDVPD,
}

// vop and vop4 adapt avo's variadic instruction builders.
func vop(f func(...Op)) func(a, b, c Op)     { return func(a, b, c Op) { f(a, b, c) } }
func vop4(f func(...Op)) func(a, b, c, d Op) { return func(a, b, c, d Op) { f(a, b, c, d) } }

// binaryKernels emits d[i] = x[i] op y[i] for add, mul and sub in float32
// and float64: four vectors per iteration, then one at a time.
func binaryKernels() {
	for _, w := range []*width{&f32, &f64} {
		for _, op := range []struct {
			name string
			emit func(a, b, c Op)
		}{{"add", w.add}, {"mul", w.mul}, {"sub", w.sub}} {
			name := op.name + "AVX2" + w.suffix
			lbl := strings.ToLower(name)
			textPointers(name, "d", "x", "y")
			a.Comment(name+" sets d[i] = x[i] "+op.name+" y[i] for i below n rounded down to "+strconv.Itoa(w.lanes)+" and",
				"returns that count. Each lane is one IEEE operation, as in the Go loop.")
			loadPointer("d", RDI)
			loadPointer("x", RSI)
			loadPointer("y", RDX)
			a.Load(a.Param("n"), RCX)
			a.XORQ(RAX, RAX)
			body := func(bs []block) {
				unrolled(bs,
					func(b block) { a.VMOVUPS(at(RSI, w.elem, b.off), b.y[0]) },
					func(b block) { op.emit(at(RDX, w.elem, b.off), b.y[0], b.y[0]) },
					func(b block) { a.VMOVUPS(b.y[0], at(RDI, w.elem, b.off)) })
			}
			countedLoop(lbl+"loop4", lbl+"one", 4*w.lanes, func() { body(blocks(4, 1)) })
			a.Label(lbl + "one")
			countedLoop(lbl+"loop1", lbl+"done", w.lanes, func() { body(blocks(1, 1)) })
			done(lbl + "done")
		}
	}
}

// reluKernels emits relu and its gradient in float32 and float64.
func reluKernels() {
	sgnegone := splat32("sgnegone", -1)
	dpone := splat64("dpone", 1)
	dpnegone := splat64("dpnegone", -1)
	f32.one, f32.negOne = sgone, sgnegone
	f64.one, f64.negOne = dpone, dpnegone

	for _, w := range []*width{&f32, &f64} {
		textPointers("reluAVX2"+w.suffix, "d", "x")
		a.Comment("reluAVX2"+w.suffix+" sets d[i] = max(x[i], 0) with Go's semantics (NaN stays NaN,",
			"−0 gives +0) for i below n rounded down to "+strconv.Itoa(w.lanes)+", and returns that count:",
			"VMAX(0, x) returns x for NaN and for ±0, and adding +0 turns −0 into +0.")
		loadPointer("d", RDI)
		loadPointer("x", RSI)
		a.Load(a.Param("n"), RCX)
		a.ANDQ(I32(-w.lanes), RCX)
		a.XORQ(RAX, RAX)
		w.xor(Y15, Y15, Y15)
		loop, exit := "relu"+w.suffix+"loop", "relu"+w.suffix+"done"
		a.Label(loop)
		a.CMPQ(RAX, RCX)
		a.JGE(LabelRef(exit))
		a.VMOVUPS(at(RSI, w.elem, 0), Y0)
		w.max(Y0, Y15, Y1)
		w.add(Y15, Y1, Y1)
		a.VMOVUPS(Y1, at(RDI, w.elem, 0))
		a.ADDQ(U32(w.lanes), RAX)
		a.JMP(LabelRef(loop))
		done(exit)

		textPointers("reluGradAVX2"+w.suffix, "d", "v", "y")
		a.Comment("reluGradAVX2"+w.suffix+" sets d[i] = v[i]·sign(y[i]) as reluGrad does (sign 1 for",
			"y > 0, −1 for y < 0, y itself for ±0 and NaN) for i below n rounded down to "+strconv.Itoa(w.lanes)+",",
			"and returns that count.")
		loadPointer("d", RDI)
		loadPointer("v", RSI)
		loadPointer("y", RDX)
		a.Load(a.Param("n"), RCX)
		a.ANDQ(I32(-w.lanes), RCX)
		a.XORQ(RAX, RAX)
		w.xor(Y15, Y15, Y15)
		a.VMOVUPS(w.one, Y14)
		a.VMOVUPS(w.negOne, Y13)
		loop, exit = "rgrad"+w.suffix+"loop", "rgrad"+w.suffix+"done"
		a.Label(loop)
		a.CMPQ(RAX, RCX)
		a.JGE(LabelRef(exit))
		a.VMOVUPS(at(RDX, w.elem, 0), Y1)
		a.Comment("y > 0 (ordered) picks 1, y < 0 picks −1, anything else keeps y")
		w.cmp(U8(30), Y15, Y1, Y2)
		w.cmp(U8(17), Y15, Y1, Y3)
		w.blendv(Y2, Y14, Y1, Y4)
		w.blendv(Y3, Y13, Y4, Y4)
		w.mul(at(RSI, w.elem, 0), Y4, Y4)
		a.VMOVUPS(Y4, at(RDI, w.elem, 0))
		a.ADDQ(U32(w.lanes), RAX)
		a.JMP(LabelRef(loop))
		done(exit)
	}
}

// leakyKernels emits leakyAVX2F32 and leakyAVX2F64, the leaky ReLU and its
// derivative rule in one form: d[i] = v[i]·(1 if x[i] > 0 else slope).
func leakyKernels() {
	for _, w := range []*width{&f32, &f64} {
		name := "leakyAVX2" + w.suffix
		textPointers(name, "d", "v", "x", "slope")
		a.Comment(name+" sets d[i] = v[i]·f with f = 1 where x[i] > 0 and f = *slope elsewhere",
			"(NaN included), as leakyFactorRun does, for i below n rounded down to "+strconv.Itoa(w.lanes)+", and",
			"returns that count. The leaky ReLU is v = x (x·1 = x exactly).")
		loadPointer("d", RDI)
		loadPointer("v", RSI)
		loadPointer("x", RDX)
		loadPointer("slope", R8)
		a.Load(a.Param("n"), RCX)
		a.ANDQ(I32(-w.lanes), RCX)
		a.XORQ(RAX, RAX)
		w.xor(Y15, Y15, Y15)
		a.VMOVUPS(w.one, Y14)
		if w.elem == 4 {
			a.VBROADCASTSS(Mem{Base: R8}, Y13)
		} else {
			a.VBROADCASTSD(Mem{Base: R8}, Y13)
		}
		loop, exit := "leaky"+w.suffix+"loop", "leaky"+w.suffix+"done"
		a.Label(loop)
		a.CMPQ(RAX, RCX)
		a.JGE(LabelRef(exit))
		a.VMOVUPS(at(RDX, w.elem, 0), Y1)
		a.Comment("x > 0 (ordered) picks 1, anything else the slope")
		w.cmp(U8(30), Y15, Y1, Y2)
		w.blendv(Y2, Y14, Y13, Y4)
		w.mul(at(RSI, w.elem, 0), Y4, Y4)
		a.VMOVUPS(Y4, at(RDI, w.elem, 0))
		a.ADDQ(U32(w.lanes), RAX)
		a.JMP(LabelRef(loop))
		done(exit)
	}
}

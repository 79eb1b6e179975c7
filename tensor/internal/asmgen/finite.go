package main

import (
	"strconv"

	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// finiteKernels emits finiteAVX2F32 and finiteAVX2F64, the vector pass of
// tensor's nonFinite: it sums x − x (0 for finite x, NaN for NaN and ±Inf)
// into four accumulators and tests the total once at the end, so the loop
// has no branch on the data.
func finiteKernels() {
	for _, w := range []*width{&f32, &f64} {
		name := "finiteAVX2" + w.suffix
		step := 4 * w.lanes
		textPointers(name, "x")
		a.Comment(name+" checks x[i] for i below n rounded down to "+strconv.Itoa(step)+" and returns that",
			"count when every one is finite, −1 when one is NaN or ±Inf.")
		loadPointer("x", RSI)
		a.Load(a.Param("n"), RCX)
		a.ANDQ(I32(-step), RCX)
		a.XORQ(RAX, RAX)
		acc := []VecPhysical{Y0, Y1, Y2, Y3}
		tmp := []VecPhysical{Y4, Y5, Y6, Y7}
		for _, r := range acc {
			w.xor(r, r, r)
		}
		loop, exit, ok := "fin"+w.suffix+"loop", "fin"+w.suffix+"sum", "fin"+w.suffix+"done"
		a.Label(loop)
		a.CMPQ(RAX, RCX)
		a.JGE(LabelRef(exit))
		for i := range acc {
			a.VMOVUPS(at(RSI, w.elem, 32*i), tmp[i])
		}
		for i := range acc {
			w.sub(tmp[i], tmp[i], tmp[i])
		}
		for i := range acc {
			w.add(tmp[i], acc[i], acc[i])
		}
		a.ADDQ(U32(step), RAX)
		a.JMP(LabelRef(loop))
		a.Label(exit)
		w.add(Y1, Y0, Y0)
		w.add(Y3, Y2, Y2)
		w.add(Y2, Y0, Y0)
		w.xor(Y1, Y1, Y1)
		a.Comment("every lane of the total == 0 (ordered: NaN compares false)")
		w.cmp(U8(0), Y1, Y0, Y0)
		mask := 0xff
		if w.elem == 8 {
			a.VMOVMSKPD(Y0, EBX)
			mask = 0xf
		} else {
			a.VMOVMSKPS(Y0, EBX)
		}
		a.CMPL(EBX, U32(mask))
		a.JE(LabelRef(ok))
		a.MOVQ(I32(-1), RAX)
		done(ok)
	}
}

package main

import (
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The float32 transcendental kernels (exp32.go, gelu.go) are written once
// and emitted at two widths: AVX2 (eight lanes in Y registers, the
// hand-written file's code, instruction for instruction) and AVX-512
// (sixteen lanes in Z registers). At AVX-512, constants are broadcast
// from the first lane of their 32-byte data, the bitwise operations are
// the integer ones of AVX-512F (VPANDD, VPXORD; VANDPS needs AVX512DQ),
// and blends select through a mask register. Each lane performs the same
// IEEE operations in the same order at either width, so both match the
// scalar code bit for bit.

// width32 is one vector width of the float32 kernels.
type width32 struct {
	suffix string // of the kernels' names
	lanes  int    // float32 lanes per register
	regs   [16]VecPhysical
	wide   bool // AVX-512
}

var (
	avx2   = &width32{suffix: "AVX2", lanes: 8, regs: [16]VecPhysical{Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15}}
	avx512 = &width32{suffix: "AVX512", lanes: 16, regs: [16]VecPhysical{Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15}, wide: true}
	// w is the width being emitted.
	w = avx2
)

// v returns vector register i at the current width.
func v(i int) VecPhysical { return w.regs[i] }

// isConst reports whether op is a read-only constant (splat32), which the
// AVX-512 forms broadcast from its first lane.
func isConst(op Op) bool {
	m, ok := op.(Mem)
	return ok && m.Symbol.Name != ""
}

// arith emits the three-operand instruction plain (x op y into d), or at
// AVX-512 with a constant x its broadcasting form bcst.
func arith(plain, bcst func(...Op), x, y, d Op) {
	if w.wide && isConst(x) {
		bcst(x, y, d)
		return
	}
	plain(x, y, d)
}

func vmul(x, y, d Op) { arith(a.VMULPS, a.VMULPS_BCST, x, y, d) }
func vadd(x, y, d Op) { arith(a.VADDPS, a.VADDPS_BCST, x, y, d) }
func vsub(x, y, d Op) { arith(a.VSUBPS, a.VSUBPS_BCST, x, y, d) }
func vdiv(x, y, d Op) { arith(a.VDIVPS, a.VDIVPS_BCST, x, y, d) }
func vmax(x, y, d Op) { arith(a.VMAXPS, a.VMAXPS_BCST, x, y, d) }
func vmin(x, y, d Op) { arith(a.VMINPS, a.VMINPS_BCST, x, y, d) }

func vpaddd(x, y, d Op) { arith(a.VPADDD, a.VPADDD_BCST, x, y, d) }

func vand(x, y, d Op) {
	if w.wide {
		arith(a.VPANDD, a.VPANDD_BCST, x, y, d)
		return
	}
	a.VANDPS(x, y, d)
}

func vxor(x, y, d Op) {
	if w.wide {
		arith(a.VPXORD, a.VPXORD_BCST, x, y, d)
		return
	}
	a.VXORPS(x, y, d)
}

// vconst loads constant c into every lane of d.
func vconst(c Mem, d VecPhysical) {
	if w.wide {
		a.VBROADCASTSS(c, d)
		return
	}
	a.VMOVUPS(c, d)
}

// blendSign sets d to set in the lanes where m has its sign bit set and
// to clear elsewhere.
func blendSign(m, set, clear, d VecPhysical) {
	if w.wide {
		a.VPTESTMD_BCST(sgsign, m, K1)
		a.VBLENDMPS(set, clear, K1, d)
		return
	}
	a.VBLENDVPS(m, set, clear, d)
}

// blendCmp sets d to set in the lanes where x compares to the constant c
// by predicate pred (VCMPPS's), to clear elsewhere; tmp is scratch at
// AVX2.
func blendCmp(pred U8, c Mem, x, set, clear, d, tmp VecPhysical) {
	if w.wide {
		a.VCMPPS_BCST(pred, c, x, K1)
		a.VBLENDMPS(set, clear, K1, d)
		return
	}
	a.VCMPPS(pred, c, x, tmp)
	a.VBLENDVPS(tmp, set, clear, d)
}

// allLanes emits a jump to exit unless x ≤ lim in every lane (ordered:
// NaN fails); tmp is scratch at AVX2.
func allLanes(lim Mem, x, tmp VecPhysical, exit string) {
	if w.wide {
		a.VCMPPS_BCST(U8(2), lim, x, K1)
		a.KMOVW(K1, EBX)
		a.CMPL(EBX, U32(0xffff))
	} else {
		a.VCMPPS(U8(2), lim, x, tmp)
		a.VMOVMSKPS(tmp, EBX)
		a.CMPL(EBX, U32(0xff))
	}
	a.JNE(LabelRef(exit))
}

// name is a kernel's name at the current width, e.g. "sigmoidAVX512".
func name(base string) string { return base + w.suffix }

// label is a label unique to the current width.
func label(base string) string {
	if w.wide {
		return base + "z"
	}
	return base
}

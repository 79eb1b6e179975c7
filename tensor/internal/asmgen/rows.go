package main

import (
	"strconv"

	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// rowKernels emits the vector passes of tensor's row reductions sum8,
// sqDev8 and dot8 and of its scaling and affine maps, in float32 and
// float64. The reductions keep the eight partial sums in lanes (one Y register of
// float32, two of float64) and add each block of eight elements to them
// in order, so every partial sum takes the scalar loop's additions in its
// order.
func rowKernels() {
	for _, w := range []*width{&f32, &f64} {
		regs := 8 / w.lanes // Y registers per block of eight elements
		acc := []VecPhysical{Y0, Y1}[:regs]
		bcast := func(m Mem, r VecPhysical) {
			if w.elem == 4 {
				a.VBROADCASTSS(m, r)
			} else {
				a.VBROADCASTSD(m, r)
			}
		}
		loadAcc := func() {
			for i, r := range acc {
				a.VMOVUPS(Mem{Base: RDI, Disp: 32 * i}, r)
			}
		}
		storeAcc := func() {
			for i, r := range acc {
				a.VMOVUPS(r, Mem{Base: RDI, Disp: 32 * i})
			}
		}

		// reduction emits one of the three reductions: the pointer
		// arguments into their registers (acc's into DI), setup, then
		// term(i, r) adding the terms of the block's i-th vector to the
		// partial sums in r.
		type arg struct {
			name string
			reg  GPPhysical
		}
		reduction := func(name string, args []arg, comment []string, setup func(), term func(i int, r VecPhysical)) {
			names := make([]string, len(args))
			for i, p := range args {
				names[i] = p.name
			}
			textPointers(name, names...)
			a.Comment(comment...)
			for _, p := range args {
				loadPointer(p.name, p.reg)
			}
			a.Load(a.Param("n"), RCX)
			a.XORQ(RAX, RAX)
			setup()
			loadAcc()
			countedLoop(name+"loop", name+"done", 8, func() {
				for i, r := range acc {
					term(i, r)
				}
			})
			a.Label(name + "done")
			storeAcc()
			done(name + "ret")
		}
		tmp := []VecPhysical{Y2, Y3}

		name := "sum8AVX2" + w.suffix
		reduction(name, []arg{{"x", RSI}, {"acc", RDI}},
			[]string{name + " adds x[i] to acc[i mod 8], in order of i, for i below n rounded down",
				"to 8, and returns that count."},
			func() {},
			func(i int, r VecPhysical) { w.add(at(RSI, w.elem, 32*i), r, r) })

		name = "sqDev8AVX2" + w.suffix
		reduction(name, []arg{{"x", RSI}, {"acc", RDI}, {"m", RDX}},
			[]string{name + " adds (x[i] − *m)² to acc[i mod 8], in order of i, for i below n",
				"rounded down to 8, and returns that count: sqDev8's operations."},
			func() { bcast(Mem{Base: RDX}, Y15) },
			func(i int, r VecPhysical) {
				a.VMOVUPS(at(RSI, w.elem, 32*i), tmp[i])
				w.sub(Y15, tmp[i], tmp[i])
				w.mul(tmp[i], tmp[i], tmp[i])
				w.add(tmp[i], r, r)
			})

		name = "dot8AVX2" + w.suffix
		reduction(name, []arg{{"x", RSI}, {"y", RDX}, {"acc", RDI}},
			[]string{name + " adds x[i]·y[i] (a product, then a sum) to acc[i mod 8], in order",
				"of i, for i below n rounded down to 8, and returns that count: dot8's",
				"operations."},
			func() {},
			func(i int, r VecPhysical) {
				a.VMOVUPS(at(RSI, w.elem, 32*i), tmp[i])
				w.mul(at(RDX, w.elem, 32*i), tmp[i], tmp[i])
				w.add(tmp[i], r, r)
			})

		name = "scaleAVX2" + w.suffix
		textPointers(name, "d", "x", "s")
		a.Comment(name+" sets d[i] = x[i]·*s for i below n rounded down to "+strconv.Itoa(w.lanes)+", and",
			"returns that count.")
		loadPointer("d", RDI)
		loadPointer("x", RSI)
		loadPointer("s", RDX)
		a.Load(a.Param("n"), RCX)
		a.XORQ(RAX, RAX)
		bcast(Mem{Base: RDX}, Y14)
		scale := func(bs []block) {
			unrolled(bs,
				func(b block) { w.mul(at(RSI, w.elem, b.off), Y14, b.y[0]) },
				func(b block) { a.VMOVUPS(b.y[0], at(RDI, w.elem, b.off)) })
		}
		countedLoop(name+"loop4", name+"one", 4*w.lanes, func() { scale(blocks(4, 1)) })
		a.Label(name + "one")
		countedLoop(name+"loop1", name+"done", w.lanes, func() { scale(blocks(1, 1)) })
		done(name + "done")

		name = "affineAVX2" + w.suffix
		textPointers(name, "d", "x", "sb")
		a.Comment(name+" sets d[i] = x[i]·sb[0] + sb[1] (a product, then a sum) for i below n",
			"rounded down to "+strconv.Itoa(w.lanes)+", and returns that count.")
		loadPointer("d", RDI)
		loadPointer("x", RSI)
		loadPointer("sb", RDX)
		a.Load(a.Param("n"), RCX)
		a.XORQ(RAX, RAX)
		bcast(Mem{Base: RDX}, Y14)
		bcast(Mem{Base: RDX, Disp: int(w.elem)}, Y15)
		body := func(bs []block) {
			unrolled(bs,
				func(b block) { w.mul(at(RSI, w.elem, b.off), Y14, b.y[0]) },
				func(b block) { w.add(Y15, b.y[0], b.y[0]) },
				func(b block) { a.VMOVUPS(b.y[0], at(RDI, w.elem, b.off)) })
		}
		countedLoop(name+"loop4", name+"one", 4*w.lanes, func() { body(blocks(4, 1)) })
		a.Label(name + "one")
		countedLoop(name+"loop1", name+"done", w.lanes, func() { body(blocks(1, 1)) })
		done(name + "done")
	}
}

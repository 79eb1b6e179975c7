package tensor

import (
	"fmt"
	"testing"
)

// convForward computes y = conv(x, w). For every image the im2col matrix
// (C·kh·kw, Ho·Wo) is built once in a reused buffer; group gi's rows are
// multiplied by that group's filters (og, kdim).
func convForwardOld[T Float](g *convGeom, x, w, y []T) {
	var col []T
	if !false {
		col = getBuf[T](g.c * g.kh * g.kw * g.howo)
		defer putBuf(col)
	}
	for n := 0; n < g.n; n++ {
		xn := x[n*g.c*g.hw : (n+1)*g.c*g.hw]
		if false {
			col = xn
		} else {
			im2col(g, xn, col, g.howo)
		}
		yn := y[n*g.o*g.howo : (n+1)*g.o*g.howo]
		for gi := 0; gi < g.groups; gi++ {
			convGemm(false, false, g.og, g.howo, g.kdim,
				1, w[gi*g.og*g.kdim:], g.kdim,
				col[gi*g.kdim*g.howo:], g.howo,
				0, yn[gi*g.og*g.howo:], g.howo)
		}
	}
}

// convInputGrad computes dx = convᵀ(dy) w.r.t. x: dcol = wᵀ·dy per group,
// then col2im scatters the columns back onto the image.
func convInputGradOld[T Float](g *convGeom, dy, w, dx []T) {
	var col []T
	if !false {
		col = getBuf[T](g.c * g.kh * g.kw * g.howo)
		defer putBuf(col)
	}
	for n := 0; n < g.n; n++ {
		dxn := dx[n*g.c*g.hw : (n+1)*g.c*g.hw]
		if false {
			col = dxn // GEMM writes the gradient in place
		}
		dyn := dy[n*g.o*g.howo : (n+1)*g.o*g.howo]
		for gi := 0; gi < g.groups; gi++ {
			convGemm(true, false, g.kdim, g.howo, g.og,
				1, w[gi*g.og*g.kdim:], g.kdim,
				dyn[gi*g.og*g.howo:], g.howo,
				0, col[gi*g.kdim*g.howo:], g.howo)
		}
		if !false {
			col2im(g, col, g.howo, dxn)
		}
	}
}

// convWeightGrad computes dw = Σₙ dyₙ·colₙᵀ per group, accumulating over the
// batch in the GEMM (beta = 1 after the first image).
func convWeightGradOld[T Float](g *convGeom, x, dy, dw []T) {
	if g.n == 0 {
		clear(dw)
		return
	}
	var col []T
	if !false {
		col = getBuf[T](g.c * g.kh * g.kw * g.howo)
		defer putBuf(col)
	}
	for n := 0; n < g.n; n++ {
		xn := x[n*g.c*g.hw : (n+1)*g.c*g.hw]
		if false {
			col = xn
		} else {
			im2col(g, xn, col, g.howo)
		}
		var beta T
		if n > 0 {
			beta = 1
		}
		dyn := dy[n*g.o*g.howo : (n+1)*g.o*g.howo]
		for gi := 0; gi < g.groups; gi++ {
			convGemm(false, true, g.og, g.kdim, g.howo,
				1, dyn[gi*g.og*g.howo:], g.howo,
				col[gi*g.kdim*g.howo:], g.howo,
				beta, dw[gi*g.og*g.kdim:], g.kdim)
		}
	}
}


func BenchmarkConvCmp(b *testing.B) {
	shapes := []struct{ x, w []int }{
		{[]int{64, 1, 28, 28}, []int{16, 1, 3, 3}},
		{[]int{64, 16, 14, 14}, []int{32, 16, 3, 3}},
	}
	p := ConvParams{Padding: [2]int{1, 1}}
	for _, s := range shapes {
		rng := NewRNG(1)
		x := rng.Normal(Float32, 0, 1, s.x...)
		w := rng.Normal(Float32, 0, 1, s.w...)
		g := convGeometry("x", s.x, s.w, Float32, p)
		y := New(Float32, g.outShape()...)
		dx, dw := ZerosLike(x), ZerosLike(w)
		for _, budget := range []int{0, 1 << 18} {
			name := fmt.Sprintf("%d/%d", s.x[1], budget)
			b.Run(name+"/fwd", func(b *testing.B) {
				convColBudget = budget
				for b.Loop() {
					if budget == 0 {
						convForwardOld(&g, x.f32, w.f32, y.f32)
					} else {
						convForward(&g, x.f32, w.f32, y.f32)
					}
				}
			})
			b.Run(name+"/dx", func(b *testing.B) {
				convColBudget = budget
				for b.Loop() {
					if budget == 0 {
						convInputGradOld(&g, y.f32, w.f32, dx.f32)
					} else {
						convInputGrad(&g, y.f32, w.f32, dx.f32)
					}
				}
			})
			b.Run(name+"/dw", func(b *testing.B) {
				convColBudget = budget
				for b.Loop() {
					if budget == 0 {
						convWeightGradOld(&g, x.f32, y.f32, dw.f32)
					} else {
						convWeightGrad(&g, x.f32, y.f32, dw.f32)
					}
				}
			})
		}
	}
	convColBudget = 1 << 21
}

package tensor

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// naiveConvGrads is the adjoint pair of naiveConv2D, computed in float64
// by the same loops: dx and dw for the output cotangent dy.
func naiveConvGrads(x []float64, xs []int, w []float64, ws []int, dy []float64, p ConvParams) (dx, dw []float64) {
	N, C, H, W := xs[0], xs[1], xs[2], xs[3]
	O, Cg, KH, KW := ws[0], ws[1], ws[2], ws[3]
	sh, sw := orOne(p.Stride[0]), orOne(p.Stride[1])
	dh, dwl := orOne(p.Dilation[0]), orOne(p.Dilation[1])
	ph, pw := p.Padding[0], p.Padding[1]
	Og := O / orOne(p.Groups)
	Ho := (H+2*ph-dh*(KH-1)-1)/sh + 1
	Wo := (W+2*pw-dwl*(KW-1)-1)/sw + 1
	dx, dw = make([]float64, len(x)), make([]float64, len(w))
	for n := 0; n < N; n++ {
		for o := 0; o < O; o++ {
			for oh := 0; oh < Ho; oh++ {
				for ow := 0; ow < Wo; ow++ {
					d := dy[((n*O+o)*Ho+oh)*Wo+ow]
					for c := 0; c < Cg; c++ {
						ci := o/Og*Cg + c
						for i := 0; i < KH; i++ {
							for j := 0; j < KW; j++ {
								ih, iw := oh*sh-ph+i*dh, ow*sw-pw+j*dwl
								if ih < 0 || ih >= H || iw < 0 || iw >= W {
									continue
								}
								xi, wi := ((n*C+ci)*H+ih)*W+iw, ((o*Cg+c)*KH+i)*KW+j
								dx[xi] += d * w[wi]
								dw[wi] += d * x[xi]
							}
						}
					}
				}
			}
		}
	}
	return dx, dw
}

// gridCases are unit-stride convolutions for the grid path: the two of
// the CNN benchmark (one input channel, whose weight gradient pads its 9
// rows to 12; 16 → 32 channels), no padding, dilation with uneven
// padding, groups, depthwise, a non-square kernel, and enough images for
// several image groups and partial sums.
var gridCases = []struct {
	x, w []int
	p    ConvParams
}{
	{[]int{5, 1, 28, 28}, []int{16, 1, 3, 3}, ConvParams{Padding: [2]int{1, 1}}},
	{[]int{5, 16, 14, 14}, []int{32, 16, 3, 3}, ConvParams{Padding: [2]int{1, 1}}},
	{[]int{3, 3, 7, 6}, []int{4, 3, 3, 3}, ConvParams{}},
	{[]int{2, 2, 9, 9}, []int{2, 2, 3, 3}, ConvParams{Dilation: [2]int{2, 3}, Padding: [2]int{2, 1}}},
	{[]int{4, 4, 6, 5}, []int{6, 2, 2, 3}, ConvParams{Groups: 2, Padding: [2]int{1, 0}}},
	{[]int{2, 6, 5, 5}, []int{6, 1, 3, 3}, ConvParams{Groups: 6, Padding: [2]int{1, 1}}},
	{[]int{9, 5, 4, 7}, []int{3, 5, 2, 4}, ConvParams{Padding: [2]int{1, 2}}},
	{[]int{13, 8, 6, 6}, []int{4, 8, 3, 3}, ConvParams{Padding: [2]int{1, 1}}},
}

// gridRun runs the grid and the im2col kernels of every pass on x, w and
// dy and returns their results in float64.
func gridRun[T Float](g *convGeom, x, w, dy []T) (grid, col [3][]float64) {
	ys, dxs, dws := [2][]T{}, [2][]T{}, [2][]T{}
	for k := range 2 {
		ys[k], dxs[k], dws[k] = make([]T, g.n*g.o*g.howo), make([]T, len(x)), make([]T, len(w))
	}
	gridForward(g, x, w, ys[0])
	colForward(g, x, w, ys[1])
	gridInputGrad(g, dy, w, dxs[0])
	colInputGrad(g, dy, w, dxs[1])
	gridWeightGrad(g, x, dy, dws[0])
	colWeightGrad(g, x, dy, dws[1])
	f64 := func(v []T) []float64 {
		out := make([]float64, len(v))
		for i, e := range v {
			out[i] = float64(e)
		}
		return out
	}
	return [3][]float64{f64(ys[0]), f64(dxs[0]), f64(dws[0])}, [3][]float64{f64(ys[1]), f64(dxs[1]), f64(dws[1])}
}

// gridRunTensors is gridRun on tensors, dispatching on the dtype.
func gridRunTensors(x, w, dy *Tensor, p ConvParams) (grid, col [3][]float64) {
	g := convGeometry("test", x.shape, w.shape, x.dtype, p)
	if x.dtype == Float32 {
		return gridRun(&g, x.Float32s(), w.Float32s(), dy.Float32s())
	}
	return gridRun(&g, x.Float64s(), w.Float64s(), dy.Float64s())
}

// TestConvGridMatchesCol checks the grid kernels against the im2col ones
// they replace for unit strides: the forward pass and the input gradient
// bit for bit (the same products summed in the same order; the grid's
// extra columns only add exact zeros), the weight gradient within float32
// or float64 rounding (its depth runs over the grid's columns, so its
// blocks of 512 end at other pixels), and all three against the float64
// loops.
func TestConvGridMatchesCol(t *testing.T) {
	rng := NewRNG(21)
	for _, dt := range cvDTypes {
		for i, c := range gridCases {
			t.Run(fmt.Sprintf("%v/%d", dt, i), func(t *testing.T) {
				x := rng.Normal(dt, 0, 1, c.x...)
				w := rng.Normal(dt, 0, 1, c.w...)
				want, shape := naiveConv2D(x.Values(), c.x, w.Values(), c.w, c.p)
				dy := rng.Normal(dt, 0, 1, shape...)
				wantDx, wantDw := naiveConvGrads(x.Values(), c.x, w.Values(), c.w, dy.Values(), c.p)
				grid, col := gridRunTensors(x, w, dy, c.p)
				require.Equal(t, col[0], grid[0], "forward: grid and im2col differ")
				require.Equal(t, col[1], grid[1], "input gradient: grid and col2im differ")
				for k, ref := range [][]float64{want, wantDx, wantDw} {
					cvAssertClose(t, ref, FromValues(dt, grid[k], len(grid[k])), "grid pass %d", k)
					cvAssertClose(t, ref, FromValues(dt, col[k], len(col[k])), "im2col pass %d", k)
				}
			})
		}
	}
}

// TestConvGridNonFinite: a NaN or Inf in x must reach the weight gradient
// only where the definition puts it (the grid's extra columns are cleared
// then, not multiplied by zero), and one in w the input gradient likewise
// (Conv2DInputGrad takes the col2im path then). The pattern of NaNs and
// signed infinities must be the float64 loops', the finite entries close.
func TestConvGridNonFinite(t *testing.T) {
	rng := NewRNG(22)
	c := gridCases[1]
	for _, bad := range []float64{math.Inf(1), math.NaN()} {
		x := rng.Normal(Float32, 0, 1, c.x...)
		w := rng.Normal(Float32, 0, 1, c.w...)
		x.Float32s()[3*14*14+5*14+13] = float32(bad) // a right-edge pixel: the grid's extra columns read it
		w.Float32s()[8] = float32(bad)               // tap (2, 2): its extra columns wrap onto the next row's first pixel
		y := Conv2D(New(Float32, c.x...), w, c.p)    // shape only
		dy := rng.Normal(Float32, 0, 1, y.Shape()...)
		wantDx, wantDw := naiveConvGrads(x.Values(), c.x, w.Values(), c.w, dy.Values(), c.p)
		dx := Conv2DInputGrad(dy, w, c.x, c.p).Values()
		dw := Conv2DWeightGrad(x, dy, c.w, c.p).Values()
		for _, pair := range []struct {
			name      string
			got, want []float64
		}{{"dx", dx, wantDx}, {"dw", dw, wantDw}} {
			for i, v := range pair.want {
				g := pair.got[i]
				switch {
				case math.IsNaN(v) || math.IsInf(v, 0):
					require.True(t, g == v || (math.IsNaN(v) && math.IsNaN(g)), "%s[%d] = %v, want %v (bad %v)", pair.name, i, g, v, bad)
				default:
					require.False(t, math.IsNaN(g) || math.IsInf(g, 0), "%s[%d] = %v, want %v (bad %v)", pair.name, i, g, v, bad)
					require.InDelta(t, v, g, 1e-3*math.Max(1, math.Abs(v)), "%s[%d] (bad %v)", pair.name, i, bad)
				}
			}
		}
	}
}

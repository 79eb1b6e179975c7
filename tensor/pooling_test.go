package tensor

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cvPoolX is the 4×4 input of the hand-worked pooling cases (flat indices
// 0..15 row by row).
var cvPoolX = []float64{
	1, 5, 2, 0,
	3, 4, 8, -7,
	-9, 6, 1, 1,
	2, 0, 3, -4,
}

func TestPool2DHandWorked(t *testing.T) {
	cases := []struct {
		name    string
		p       PoolParams
		outHW   int
		max     []float64
		argmax  []int
		avg     []float64
		dyOnes  []float64 // AvgPool2DGrad of all-ones dy, times kh·kw
		kernel2 float64   // kh·kw
	}{
		// Non-overlapping 2×2 windows: {1,5,3,4}, {2,0,8,−7}, {−9,6,2,0}, {1,1,3,−4}.
		{"2x2", PoolParams{Kernel: [2]int{2, 2}}, 2,
			[]float64{5, 8, 6, 3}, []int{1, 6, 9, 14},
			[]float64{13.0 / 4, 3.0 / 4, -1.0 / 4, 1.0 / 4},
			[]float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 4},
		// Padding 1: windows start at rows/cols −1, 1, 3; padding counts as
		// zero in the mean but never wins the max (the last window is {−4}).
		{"2x2pad1", PoolParams{Kernel: [2]int{2, 2}, Padding: [2]int{1, 1}}, 3,
			[]float64{1, 5, 0, 3, 8, 1, 2, 3, -4}, []int{0, 1, 3, 4, 6, 11, 12, 14, 15},
			[]float64{0.25, 1.75, 0, -1.5, 4.75, -1.5, 0.5, 0.75, -1},
			[]float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 4},
		// Overlapping 3×3 windows, stride 1: 8 (index 6) is in all four.
		// Sums 21, 20, 18, 12; the centre pixels are covered 4 times.
		{"3x3stride1", PoolParams{Kernel: [2]int{3, 3}, Stride: [2]int{1, 1}}, 2,
			[]float64{8, 8, 8, 8}, []int{6, 6, 6, 6},
			[]float64{21.0 / 9, 20.0 / 9, 18.0 / 9, 12.0 / 9},
			[]float64{1, 2, 2, 1, 2, 4, 4, 2, 2, 4, 4, 2, 1, 2, 2, 1}, 9},
	}
	for _, dt := range cvDTypes {
		for _, c := range cases {
			t.Run(dt.String()+"/"+c.name, func(t *testing.T) {
				x := FromValues(dt, cvPoolX, 1, 1, 4, 4)
				shape := []int{1, 1, c.outHW, c.outHW}
				require.Equal(t, shape, Pool2DShape(x.Shape(), c.p))

				y, argmax := MaxPool2D(x, c.p)
				require.Equal(t, shape, y.Shape())
				cvAssertClose(t, c.max, y)
				require.Equal(t, c.argmax, argmax)

				a := AvgPool2D(x, c.p)
				require.Equal(t, shape, a.Shape())
				cvAssertClose(t, c.avg, a)

				ones := Ones(dt, shape...)
				want := make([]float64, 16)
				for i, v := range c.dyOnes {
					want[i] = v / c.kernel2
				}
				cvAssertClose(t, want, AvgPool2DGrad(ones, x.Shape(), c.p))

				// dy = 1, 2, 3, ...: each value lands on its argmax and
				// values sharing an argmax add up.
				dy := Arange(dt, 1, float64(y.Size())+1, 1)
				dy = FromValues(dt, dy.Values(), shape...)
				wantMax := make([]float64, 16)
				for i, a := range c.argmax {
					wantMax[a] += float64(i + 1)
				}
				cvAssertClose(t, wantMax, MaxPool2DGrad(dy, argmax, x.Shape()))
			})
		}
	}
}

func TestMaxPool2DTiesAndNaN(t *testing.T) {
	for _, dt := range cvDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			// First window all equal: the first element wins. Second
			// window holds a NaN, which propagates as in PyTorch.
			x := FromValues(dt, []float64{2, 2, 1, math.NaN(), 2, 2, 5, 1}, 1, 1, 2, 4)
			y, argmax := MaxPool2D(x, PoolParams{Kernel: [2]int{2, 2}})
			assert.Equal(t, []int{0, 3}, argmax)
			v := y.Values()
			assert.Equal(t, 2.0, v[0])
			assert.True(t, math.IsNaN(v[1]))
		})
	}
}

// naivePool computes max and mean pooling straight from the definition,
// with padding as −Inf for the max and 0 for the mean.
func naivePool(x []float64, xs []int, p PoolParams) (mx []float64, argmax []int, avg []float64) {
	N, C, H, W := xs[0], xs[1], xs[2], xs[3]
	kh, kw := p.Kernel[0], p.Kernel[1]
	sh, sw := p.Stride[0], p.Stride[1]
	if sh == 0 {
		sh = kh
	}
	if sw == 0 {
		sw = kw
	}
	ph, pw := p.Padding[0], p.Padding[1]
	Ho, Wo := (H+2*ph-kh)/sh+1, (W+2*pw-kw)/sw+1
	for nc := 0; nc < N*C; nc++ {
		for oh := 0; oh < Ho; oh++ {
			for ow := 0; ow < Wo; ow++ {
				best, at, sum := math.Inf(-1), -1, 0.0
				for i := 0; i < kh; i++ {
					for j := 0; j < kw; j++ {
						ih, iw := oh*sh-ph+i, ow*sw-pw+j
						if ih < 0 || ih >= H || iw < 0 || iw >= W {
							continue
						}
						k := (nc*H+ih)*W + iw
						sum += x[k]
						if x[k] > best {
							best, at = x[k], k
						}
					}
				}
				mx = append(mx, best)
				argmax = append(argmax, at)
				avg = append(avg, sum/float64(kh*kw))
			}
		}
	}
	return mx, argmax, avg
}

var cvPoolCases = []struct {
	x []int
	p PoolParams
}{
	{[]int{2, 3, 8, 8}, PoolParams{Kernel: [2]int{2, 2}}},
	{[]int{2, 3, 7, 9}, PoolParams{Kernel: [2]int{2, 2}}}, // ragged edges dropped
	{[]int{1, 2, 9, 7}, PoolParams{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Padding: [2]int{1, 1}}},
	{[]int{2, 1, 6, 10}, PoolParams{Kernel: [2]int{2, 4}, Stride: [2]int{1, 3}, Padding: [2]int{1, 2}}},
	{[]int{1, 2, 5, 5}, PoolParams{Kernel: [2]int{5, 5}}}, // global pooling
	// Large enough for the planes to be spread over goroutines.
	{[]int{4, 8, 32, 30}, PoolParams{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Padding: [2]int{1, 1}}},
}

func TestPool2DMatchesNaive(t *testing.T) {
	rng := NewRNG(21)
	for _, dt := range cvDTypes {
		for i, c := range cvPoolCases {
			t.Run(fmt.Sprintf("%v/%d", dt, i), func(t *testing.T) {
				x := rng.Normal(dt, 0, 1, c.x...)
				wantMax, wantArg, wantAvg := naivePool(x.Values(), c.x, c.p)
				y, argmax := MaxPool2D(x, c.p)
				cvAssertClose(t, wantMax, y)
				require.Equal(t, wantArg, argmax)
				cvAssertClose(t, wantAvg, AvgPool2D(x, c.p))
			})
		}
	}
}

// TestPool2DAdjoint checks ⟨Pool(x), dy⟩ = ⟨x, PoolGrad(dy)⟩; max pooling
// is linear in x once argmax is fixed.
func TestPool2DAdjoint(t *testing.T) {
	rng := NewRNG(22)
	for _, dt := range cvDTypes {
		for i, c := range cvPoolCases {
			t.Run(fmt.Sprintf("%v/%d", dt, i), func(t *testing.T) {
				x := rng.Normal(dt, 0, 1, c.x...)
				y, argmax := MaxPool2D(x, c.p)
				dy := rng.Normal(dt, 0, 1, y.Shape()...)
				tol := cvTol(dt) * 10 * math.Sqrt(float64(y.Size()))
				assert.InDelta(t, cvDot(y, dy), cvDot(x, MaxPool2DGrad(dy, argmax, c.x)), tol, "max")
				a := AvgPool2D(x, c.p)
				assert.InDelta(t, cvDot(a, dy), cvDot(x, AvgPool2DGrad(dy, c.x, c.p)), tol, "avg")
			})
		}
	}
}

func TestPool2DErrors(t *testing.T) {
	x := New(Float32, 1, 2, 4, 4)
	cases := []struct {
		name string
		f    func()
		msg  string
	}{
		{"rank", func() { MaxPool2D(New(Float64, 2, 4, 4), PoolParams{Kernel: [2]int{2, 2}}) },
			"tensor.MaxPool2D: input (2, 4, 4) float64 must be 4-D"},
		{"no kernel", func() { AvgPool2D(x, PoolParams{}) }, "tensor.AvgPool2D: invalid parameters"},
		{"big pad", func() { AvgPool2D(x, PoolParams{Kernel: [2]int{2, 2}, Padding: [2]int{2, 0}}) },
			"tensor.AvgPool2D: invalid parameters"},
		{"window too big", func() { MaxPool2D(x, PoolParams{Kernel: [2]int{5, 2}}) },
			"tensor.MaxPool2D: input (1, 2, 4, 4) float32 padded by (0, 0) is smaller than the 5×2 window"},
		{"argmax len", func() { MaxPool2DGrad(New(Float32, 1, 2, 2, 2), []int{0}, []int{1, 2, 4, 4}) },
			"tensor.MaxPool2DGrad: 1 argmax indices for output gradient (1, 2, 2, 2) float32 with 8 elements"},
		{"argmax range", func() { MaxPool2DGrad(New(Float32, 1, 1, 1, 1), []int{16}, []int{1, 1, 4, 4}) },
			"tensor.MaxPool2DGrad: argmax index 16 out of range for input shape (1, 1, 4, 4)"},
		{"avg dy", func() { AvgPool2DGrad(New(Float32, 1, 2, 3, 3), []int{1, 2, 4, 4}, PoolParams{Kernel: [2]int{2, 2}}) },
			"tensor.AvgPool2DGrad: output gradient (1, 2, 3, 3) float32 does not match the output (1, 2, 2, 2)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := cvCatch(c.f)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.msg)
		})
	}
}

// TestMaxPool2D2x2SpecialValues checks the branch-free 2×2 kernel against
// the definition it replaces (the first strict maximum of each window in
// row-major order; the first NaN wins) on windows drawn from NaN, ±Inf,
// ±0 and a few repeated values, so that ties, signed zeros, NaNs and
// Infs of both signs (whose sum is NaN) all occur, for non-overlapping
// and overlapping windows.
func TestMaxPool2D2x2SpecialValues(t *testing.T) {
	rng := NewRNG(23)
	pool := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1, -1, 2}
	const N, C, H, W = 2, 3, 6, 8
	for _, dt := range cvDTypes {
		for _, stride := range [][2]int{{2, 2}, {1, 1}, {2, 1}} {
			t.Run(fmt.Sprintf("%v/%v", dt, stride), func(t *testing.T) {
				vals := make([]float64, N*C*H*W)
				for i := range vals {
					vals[i] = pool[rng.Intn(len(pool))]
				}
				x := FromValues(dt, vals, N, C, H, W)
				p := PoolParams{Kernel: [2]int{2, 2}, Stride: stride}
				y, argmax := MaxPool2D(x, p)
				Ho, Wo := (H-2)/stride[0]+1, (W-2)/stride[1]+1
				require.Equal(t, []int{N, C, Ho, Wo}, y.Shape())
				xv, yv := x.Values(), y.Values()
				for nc, o := 0, 0; nc < N*C; nc++ {
					for oh := 0; oh < Ho; oh++ {
						for ow := 0; ow < Wo; ow++ {
							r0 := nc*H*W + oh*stride[0]*W + ow*stride[1]
							at := r0
							for _, k := range []int{r0 + 1, r0 + W, r0 + W + 1} {
								if v, b := xv[k], xv[at]; v > b || (v != v && b == b) {
									at = k
								}
							}
							require.Equal(t, at, argmax[o], "window %d", o)
							require.Equal(t, math.Float64bits(xv[at]), math.Float64bits(yv[o]), "window %d", o)
							o++
						}
					}
				}
			})
		}
	}
}

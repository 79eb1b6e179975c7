package tensor

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cvTol is the comparison tolerance for results computed in dtype dt.
func cvTol(dt DType) float64 {
	if dt == Float32 {
		return 1e-4
	}
	return 1e-11
}

// cvAssertClose checks got against want elementwise with a tolerance
// relative to the magnitude of want.
func cvAssertClose(t *testing.T, want []float64, got *Tensor, msgAndArgs ...any) {
	t.Helper()
	g := got.Values()
	require.Len(t, g, len(want), msgAndArgs...)
	scale := 1.0
	for _, v := range want {
		scale = math.Max(scale, math.Abs(v))
	}
	for i := range want {
		if math.Abs(g[i]-want[i]) > cvTol(got.DType())*scale {
			require.InDeltaSlice(t, want, g, cvTol(got.DType())*scale, msgAndArgs...)
		}
	}
}

// cvDot is ⟨a, b⟩ accumulated in float64.
func cvDot(a, b *Tensor) float64 {
	av, bv := a.Values(), b.Values()
	s := 0.0
	for i := range av {
		s += av[i] * bv[i]
	}
	return s
}

func TestConv2DHandWorked(t *testing.T) {
	x9 := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	k4 := []float64{1, 2, 3, 4}
	cases := []struct {
		name   string
		x      []float64
		xShape []int
		w      []float64
		wShape []int
		p      ConvParams
		want   []float64
		yShape []int
	}{
		// 37 = 1·1 + 2·2 + 4·3 + 5·4, and so on for each 2×2 window.
		{"plain", x9, []int{1, 1, 3, 3}, k4, []int{1, 1, 2, 2}, ConvParams{},
			[]float64{37, 47, 67, 77}, []int{1, 1, 2, 2}},
		// Only the window at (0, 0) fits when stepping by 2.
		{"stride2", x9, []int{1, 1, 3, 3}, k4, []int{1, 1, 2, 2}, ConvParams{Stride: [2]int{2, 2}},
			[]float64{37}, []int{1, 1, 1, 1}},
		// Padded input is 5×5; edge windows see zeros, e.g. (0,0) = 4·x00.
		{"pad1", x9, []int{1, 1, 3, 3}, k4, []int{1, 1, 2, 2}, ConvParams{Padding: [2]int{1, 1}},
			[]float64{
				4, 11, 18, 9,
				18, 37, 47, 21,
				36, 67, 77, 33,
				14, 23, 26, 9,
			}, []int{1, 1, 4, 4}},
		// Windows start at padded rows/cols -1 and 1: (0,0) = 4·1,
		// (0,1) = 3·2+4·3, (1,0) = 2·4+4·7, (1,1) = 1·5+2·6+3·8+4·9.
		{"stride2pad1", x9, []int{1, 1, 3, 3}, k4, []int{1, 1, 2, 2}, ConvParams{Stride: [2]int{2, 2}, Padding: [2]int{1, 1}},
			[]float64{4, 18, 36, 77}, []int{1, 1, 2, 2}},
		// Taps at the corners: 1·1 + 2·3 + 3·7 + 4·9.
		{"dilation2", x9, []int{1, 1, 3, 3}, k4, []int{1, 1, 2, 2}, ConvParams{Dilation: [2]int{2, 2}},
			[]float64{64}, []int{1, 1, 1, 1}},
		// Channel 1 is 10−x; filter 1 = [[1,−1],[0,2]] sees only channel 1:
		// (0,0) = 9 − 8 + 2·5 = 11.
		{"groups2", append(append([]float64{}, x9...), 9, 8, 7, 6, 5, 4, 3, 2, 1), []int{1, 2, 3, 3},
			[]float64{1, 2, 3, 4, 1, -1, 0, 2}, []int{2, 1, 2, 2}, ConvParams{Groups: 2},
			[]float64{37, 47, 67, 77, 11, 9, 5, 3}, []int{1, 2, 2, 2}},
		// Without groups both filters see both channels: filter 0 applies
		// [[1,2],[3,4]] to channel 0 and [[5,6],[7,8]] to channel 1 (10−x):
		// (0,0) = 37 + 5·9+6·8+7·6+8·5 = 37+175.
		{"twoChannels", append(append([]float64{}, x9...), 9, 8, 7, 6, 5, 4, 3, 2, 1), []int{1, 2, 3, 3},
			[]float64{1, 2, 3, 4, 5, 6, 7, 8}, []int{1, 2, 2, 2}, ConvParams{},
			[]float64{37 + 175, 47 + 149, 67 + 97, 77 + 71}, []int{1, 1, 2, 2}},
	}
	for _, dt := range cvDTypes {
		for _, c := range cases {
			t.Run(dt.String()+"/"+c.name, func(t *testing.T) {
				y := Conv2D(FromValues(dt, c.x, c.xShape...), FromValues(dt, c.w, c.wShape...), c.p)
				require.Equal(t, c.yShape, y.Shape())
				require.Equal(t, dt, y.DType())
				cvAssertClose(t, c.want, y)
				require.Equal(t, c.yShape, Conv2DShape(c.xShape, c.wShape, c.p))
			})
		}
	}
}

func TestConv2DGradHandWorked(t *testing.T) {
	for _, dt := range cvDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			x := FromValues(dt, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, 1, 1, 3, 3)
			w := FromValues(dt, []float64{1, 2, 3, 4}, 1, 1, 2, 2)
			dy := Ones(dt, 1, 1, 2, 2)
			// With dy = 1 everywhere, dw[i,j] is the sum of the input values
			// tap (i, j) touches: dw00 = 1+2+4+5.
			dw := Conv2DWeightGrad(x, dy, []int{1, 1, 2, 2}, ConvParams{})
			cvAssertClose(t, []float64{12, 16, 24, 28}, dw)
			// dx[i,j] is the sum of the kernel taps that cover pixel (i, j):
			// the centre is covered by all four taps, 1+2+3+4.
			dx := Conv2DInputGrad(dy, w, []int{1, 1, 3, 3}, ConvParams{})
			cvAssertClose(t, []float64{1, 3, 2, 4, 10, 6, 3, 7, 4}, dx)
		})
	}
}

// naiveConv2D is the seven-loop definition of a grouped, strided, padded,
// dilated cross-correlation, computed in float64.
func naiveConv2D(x []float64, xs []int, w []float64, ws []int, p ConvParams) ([]float64, []int) {
	N, C, H, W := xs[0], xs[1], xs[2], xs[3]
	O, Cg, KH, KW := ws[0], ws[1], ws[2], ws[3]
	sh, sw := orOne(p.Stride[0]), orOne(p.Stride[1])
	dh, dw := orOne(p.Dilation[0]), orOne(p.Dilation[1])
	ph, pw := p.Padding[0], p.Padding[1]
	G := orOne(p.Groups)
	Og := O / G
	Ho := (H+2*ph-dh*(KH-1)-1)/sh + 1
	Wo := (W+2*pw-dw*(KW-1)-1)/sw + 1
	y := make([]float64, N*O*Ho*Wo)
	for n := 0; n < N; n++ {
		for o := 0; o < O; o++ {
			g := o / Og
			for oh := 0; oh < Ho; oh++ {
				for ow := 0; ow < Wo; ow++ {
					s := 0.0
					for c := 0; c < Cg; c++ {
						ci := g*Cg + c
						for i := 0; i < KH; i++ {
							for j := 0; j < KW; j++ {
								ih, iw := oh*sh-ph+i*dh, ow*sw-pw+j*dw
								if ih < 0 || ih >= H || iw < 0 || iw >= W {
									continue
								}
								s += x[((n*C+ci)*H+ih)*W+iw] * w[((o*Cg+c)*KH+i)*KW+j]
							}
						}
					}
					y[((n*O+o)*Ho+oh)*Wo+ow] = s
				}
			}
		}
	}
	_ = C
	return y, []int{N, O, Ho, Wo}
}

// cvConvCases are random-shape configurations covering every parameter.
var cvConvCases = []struct {
	x, w []int
	p    ConvParams
}{
	{[]int{2, 3, 7, 6}, []int{4, 3, 3, 3}, ConvParams{}},
	{[]int{2, 3, 7, 6}, []int{4, 3, 3, 3}, ConvParams{Padding: [2]int{1, 1}}},
	{[]int{1, 2, 9, 8}, []int{3, 2, 3, 2}, ConvParams{Stride: [2]int{2, 3}, Padding: [2]int{1, 2}}},
	{[]int{2, 2, 9, 9}, []int{2, 2, 3, 3}, ConvParams{Dilation: [2]int{2, 3}, Padding: [2]int{2, 1}}},
	{[]int{2, 4, 6, 5}, []int{6, 2, 2, 3}, ConvParams{Groups: 2, Stride: [2]int{1, 2}, Padding: [2]int{1, 0}}},
	{[]int{1, 6, 5, 5}, []int{6, 1, 3, 3}, ConvParams{Groups: 6, Padding: [2]int{1, 1}}}, // depthwise
	{[]int{3, 5, 4, 6}, []int{7, 5, 1, 1}, ConvParams{}},                                 // 1×1, im2col skipped
	{[]int{2, 4, 4, 6}, []int{4, 2, 1, 1}, ConvParams{Groups: 2}},                        // grouped 1×1
	{[]int{1, 2, 8, 7}, []int{3, 2, 1, 1}, ConvParams{Stride: [2]int{2, 2}}},             // strided 1×1
	{[]int{2, 1, 5, 5}, []int{2, 1, 5, 5}, ConvParams{}},                                 // kernel = image
	{[]int{3, 4, 3, 2}, []int{5, 4, 3, 2}, ConvParams{Stride: [2]int{2, 3}}},             // kernel = image, one GEMM
	{[]int{2, 4, 3, 3}, []int{4, 2, 3, 3}, ConvParams{Groups: 2}},                        // kernel = image, grouped
	{[]int{1, 2, 3, 3}, []int{2, 2, 3, 3}, ConvParams{Padding: [2]int{3, 3}, Stride: [2]int{2, 2}}},
	{[]int{1, 1, 4, 9}, []int{1, 1, 2, 4}, ConvParams{Stride: [2]int{3, 3}, Dilation: [2]int{1, 2}}},
}

func TestConv2DMatchesNaive(t *testing.T) {
	rng := NewRNG(11)
	for _, dt := range cvDTypes {
		for i, c := range cvConvCases {
			t.Run(fmt.Sprintf("%v/%d", dt, i), func(t *testing.T) {
				x := rng.Uniform(dt, -1, 1, c.x...)
				w := rng.Uniform(dt, -1, 1, c.w...)
				want, wantShape := naiveConv2D(x.Values(), c.x, w.Values(), c.w, c.p)
				y := Conv2D(x, w, c.p)
				require.Equal(t, wantShape, y.Shape())
				cvAssertClose(t, want, y)
			})
		}
	}
}

// TestConv2DAdjoint checks ⟨Conv2D(x,w), dy⟩ = ⟨x, InputGrad(dy,w)⟩ =
// ⟨w, WeightGrad(x,dy)⟩, which pins both gradients to the forward pass.
func TestConv2DAdjoint(t *testing.T) {
	rng := NewRNG(12)
	for _, dt := range cvDTypes {
		for i, c := range cvConvCases {
			t.Run(fmt.Sprintf("%v/%d", dt, i), func(t *testing.T) {
				x := rng.Normal(dt, 0, 1, c.x...)
				w := rng.Normal(dt, 0, 1, c.w...)
				y := Conv2D(x, w, c.p)
				dy := rng.Normal(dt, 0, 1, y.Shape()...)
				dx := Conv2DInputGrad(dy, w, c.x, c.p)
				dw := Conv2DWeightGrad(x, dy, c.w, c.p)
				require.Equal(t, c.x, dx.Shape())
				require.Equal(t, c.w, dw.Shape())
				lhs := cvDot(y, dy)
				scale := math.Sqrt(float64(y.Size())) * math.Sqrt(float64(c.w[1]*c.w[2]*c.w[3]))
				assert.InDelta(t, lhs, cvDot(x, dx), cvTol(dt)*scale, "input adjoint")
				assert.InDelta(t, lhs, cvDot(w, dw), cvTol(dt)*scale, "weight adjoint")
			})
		}
	}
}

// TestConv2DViewsAndDst feeds non-contiguous views and caller-provided
// destinations, which must give the same values as the contiguous path.
func TestConv2DViewsAndDst(t *testing.T) {
	rng := NewRNG(13)
	p := ConvParams{Padding: [2]int{1, 1}, Stride: [2]int{2, 1}}
	for _, dt := range cvDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			// x is the (2, 3, 5, 6) corner of a (2, 3, 5, 8) tensor.
			big := rng.Uniform(dt, -1, 1, 2, 3, 5, 8)
			x := &Tensor{dtype: dt, shape: []int{2, 3, 5, 6}, strides: big.strides, offset: 1, f32: big.f32, f64: big.f64}
			require.False(t, x.IsContiguous())
			w := rng.Uniform(dt, -1, 1, 4, 3, 3, 3)
			want, shape := naiveConv2D(x.Values(), x.shape, w.Values(), w.shape, p)
			dst := New(dt, shape...)
			got := Conv2DTo(dst, x, w, p)
			require.Same(t, dst, got)
			cvAssertClose(t, want, dst)

			dy := rng.Uniform(dt, -1, 1, shape...)
			wantDx := Conv2DInputGrad(dy, w, x.shape, p).Values()
			wantDw := Conv2DWeightGrad(x.Contiguous(), dy, w.shape, p).Values()
			// Stale contents in the destinations must be overwritten.
			dx := Full(dt, 7, x.shape...)
			dw := Full(dt, 7, w.shape...)
			Conv2DInputGradTo(dx, dy, w, x.shape, p)
			Conv2DWeightGradTo(dw, x, dy, w.shape, p)
			cvAssertClose(t, wantDx, dx)
			cvAssertClose(t, wantDw, dw)
		})
	}
}

func TestConv2DErrors(t *testing.T) {
	x := New(Float32, 2, 3, 5, 5)
	cases := []struct {
		name string
		f    func()
		msg  string
	}{
		{"channels", func() { Conv2D(x, New(Float32, 4, 2, 3, 3), ConvParams{}) },
			"tensor.Conv2D: input (2, 3, 5, 5) float32 has 3 channels, weight (4, 2, 3, 3) expects 2×groups 1"},
		{"groups out", func() { Conv2D(New(Float32, 1, 4, 5, 5), New(Float32, 3, 2, 3, 3), ConvParams{Groups: 2}) },
			"tensor.Conv2D: weight (3, 2, 3, 3) has 3 output channels, not divisible by groups 2"},
		{"rank", func() { Conv2D(New(Float32, 3, 5, 5), New(Float32, 4, 3, 3, 3), ConvParams{}) },
			"tensor.Conv2D: input (3, 5, 5) float32 and weight (4, 3, 3, 3) must both be 4-D"},
		{"dtype", func() { Conv2D(x, New(Float64, 4, 3, 3, 3), ConvParams{}) },
			"tensor.Conv2D: mixed dtypes: (2, 3, 5, 5) float32 and (4, 3, 3, 3) float64"},
		{"too small", func() { Conv2D(x, New(Float32, 4, 3, 3, 3), ConvParams{Dilation: [2]int{3, 3}}) },
			"tensor.Conv2D: input (2, 3, 5, 5) float32 padded by (0, 0) is smaller than weight (4, 3, 3, 3)'s kernel dilated by (3, 3)"},
		{"shape only", func() { Conv2DShape([]int{2, 3, 5, 5}, []int{4, 2, 3, 3}, ConvParams{}) },
			"tensor.Conv2DShape: input (2, 3, 5, 5) has 3 channels, weight (4, 2, 3, 3) expects 2×groups 1"},
		{"negative stride", func() { Conv2D(x, New(Float32, 4, 3, 3, 3), ConvParams{Stride: [2]int{-1, 1}}) },
			"tensor.Conv2D: invalid parameters"},
		{"dy shape", func() {
			Conv2DInputGrad(New(Float32, 2, 4, 4, 4), New(Float32, 4, 3, 3, 3), []int{2, 3, 5, 5}, ConvParams{})
		},
			"tensor.Conv2DInputGrad: output gradient (2, 4, 4, 4) float32 does not match the output (2, 4, 3, 3)"},
		{"dy shape w", func() { Conv2DWeightGrad(x, New(Float32, 2, 4, 4, 4), []int{4, 3, 3, 3}, ConvParams{}) },
			"tensor.Conv2DWeightGrad: output gradient (2, 4, 4, 4) float32 does not match the output (2, 4, 3, 3)"},
		{"dst", func() { Conv2DTo(New(Float32, 2, 4, 4, 4), x, New(Float32, 4, 3, 3, 3), ConvParams{}) },
			"tensor.Conv2D: destination (2, 4, 4, 4) float32 does not match result (2, 4, 3, 3) float32"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := cvCatch(c.f)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.msg)
			assert.Contains(t, err.Error(), "conv_test.go", "caller recorded")
		})
	}
}

// TestConv2DLargeBatches covers the path small cases skip: images spread
// over goroutines, with the weight gradient's partial sums (one per
// goroutine, over uneven ranges of images) added at the end. The second
// shape has 16 output pixels, so several images share a GEMM (6, 6 and 1
// on two threads; the weight gradient's ranges of 6 and 7 end in partial
// groups).
func TestConv2DLargeBatches(t *testing.T) {
	rng := NewRNG(14)
	for i, c := range []struct {
		xs, ws []int
		p      ConvParams
	}{
		{[]int{5, 8, 20, 20}, []int{6, 4, 3, 3}, ConvParams{Padding: [2]int{1, 1}, Groups: 2}},
		{[]int{13, 16, 9, 9}, []int{6, 16, 4, 4}, ConvParams{Padding: [2]int{1, 1}, Stride: [2]int{2, 2}}},
	} {
		xs, ws, p := c.xs, c.ws, c.p
		for _, dt := range cvDTypes {
			t.Run(fmt.Sprintf("%d/%v", i, dt), func(t *testing.T) {
				x := rng.Normal(dt, 0, 1, xs...)
				w := rng.Normal(dt, 0, 1, ws...)
				want, shape := naiveConv2D(x.Values(), xs, w.Values(), ws, p)
				y := Conv2D(x, w, p)
				require.Equal(t, shape, y.Shape())
				cvAssertClose(t, want, y)

				dy := rng.Normal(dt, 0, 1, shape...)
				dx := Conv2DInputGrad(dy, w, xs, p)
				dw := Conv2DWeightGrad(x, dy, ws, p)
				lhs := cvDot(y, dy)
				scale := math.Sqrt(float64(y.Size())) * math.Sqrt(float64(ws[1]*ws[2]*ws[3]))
				assert.InDelta(t, lhs, cvDot(x, dx), cvTol(dt)*scale, "input adjoint")
				assert.InDelta(t, lhs, cvDot(w, dw), cvTol(dt)*scale, "weight adjoint")
			})
		}
	}
}

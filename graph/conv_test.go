package graph_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

func seq(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = float64(i + 1)
	}
	return s
}

func TestConv2DValues(t *testing.T) {
	ones9 := []float64{1, 1, 1, 1, 1, 1, 1, 1, 1}
	cases := []struct {
		name   string
		x      []float64
		xShape []int
		w      []float64
		wShape []int
		p      tensor.ConvParams
		want   []float64
		yShape []int
	}{
		// A 3×3 box filter over 1..9 padded by 1: each output sums the
		// input's 3×3 neighbourhood, e.g. 1+2+4+5 = 12 at a corner, 45 in the centre.
		{"box pad1", seq(9), []int{1, 1, 3, 3}, ones9, []int{1, 1, 3, 3}, tensor.ConvParams{Padding: [2]int{1, 1}},
			[]float64{12, 21, 16, 27, 45, 33, 24, 39, 28}, []int{1, 1, 3, 3}},
		// Left minus right column over 1..16 (4×4): each row contributes −2.
		{"edge", seq(16), []int{1, 1, 4, 4}, []float64{1, 0, -1, 1, 0, -1, 1, 0, -1}, []int{1, 1, 3, 3}, tensor.ConvParams{},
			[]float64{-6, -6, -6, -6}, []int{1, 1, 2, 2}},
		// Stride 2 over the padded 5×5 picks the corner windows of the box sums.
		{"box stride2", seq(9), []int{1, 1, 3, 3}, ones9, []int{1, 1, 3, 3}, tensor.ConvParams{Padding: [2]int{1, 1}, Stride: [2]int{2, 2}},
			[]float64{12, 16, 24, 28}, []int{1, 1, 2, 2}},
		// Two groups of one channel each, 1×1 kernels 2 and −1.
		{"groups", seq(8), []int{1, 2, 2, 2}, []float64{2, -1}, []int{2, 1, 1, 1}, tensor.ConvParams{Groups: 2},
			[]float64{2, 4, 6, 8, -5, -6, -7, -8}, []int{1, 2, 2, 2}},
		// One filter summing both channels: 1+…+8 = 36.
		{"channels", seq(8), []int{1, 2, 2, 2}, []float64{1, 1, 1, 1, 1, 1, 1, 1}, []int{1, 2, 2, 2}, tensor.ConvParams{},
			[]float64{36}, []int{1, 1, 1, 1}},
	}
	for _, c := range cases {
		for _, dt := range numtest.DTypes {
			t.Run(c.name+"/"+dt.String(), func(t *testing.T) {
				g := graph.New()
				y := graph.Conv2D(g.Var(tensor.FromValues(dt, c.x, c.xShape...)), g.Var(tensor.FromValues(dt, c.w, c.wShape...)), c.p)
				assert.Equal(t, c.yShape, y.Shape())
				numtest.Close(t, c.want, y.Value(), numtest.Tol(dt))
			})
		}
	}
}

// TestConv2DGradients checks the gradients of Σ conv(x, w) worked out by
// hand for x = 1..9 (3×3) and w = [[1,2],[3,4]]: x̄ counts the taps that
// touch each pixel, w̄ sums each tap's window.
func TestConv2DGradients(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			x := g.Var(tensor.FromValues(dt, seq(9), 1, 1, 3, 3))
			w := g.Var(tensor.FromValues(dt, []float64{1, 2, 3, 4}, 1, 1, 2, 2))
			grads := autodiff.Grad(graph.Sum(graph.Conv2D(x, w, tensor.ConvParams{}), nil, false), x, w)
			numtest.Close(t, []float64{1, 3, 2, 4, 10, 6, 3, 7, 4}, grads[0].Value(), numtest.Tol(dt))
			numtest.Close(t, []float64{12, 16, 24, 28}, grads[1].Value(), numtest.Tol(dt))
			// The adjoints are ops whose values are the same numbers.
			ones := g.Const(tensor.Ones(dt, 1, 1, 2, 2))
			numtest.Close(t, []float64{1, 3, 2, 4, 10, 6, 3, 7, 4}, graph.Conv2DInputGrad(ones, w, []int{1, 1, 3, 3}, tensor.ConvParams{}).Value(), numtest.Tol(dt))
			numtest.Close(t, []float64{12, 16, 24, 28}, graph.Conv2DWeightGrad(x, ones, []int{1, 1, 2, 2}, tensor.ConvParams{}).Value(), numtest.Tol(dt))
		})
	}
}

// poolX is a 4×4 image whose 2×2 blocks have distinct maxima.
var poolX = []float64{
	1, 5, 2, 0,
	3, 4, 8, 6,
	9, 0, 1, 2,
	7, 3, 5, 4,
}

func TestPoolValuesAndGradients(t *testing.T) {
	k2 := tensor.PoolParams{Kernel: [2]int{2, 2}}
	k2s1 := tensor.PoolParams{Kernel: [2]int{2, 2}, Stride: [2]int{1, 1}}
	cases := []struct {
		name   string
		x      []float64
		f      func(x *graph.Node) *graph.Node
		want   []float64
		yShape []int
		ct     []float64 // output cotangent
		grad   []float64 // input gradient for ct
	}{
		// Block maxima 5, 8, 9, 5 at flat indices 1, 6, 8, 14.
		{"max", poolX, func(x *graph.Node) *graph.Node { return graph.MaxPool2D(x, k2) },
			[]float64{5, 8, 9, 5}, []int{1, 1, 2, 2}, []float64{1, 2, 3, 4},
			[]float64{0, 1, 0, 0, 0, 0, 2, 0, 3, 0, 0, 0, 0, 0, 4, 0}},
		// Overlapping windows: 8 (index 6) wins four times, 9 and the
		// bottom 5 twice, the top 5 once.
		{"max overlapping", poolX, func(x *graph.Node) *graph.Node { return graph.MaxPool2D(x, k2s1) },
			[]float64{5, 8, 8, 9, 8, 8, 9, 5, 5}, []int{1, 1, 3, 3}, []float64{1, 1, 1, 1, 1, 1, 1, 1, 1},
			[]float64{0, 1, 0, 0, 0, 0, 4, 0, 2, 0, 0, 0, 0, 0, 2, 0}},
		// Block means of 1..16 and each block's cotangent spread by ¼.
		{"avg", seq(16), func(x *graph.Node) *graph.Node { return graph.AvgPool2D(x, k2) },
			[]float64{3.5, 5.5, 11.5, 13.5}, []int{1, 1, 2, 2}, []float64{1, 2, 3, 4},
			[]float64{.25, .25, .5, .5, .25, .25, .5, .5, .75, .75, 1, 1, .75, .75, 1, 1}},
		// Padding counts as zeros: the corner window holds only x₀₀ = 1.
		{"avg padded", seq(4), func(x *graph.Node) *graph.Node {
			return graph.AvgPool2D(graph.Reshape(x, 1, 1, 2, 2), tensor.PoolParams{Kernel: [2]int{2, 2}, Stride: [2]int{1, 1}, Padding: [2]int{1, 1}})
		}, []float64{.25, .75, .5, 1, 2.5, 1.5, .75, 1.75, 1}, []int{1, 1, 3, 3}, []float64{1, 1, 1, 1, 1, 1, 1, 1, 1},
			[]float64{1, 1, 1, 1}},
	}
	for _, c := range cases {
		for _, dt := range numtest.DTypes {
			t.Run(c.name+"/"+dt.String(), func(t *testing.T) {
				g := graph.New()
				shape := []int{1, 1, 4, 4}
				if len(c.x) == 4 {
					shape = []int{4}
				}
				x := g.Var(tensor.FromValues(dt, c.x, shape...))
				y := c.f(x)
				assert.Equal(t, c.yShape, y.Shape())
				numtest.Close(t, c.want, y.Value(), numtest.Tol(dt))
				ct := g.Const(tensor.FromValues(dt, c.ct, c.yShape...))
				numtest.Close(t, c.grad, autodiff.VJP(y, ct, x)[0].Value(), numtest.Tol(dt))
			})
		}
	}
}

// TestMaxPoolForwardMode checks that the tangent of a max pooling picks the
// input tangent at each window's maximum, and that MaxPool2DGather and
// MaxPool2DGrad are adjoint: ⟨gather(u), v⟩ = ⟨u, scatter(v)⟩.
func TestMaxPoolForwardMode(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			x := g.Var(tensor.FromValues(dt, poolX, 1, 1, 4, 4))
			y := graph.MaxPool2D(x, tensor.PoolParams{Kernel: [2]int{2, 2}})
			u := g.Const(tensor.FromValues(dt, seq(16), 1, 1, 4, 4))
			dy := autodiff.JVP([]*graph.Node{y}, []*graph.Node{x}, []*graph.Node{u})[0]
			numtest.Close(t, []float64{2, 7, 9, 15}, dy.Value(), numtest.Tol(dt))

			argmax := []int{1, 6, 8, 14}
			gathered := graph.MaxPool2DGather(u, argmax, []int{1, 1, 2, 2})
			numtest.Close(t, []float64{2, 7, 9, 15}, gathered.Value(), numtest.Tol(dt))
			v := g.Const(tensor.FromValues(dt, []float64{1, -1, 2, 3}, 1, 1, 2, 2))
			scattered := graph.MaxPool2DGrad(v, argmax, []int{1, 1, 4, 4})
			// ⟨gather(u), v⟩ = 2 − 7 + 18 + 45 = 58.
			assert.InDelta(t, 58, graph.Sum(graph.Mul(gathered, v), nil, false).Item(), 1e-4)
			assert.InDelta(t, 58, graph.Sum(graph.Mul(u, scattered), nil, false).Item(), 1e-4)
		})
	}
}

func TestConvMisuse(t *testing.T) {
	for _, dt := range numtest.DTypes {
		g := graph.New()
		x := g.Var(tensor.New(dt, 1, 3, 4, 4))
		w := g.Var(tensor.New(dt, 2, 2, 3, 3))
		big := g.Var(tensor.New(dt, 2, 3, 5, 5))
		other := tensor.Float64
		if dt == tensor.Float64 {
			other = tensor.Float32
		}
		wOther := g.Var(tensor.New(other, 2, 3, 3, 3))
		cases := []struct {
			name string
			f    func()
			want []string
		}{
			{"channels", func() { graph.Conv2D(x, w, tensor.ConvParams{}) }, []string{"conv2d", "(1, 3, 4, 4)", "(2, 2, 3, 3)", dt.String()}},
			{"dtypes", func() { graph.Conv2D(x, wOther, tensor.ConvParams{}) }, []string{"conv2d", "mixed dtypes", other.String()}},
			{"kernel too big", func() { graph.Conv2D(x, g.Var(tensor.New(dt, 2, 3, 5, 5)), tensor.ConvParams{}) }, []string{"conv2d", "(1, 3, 4, 4)"}},
			{"input grad shape", func() { graph.Conv2DInputGrad(x, big, []int{1, 3, 4, 4}, tensor.ConvParams{}) }, []string{"conv2d_input_grad", "(1, 3, 4, 4)"}},
			{"pool rank", func() { graph.MaxPool2D(g.Var(tensor.New(dt, 4, 4)), tensor.PoolParams{Kernel: [2]int{2, 2}}) }, []string{"maxpool2d", "(4, 4)"}},
			{"argmax range", func() { graph.MaxPool2DGrad(g.Var(tensor.New(dt, 1)), []int{16}, []int{1, 1, 4, 4}) }, []string{"maxpool2d_grad", "16"}},
		}
		for _, c := range cases {
			t.Run(c.name+"/"+dt.String(), func(t *testing.T) {
				var err error
				func() {
					defer tensor.Recover(&err)
					c.f()
				}()
				var te *tensor.Error
				require.ErrorAs(t, err, &te)
				for _, s := range c.want {
					assert.Contains(t, err.Error(), s)
				}
			})
		}
	}
}

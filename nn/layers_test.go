package nn_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// set copies vals into p's value, keeping its shape and dtype.
func set(p *nn.Param, vals ...float64) {
	tensor.CopyInto(p.Value, tensor.FromValues(p.Value.DType(), vals, p.Value.Shape()...))
}

// panicMessage runs f and returns the message of the *tensor.Error it
// panics with ("" if it does not panic).
func panicMessage(t *testing.T, f func()) (msg string) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		err, ok := r.(*tensor.Error)
		require.True(t, ok, "panic value %v is not a *tensor.Error", r)
		msg = err.Error()
	}()
	f()
	return ""
}

func TestLinearForwardByHand(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			l := nn.NewLinear(tensor.NewRNG(1), 3, 2, true, dt)
			set(l.Weight, 1, 2, 3, 4, 5, 6)
			set(l.Bias, 0.5, -1)
			g := graph.New()
			// Rows (1, 0, −1) and (2, 1, 0): W·x = (−2, −2) and (4, 13), plus b.
			x := g.Const(tensor.FromValues(dt, []float64{1, 0, -1, 2, 1, 0}, 2, 3))
			y := l.Forward(x)
			require.Equal(t, []int{2, 2}, y.Shape())
			assert.InDeltaSlice(t, []float64{-1.5, -3, 4.5, 12}, y.Value().Values(), numtest.Tol(dt))

			// Batch axes pass through: (2, 1, 3) → (2, 1, 2); a vector (3,) → (2,).
			y3 := l.Forward(graph.Reshape(x, 2, 1, 3))
			assert.Equal(t, []int{2, 1, 2}, y3.Shape())
			assert.InDeltaSlice(t, []float64{-1.5, -3, 4.5, 12}, y3.Value().Values(), numtest.Tol(dt))
			y1 := l.Forward(g.Const(tensor.FromValues(dt, []float64{1, 0, -1}, 3)))
			assert.Equal(t, []int{2}, y1.Shape())
			assert.InDeltaSlice(t, []float64{-1.5, -3}, y1.Value().Values(), numtest.Tol(dt))

			nb := nn.NewLinear(tensor.NewRNG(1), 3, 2, false, dt)
			set(nb.Weight, 1, 2, 3, 4, 5, 6)
			assert.Len(t, nb.Params(), 1)
			assert.InDeltaSlice(t, []float64{-2, -2, 4, 13}, nb.Forward(x).Value().Values(), numtest.Tol(dt))
		})
	}
}

func TestLinearBadInput(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			l := nn.NewLinear(tensor.NewRNG(1), 784, 256, true, dt)
			g := graph.New()
			msg := panicMessage(t, func() { l.Forward(g.Const(tensor.Zeros(dt, 32, 100))) })
			assert.Contains(t, msg, "Linear(784→256)")
			assert.Contains(t, msg, "(32, 100)")
			assert.Contains(t, msg, "(..., 784)")
			assert.Contains(t, msg, "layers_test.go", "the caller's file:line")

			other := tensor.Float64
			if dt == tensor.Float64 {
				other = tensor.Float32
			}
			msg = panicMessage(t, func() { l.Forward(g.Const(tensor.Zeros(other, 32, 784))) })
			assert.Contains(t, msg, "Linear(784→256)")
			assert.Contains(t, msg, "dtype")
		})
	}
}

func TestConv2DForwardByHand(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9} // 3×3
	w := []float64{1, 2, 3, 4}                // 2×2
	cases := []struct {
		name  string
		cfg   nn.Conv2DOptions
		shape []int
		want  []float64
	}{
		// Each output is Σ w·window + 0.5: 1·1+2·2+3·4+4·5 = 37, then 47, 67, 77.
		{"valid", nn.Conv2DOptions{}, []int{1, 1, 2, 2}, []float64{37.5, 47.5, 67.5, 77.5}},
		// Padding 1, stride 2: windows at rows/cols −1 and 1. Top-left sees only
		// x₀₀·w₁₁ = 4; top-right 2·3 + 3·4 = 18; bottom-left 4·2 + 7·4 = 36;
		// bottom-right 5·1 + 6·2 + 8·3 + 9·4 = 77.
		{"pad-stride", nn.Conv2DOptions{Stride: [2]int{2, 2}, Padding: [2]int{1, 1}}, []int{1, 1, 2, 2},
			[]float64{4.5, 18.5, 36.5, 77.5}},
		// Dilation 2 on a 3×3 input leaves one window, the corners: 1·1+2·3+3·7+4·9 = 64.
		{"dilation", nn.Conv2DOptions{Dilation: [2]int{2, 2}}, []int{1, 1, 1, 1}, []float64{64.5}},
	}
	for _, dt := range numtest.DTypes {
		for _, c := range cases {
			t.Run(dt.String()+"/"+c.name, func(t *testing.T) {
				opts := c.cfg
				opts.DType = dt
				conv := nn.NewConv2D(tensor.NewRNG(1), 1, 1, [2]int{2, 2}, opts)
				require.Equal(t, []int{1, 1, 2, 2}, conv.Weight.Value.Shape())
				set(conv.Weight, w...)
				set(conv.Bias, 0.5)
				g := graph.New()
				y := conv.Forward(g.Const(tensor.FromValues(dt, x, 1, 1, 3, 3)))
				require.Equal(t, c.shape, y.Shape())
				assert.InDeltaSlice(t, c.want, y.Value().Values(), numtest.Tol(dt)*100)
			})
		}
	}
}

func TestConv2DGroupsAndShapes(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			// Two groups of one channel each: output channel k sees input channel k only.
			conv := nn.NewConv2D(tensor.NewRNG(1), 2, 2, [2]int{1, 1}, nn.Conv2DOptions{Groups: 2, NoBias: true, DType: dt})
			require.Equal(t, []int{2, 1, 1, 1}, conv.Weight.Value.Shape())
			require.Nil(t, conv.Bias)
			set(conv.Weight, 2, -1)
			g := graph.New()
			y := conv.Forward(g.Const(tensor.FromValues(dt, []float64{1, 2, 3, 4, 5, 6, 7, 8}, 1, 2, 2, 2)))
			assert.InDeltaSlice(t, []float64{2, 4, 6, 8, -5, -6, -7, -8}, y.Value().Values(), numtest.Tol(dt))

			c := nn.NewConv2D(tensor.NewRNG(1), 3, 8, [2]int{3, 3}, nn.Conv2DOptions{Padding: [2]int{1, 1}, DType: dt})
			assert.Equal(t, []int{4, 8, 5, 5}, c.Forward(g.Const(tensor.Zeros(dt, 4, 3, 5, 5))).Shape())
			msg := panicMessage(t, func() { c.Forward(g.Const(tensor.Zeros(dt, 4, 1, 5, 5))) })
			assert.Contains(t, msg, "Conv2D(3→8, 3×3)")
			assert.Contains(t, msg, "(4, 1, 5, 5)")
			assert.Contains(t, msg, "(N, 3, H, W)")
		})
	}
}

func TestPoolingAndFlatten(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			// 1×1×4×4 holding 1..16; 2×2 windows.
			vals := make([]float64, 16)
			for i := range vals {
				vals[i] = float64(i + 1)
			}
			x := g.Const(tensor.FromValues(dt, vals, 1, 1, 4, 4))
			mp := nn.NewMaxPool2D(tensor.PoolParams{Kernel: [2]int{2, 2}})
			assert.InDeltaSlice(t, []float64{6, 8, 14, 16}, mp.Forward(x).Value().Values(), numtest.Tol(dt))
			ap := nn.NewAvgPool2D(tensor.PoolParams{Kernel: [2]int{2, 2}})
			// (1+2+5+6)/4 = 3.5, then 5.5, 11.5, 13.5.
			assert.InDeltaSlice(t, []float64{3.5, 5.5, 11.5, 13.5}, ap.Forward(x).Value().Values(), numtest.Tol(dt))
			assert.Nil(t, mp.Params())

			f := nn.NewFlatten()
			assert.Equal(t, []int{1, 16}, f.Forward(x).Shape())
			assert.Equal(t, []int{2, 12}, f.Forward(g.Const(tensor.Zeros(dt, 2, 3, 2, 2))).Shape())
			assert.Equal(t, []int{2, 6, 2}, (&nn.Flatten{StartDim: 1, EndDim: 2}).Forward(g.Const(tensor.Zeros(dt, 2, 3, 2, 2))).Shape())
			assert.Contains(t, panicMessage(t, func() { mp.Forward(g.Const(tensor.Zeros(dt, 4, 4))) }), "(4, 4)")
		})
	}
}

func TestEmbedding(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			e := nn.NewEmbedding(tensor.NewRNG(3), 4, 2, dt)
			require.Equal(t, []int{4, 2}, e.Weight.Value.Shape())
			set(e.Weight, 0, 1, 10, 11, 20, 21, 30, 31)
			g := graph.New()
			y := e.Forward(g, []int{2, 0, 2})
			assert.Equal(t, []int{3, 2}, y.Shape())
			assert.InDeltaSlice(t, []float64{20, 21, 0, 1, 20, 21}, y.Value().Values(), numtest.Tol(dt))
			y2 := e.Forward(g, []int{1, 2, 3, 0}, 2, 2)
			assert.Equal(t, []int{2, 2, 2}, y2.Shape())
			assert.InDeltaSlice(t, []float64{10, 11, 20, 21, 30, 31, 0, 1}, y2.Value().Values(), numtest.Tol(dt))
			// Row 2 used twice gets twice the gradient; row 3 none.
			loss := graph.Sum(y, nil, false)
			grad := nn.Gradients(loss, e.Params())[0]
			assert.InDeltaSlice(t, []float64{1, 1, 0, 0, 2, 2, 0, 0}, grad.Values(), numtest.Tol(dt))
			assert.Contains(t, panicMessage(t, func() { e.Forward(g, []int{4}) }), "Embedding(4, 2)")
		})
	}
}

func TestEmbeddingInitIsStandardNormal(t *testing.T) {
	for _, dt := range numtest.DTypes {
		e := nn.NewEmbedding(tensor.NewRNG(5), 200, 100, dt)
		m, v := meanVar(e.Weight.Value.Values())
		assert.InDelta(t, 0, m, 4*math.Sqrt(1.0/20000))
		assert.InDelta(t, 1, v, 4*math.Sqrt(2.0/20000))
	}
}

func TestDropout(t *testing.T) {
	const n = 20000
	for _, dt := range numtest.DTypes {
		for _, p := range []float64{0, 0.1, 0.5, 0.8, 1} {
			t.Run(fmt.Sprintf("%v/p=%v", dt, p), func(t *testing.T) {
				g := graph.New()
				x := g.Const(tensor.Ones(dt, 100, n/100))
				d := nn.NewDropout(tensor.NewRNG(7), p)
				y := d.Forward(x).Value().Values()
				zeros := 0
				for _, v := range y {
					if v == 0 {
						zeros++
					} else {
						require.InDelta(t, 1/(1-p), v, numtest.Tol(dt)*10, "kept values are scaled by 1/(1−p)")
					}
				}
				se := math.Sqrt(p * (1 - p) / n)
				assert.InDelta(t, p, float64(zeros)/n, 4*se, "fraction zeroed")

				// The same seed gives the same mask.
				y2 := nn.NewDropout(tensor.NewRNG(7), p).Forward(x).Value().Values()
				assert.Equal(t, y, y2)

				d.SetTraining(false)
				assert.False(t, d.Training())
				assert.Same(t, x, d.Forward(x), "identity in evaluation mode")
			})
		}
	}
}

func TestDropoutGradientUsesMask(t *testing.T) {
	for _, dt := range numtest.DTypes {
		g := graph.New()
		w := nn.NewParam(tensor.FromValues(dt, []float64{1, 2, 3, 4, 5, 6, 7, 8}, 8))
		y := nn.NewDropout(tensor.NewRNG(2), 0.5).Forward(w.Node(g))
		loss := graph.Sum(y, nil, false)
		grad := nn.Gradients(loss, []nn.NamedParam{{Name: "w", Param: w}})[0].Values()
		for i, v := range y.Value().Values() {
			// d(Σ mask·w)/dw = mask = y/w.
			assert.InDelta(t, v/float64(i+1), grad[i], numtest.Tol(dt))
		}
	}
}

func TestActivationLayers(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			x := g.Const(tensor.FromValues(dt, []float64{-1, 0, 2}, 3))
			sig := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
			cases := []struct {
				l    nn.Layer
				want []float64
			}{
				{nn.ReLU{}, []float64{0, 0, 2}},
				{nn.NewLeakyReLU(0.1), []float64{-0.1, 0, 2}},
				{nn.NewELU(2), []float64{2 * (math.Exp(-1) - 1), 0, 2}},
				{nn.Sigmoid{}, []float64{sig(-1), 0.5, sig(2)}},
				{nn.Tanh{}, []float64{math.Tanh(-1), 0, math.Tanh(2)}},
				{nn.Softplus{}, []float64{math.Log1p(math.Exp(-1)), math.Ln2, math.Log1p(math.Exp(2))}},
				// x·Φ(x) with Φ(x) = (1 + erf(x/√2))/2.
				{nn.GELU{}, []float64{-(1 + math.Erf(-1/math.Sqrt2)) / 2, 0, 2 * (1 + math.Erf(2/math.Sqrt2)) / 2}},
				{nn.SiLU{}, []float64{-sig(-1), 0, 2 * sig(2)}},
				{nn.Identity{}, []float64{-1, 0, 2}},
				{nn.Softmax{Axis: 0}, softmax(-1, 0, 2)},
			}
			for _, c := range cases {
				assert.InDeltaSlice(t, c.want, c.l.Forward(x).Value().Values(), 1e-6, "%T", c.l)
				assert.Nil(t, c.l.Params())
			}
		})
	}
}

func softmax(xs ...float64) []float64 {
	s := 0.0
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Exp(x)
		s += out[i]
	}
	for i := range out {
		out[i] /= s
	}
	return out
}

func meanVar(xs []float64) (m, v float64) {
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return m, v / float64(len(xs))
}

func TestErrorsNameTheLayer(t *testing.T) {
	g := graph.New()
	rng := tensor.NewRNG(1)
	dt := tensor.Float64
	cases := []struct {
		f    func()
		want []string
	}{
		{func() {
			nn.NewLSTM(rng, 28, 16, nn.RNNOptions{DType: dt}).Forward(g.Const(tensor.Zeros(dt, 5, 2, 27)), nil, nil)
		},
			[]string{"LSTM(28→16, 1 layers)", "(5, 2, 27)", "(T, B, 28)"}},
		{func() {
			nn.NewLSTM(rng, 28, 16, nn.RNNOptions{Layers: 2, BatchFirst: true, DType: dt}).Forward(g.Const(tensor.Zeros(dt, 5, 2, 28)), g.Const(tensor.Zeros(dt, 2, 2, 16)), nil)
		}, []string{"LSTM(28→16, 2 layers)", "(2, 2, 16)", "(2, 5, 16)"}},
		{func() {
			nn.NewGRUCell(rng, 3, 4, true, dt).Forward(g.Const(tensor.Zeros(dt, 2, 3)), g.Const(tensor.Zeros(dt, 2, 5)))
		},
			[]string{"GRUCell(3→4)", "(2, 5)", "(2, 4)"}},
		{func() { nn.NewBatchNorm2D(3, dt).Forward(g.Const(tensor.Zeros(dt, 2, 4, 5, 5))) },
			[]string{"BatchNorm2D(3)", "(2, 4, 5, 5)", "(N, 3, H, W)"}},
		{func() { nn.NewLayerNorm([]int{4}, 1e-5, true, dt).Forward(g.Const(tensor.Zeros(dt, 2, 3))) },
			[]string{"LayerNorm((4,))", "(2, 3)", "(..., 4)"}},
	}
	for _, c := range cases {
		msg := panicMessage(t, c.f)
		for _, w := range c.want {
			assert.True(t, strings.Contains(msg, w), "%q should contain %q", msg, w)
		}
	}
}

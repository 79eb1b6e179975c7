package nn_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

func TestFansAndGain(t *testing.T) {
	cases := []struct {
		shape   []int
		in, out int
	}{
		{[]int{256, 784}, 784, 256},
		{[]int{32, 3, 5, 5}, 75, 800},
		{[]int{4, 2, 3}, 6, 12},
	}
	for _, c := range cases {
		in, out := nn.Fans(c.shape)
		assert.Equal(t, c.in, in, "%v", c.shape)
		assert.Equal(t, c.out, out, "%v", c.shape)
	}
	assert.Contains(t, panicMessage(t, func() { nn.Fans([]int{5}) }), "(5,)")

	assert.Equal(t, 1.0, nn.Gain("linear", 0))
	assert.Equal(t, 1.0, nn.Gain("conv2d", 0))
	assert.InDelta(t, math.Sqrt2, nn.Gain("relu", 0), 1e-15)
	assert.InDelta(t, 5.0/3, nn.Gain("tanh", 0), 1e-15)
	assert.InDelta(t, math.Sqrt(2/1.0001), nn.Gain("leaky_relu", -1), 1e-15)
	assert.InDelta(t, math.Sqrt(1.0/3), nn.Gain("leaky_relu", math.Sqrt(5)), 1e-15)
	assert.Contains(t, panicMessage(t, func() { nn.Gain("swish", 0) }), "swish")
}

// checkDist asserts that the values lie within ±bound (if bound > 0) and
// have mean 0 and variance v within about five standard errors.
func checkDist(t *testing.T, vals []float64, bound, v float64, name string) {
	t.Helper()
	n := float64(len(vals))
	m, got := meanVar(vals)
	mx := 0.0
	for _, x := range vals {
		mx = math.Max(mx, math.Abs(x))
	}
	if bound > 0 {
		require.LessOrEqual(t, mx, bound*(1+1e-6), name)
		assert.Greater(t, mx, 0.99*bound, "%s: the bound is reached", name)
	}
	assert.InDelta(t, 0, m, 5*math.Sqrt(v/n), "%s: mean", name)
	assert.InDelta(t, v, got, 5*v*math.Sqrt(2/n), "%s: variance", name)
}

func TestInitialiserStatistics(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			rng := tensor.NewRNG(9)
			// Kaiming uniform, fan_in 512, relu: bound √2·√(3/512), variance 2/512.
			w := nn.KaimingUniform(rng, tensor.Zeros(dt, 256, 512), 0, nn.FanIn, "relu")
			b := math.Sqrt2 * math.Sqrt(3.0/512)
			checkDist(t, w.Values(), b, b*b/3, "kaiming uniform")
			// Kaiming normal, fan_out of (64, 32, 3, 3) = 576: variance 2/576.
			w = nn.KaimingNormal(rng, tensor.Zeros(dt, 64, 32, 3, 3), 0, nn.FanOut, "relu")
			checkDist(t, w.Values(), 0, 2.0/576, "kaiming normal")
			// Leaky ReLU slope 0.2, fan_in 400: variance 2/(1.04·400).
			w = nn.KaimingNormal(rng, tensor.Zeros(dt, 100, 400), 0.2, nn.FanIn, "leaky_relu")
			checkDist(t, w.Values(), 0, 2/(1.04*400), "kaiming normal leaky")
			// Xavier uniform, (300, 200), gain 2: bound 2·√(6/500).
			w = nn.XavierUniform(rng, tensor.Zeros(dt, 300, 200), 2)
			b = 2 * math.Sqrt(6.0/500)
			checkDist(t, w.Values(), b, b*b/3, "xavier uniform")
			// Xavier normal: variance 2/500.
			w = nn.XavierNormal(rng, tensor.Zeros(dt, 300, 200), 1)
			checkDist(t, w.Values(), 0, 2.0/500, "xavier normal")
			// Uniform and Normal with arbitrary parameters.
			w = nn.Uniform(rng, tensor.Zeros(dt, 100, 100), 1, 3)
			checkDist(t, tensor.AddScalar(w, -2).Values(), 1, 1.0/3, "uniform")
			w = nn.Normal(rng, tensor.Zeros(dt, 100, 100), -1, 0.5)
			checkDist(t, tensor.AddScalar(w, 1).Values(), 0, 0.25, "normal")

			assert.Equal(t, []float64{1, 1, 1}, nn.Ones(tensor.Zeros(dt, 3)).Values())
			assert.Equal(t, []float64{0, 0}, nn.Zeros(tensor.Ones(dt, 2)).Values())

			// Same seed, same weights.
			a := nn.XavierUniform(tensor.NewRNG(3), tensor.Zeros(dt, 4, 5), 1).Values()
			assert.Equal(t, a, nn.XavierUniform(tensor.NewRNG(3), tensor.Zeros(dt, 4, 5), 1).Values())
		})
	}
}

func TestLayerDefaultInit(t *testing.T) {
	rng := tensor.NewRNG(2)
	// PyTorch: U(−1/√fan_in, 1/√fan_in) for weight and bias.
	l := nn.NewLinear(rng, 400, 300, true, tensor.Float64)
	b := 1 / math.Sqrt(400)
	checkDist(t, l.Weight.Value.Values(), b, b*b/3, "linear weight")
	for _, v := range l.Bias.Value.Values() {
		require.LessOrEqual(t, math.Abs(v), b)
	}
	c := nn.NewConv2D(rng, 16, 64, [2]int{3, 3}, nn.Conv2DOptions{DType: tensor.Float64})
	b = 1 / math.Sqrt(16*9)
	checkDist(t, c.Weight.Value.Values(), b, b*b/3, "conv weight")
	for _, v := range c.Bias.Value.Values() {
		require.LessOrEqual(t, math.Abs(v), b)
	}
}

func TestOrthogonal(t *testing.T) {
	cases := []struct {
		shape []int
		gain  float64
	}{
		{[]int{6, 4}, 1},       // tall: orthonormal columns
		{[]int{3, 5}, 1},       // wide: orthonormal rows
		{[]int{5, 5}, 2},       // square, scaled
		{[]int{4, 2, 3, 3}, 1}, // viewed as 4×18
	}
	for _, dt := range numtest.DTypes {
		for _, c := range cases {
			w := nn.Orthogonal(tensor.NewRNG(8), tensor.Zeros(dt, c.shape...), c.gain)
			require.Equal(t, c.shape, w.Shape())
			m := tensor.Reshape(w, c.shape[0], -1)
			rows, cols := m.Shape()[0], m.Shape()[1]
			// QᵀQ = gain²·I over the smaller side.
			var prod *tensor.Tensor
			k := cols
			if rows < cols {
				prod, k = tensor.MatMulT(m, m, false, true), rows
			} else {
				prod = tensor.MatMulT(m, m, true, false)
			}
			want := tensor.MulScalar(tensor.Eye(tensor.Float64, k), c.gain*c.gain).Values()
			assert.InDeltaSlice(t, want, prod.Values(), 1e-5, "%v %v", dt, c.shape)
		}
	}
	assert.Contains(t, panicMessage(t, func() { nn.Orthogonal(tensor.NewRNG(1), tensor.Zeros(tensor.Float64, 3), 1) }), "(3,)")
}

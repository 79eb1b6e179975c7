package gp

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// A GP with mean m(x) is the zero-mean GP of y − m(x) shifted back by
// m(xs): the LML and the predictions agree with that model to 1e-12, for
// the linear mean and for a network (an nn.Linear) holding the same
// weights.
func TestMeanFuncsMatchShiftedTargets(t *testing.T) {
	x, y := toyData(31, 12, 2)
	w, b := []float64{0.75, -1.25}, 0.5 // exact in float32, the network's dtype
	shift := func(x *tensor.Tensor) []float64 {
		out := make([]float64, x.Shape()[0])
		for i := range out {
			out[i] = x.At(i, 0)*w[0] + x.At(i, 1)*w[1] + b
		}
		return out
	}
	ys := y.Values()
	for i, s := range shift(x) {
		ys[i] -= s
	}
	ref, err := NewExact(x, tensor.FromFloat64s(ys, 12), ExactOptions{Kernel: kernel.NewRBF(0.9)})
	require.NoError(t, err)
	lin := NewLinearMean(2)
	require.NoError(t, lin.Weight().Set(w...))
	require.NoError(t, lin.Bias().Set(b))
	layer := nn.NewLinear(tensor.NewRNG(1), 2, 1, true, tensor.Float32)
	tensor.CopyInto(layer.Weight.Value, tensor.FromValues(tensor.Float32, w, 1, 2))
	tensor.CopyInto(layer.Bias.Value, tensor.FromValues(tensor.Float32, []float64{b}, 1))
	xs := tensor.NewRNG(32).Uniform(tensor.Float64, -2, 2, 5, 2)
	pr, err := ref.Predict(xs)
	require.NoError(t, err)
	want := pr.Mean.Values()
	for i, s := range shift(xs) {
		want[i] += s
	}
	for name, mf := range map[string]MeanFunc{"linear": lin, "module": NewModuleMean(layer)} {
		m, err := NewExact(x, y, ExactOptions{Kernel: kernel.NewRBF(0.9), MeanFunc: mf})
		require.NoError(t, err, name)
		assert.InDelta(t, lmlOf(t, ref), lmlOf(t, m), 1e-12, name)
		p, err := m.Predict(xs)
		require.NoError(t, err)
		numtest.Close(t, want, p.Mean, 1e-12, name)
		numtest.Close(t, pr.Var.Values(), p.Var, 1e-12, name)
	}
	assert.Equal(t, tensor.Float64, layer.Weight.Value.DType(), "the model converts the network to its dtype")
	_, err = NewExact(x, y, ExactOptions{Kernel: kernel.NewRBF(1), MeanFunc: lin, Mean: ConstantMean})
	assert.ErrorContains(t, err, "MeanFunc needs Mean = ZeroMean")
}

// GradCheck of the LML with respect to a network mean's parameters (a
// Tanh layer under a linear read-out) and the kernel's.
func TestModuleMeanGradCheck(t *testing.T) {
	x, y := toyData(33, 8, 2)
	net := nn.NewSequential(nn.NewLinear(tensor.NewRNG(2), 2, 3, true, tensor.Float64), nn.Tanh{}, nn.NewLinear(tensor.NewRNG(3), 3, 1, true, tensor.Float64))
	m, err := NewExact(x, y, ExactOptions{Kernel: kernel.NewRBF(1), MeanFunc: NewModuleMean(net)})
	require.NoError(t, err)
	ps := m.Hyperparams()
	assert.Equal(t, "mean.0.weight", ps[2].Name())
	gradCheckLML(t, "lml(module mean)", ps, m.LogMarginalLikelihood)
}

// Fitting a linear mean recovers a linear trend under a wiggle, and the
// fitted model extrapolates along it.
func TestFitLinearMean(t *testing.T) {
	rng := tensor.NewRNG(34)
	const n = 40
	x := rng.Uniform(tensor.Float64, -2, 2, n, 1)
	yv := make([]float64, n)
	for i := range yv {
		yv[i] = 2*x.At(i, 0) - 1 + 0.3*math.Sin(4*x.At(i, 0)) + 0.05*rng.NormFloat64()
	}
	lin := NewLinearMean(1)
	m, err := FitExact(context.Background(), x, tensor.FromFloat64s(yv, n), ExactOptions{Kernel: kernel.NewScale(kernel.NewRBF(0.5), 0.1), MeanFunc: lin, Noise: 0.01})
	if err != nil {
		numtest.Unconverged(t, err, "gp.FitExact", lin.Weight().Get())
	}
	assert.InDelta(t, 2, lin.Weight().Value(), 0.15)
	assert.InDelta(t, -1, lin.Bias().Value(), 0.15)
	p, err := m.Predict(tensor.FromFloat64s([]float64{6}, 1, 1))
	require.NoError(t, err)
	assert.InDelta(t, 11, p.Mean.Item(), 0.8, "far from the data the prediction follows the trend")
}

// Misuse of the mean functions panics naming the call.
func TestMeanFuncMisuse(t *testing.T) {
	g := graph.New()
	numtest.Misuse(t, "gp.LinearMean", numtest.Here(), func() { NewLinearMean(2).Mean(g.Const(tensor.Zeros(tensor.Float64, 3, 3))) }, "want (n, 2)")
	numtest.Misuse(t, "gp.NewLinearMean", numtest.Here(), func() { NewLinearMean(0) })
	wide := NewModuleMean(nn.NewLinear(tensor.NewRNG(1), 2, 2, true, tensor.Float64))
	numtest.Misuse(t, "gp.ModuleMean", numtest.Here(), func() { wide.Mean(g.Const(tensor.Zeros(tensor.Float64, 3, 2))) }, "want (3, 1) or (3)")
}

package kernel

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// A deep kernel is its base kernel on the network's features: with a
// Linear layer W = [[1, 2], [0, −1], [0.5, 0]], b = (0, 1, −1) the RBF of
// lengthscale 1.5 on h = Wx + b, worked out by hand for two points.
func TestDeepKernelByHand(t *testing.T) {
	lin := nn.NewLinear(tensor.NewRNG(1), 2, 3, true, tensor.Float64)
	tensor.CopyInto(lin.Weight.Value, tensor.FromFloat64s([]float64{1, 2, 0, -1, 0.5, 0}, 3, 2))
	tensor.CopyInto(lin.Bias.Value, tensor.FromFloat64s([]float64{0, 1, -1}, 3))
	k := NewDeep(lin, NewRBF(1.5))
	g := graph.New()
	x := g.Const(tensor.FromFloat64s([]float64{1, 0, 0, 1}, 2, 2))
	// h(1, 0) = (1, 1, −0.5), h(0, 1) = (2, 0, −1): ‖Δ‖² = 1 + 1 + 0.25.
	kx := k.K(x, x)
	want := math.Exp(-2.25 / (2 * 1.5 * 1.5))
	numtest.Close(t, []float64{1, want, want, 1}, kx.Value(), 1e-14)
	numtest.Close(t, []float64{1, 1}, k.Diag(x).Value(), 1e-14)
	names := []string{}
	for _, p := range k.Hyperparams() {
		names = append(names, p.Name())
	}
	assert.Equal(t, []string{"rbf.lengthscale", "features.weight", "features.bias"}, names)
	// The hyperparameters are the layer's parameters, shared.
	assert.Same(t, lin.Weight.Value, k.Hyperparams()[1].Raw())
	require.NoError(t, k.Hyperparams()[2].Set(1, 2, 3))
	assert.Equal(t, []float64{1, 2, 3}, lin.Bias.Value.Values())
}

// Gradients flow through the network: GradCheck of Σ K(x, x') with
// respect to the layer's weight (a Tanh network under a Matérn kernel).
func TestDeepKernelGradCheck(t *testing.T) {
	lin := nn.NewLinear(tensor.NewRNG(2), 2, 2, true, tensor.Float64)
	k := NewDeep(nn.NewSequential(lin, nn.Tanh{}), NewMatern52(0.9))
	rng := tensor.NewRNG(3)
	x1, x2 := rng.Normal(tensor.Float64, 0, 1, 4, 2), rng.Normal(tensor.Float64, 0, 1, 3, 2)
	_, err := autodiff.GradCheck(func(xs []*graph.Node) *graph.Node {
		g := xs[0].Graph()
		g.Bind(lin.Weight.Value, xs[0])
		return graph.Sum(k.K(g.Const(x1), g.Const(x2)), nil, false)
	}, []*tensor.Tensor{lin.Weight.Value.Clone()}, autodiff.GradCheckOptions{Name: "deep", Order: 1})
	assert.NoError(t, err)
}

// A feature width the base kernel does not accept panics naming the width.
func TestDeepKernelWidthMismatch(t *testing.T) {
	k := NewDeep(nn.NewLinear(tensor.NewRNG(4), 2, 3, true, tensor.Float64), NewRBF(1, 1))
	g := graph.New()
	x := g.Const(tensor.Zeros(tensor.Float64, 4, 2))
	numtest.Misuse(t, "kernel.Deep", numtest.Here(), func() { k.K(x, x) }, "the feature extractor gives 3 features")
	numtest.Misuse(t, "kernel.NewDeep", numtest.Here(), func() { NewDeep(nil, NewRBF(1)) }, "nil")
}

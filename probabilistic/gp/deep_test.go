package gp

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/metrics"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// rings returns n points on two noisy rings of radius 1 (label 0) and 2.5
// (label 1).
func rings(seed uint64, n int) (*tensor.Tensor, []int) {
	rng := tensor.NewRNG(seed)
	xv := make([]float64, 0, 2*n)
	labels := make([]int, n)
	for i := range labels {
		labels[i] = i % 2
		r := 1 + 1.5*float64(labels[i])
		a := 2 * math.Pi * rng.Float64()
		xv = append(xv, r*math.Cos(a)+0.15*rng.NormFloat64(), r*math.Sin(a)+0.15*rng.NormFloat64())
	}
	return tensor.FromFloat64s(xv, n, 2), labels
}

// smallNet returns a 2 → 8 → 2 Tanh network in float64.
func smallNet(seed uint64) *nn.Sequential {
	rng := tensor.NewRNG(seed)
	return nn.NewSequential(nn.NewLinear(rng, 2, 8, true, tensor.Float64), nn.Tanh{}, nn.NewLinear(rng, 8, 2, true, tensor.Float64))
}

// Deep kernel learning on the variational objective: an SVGP classifier
// (Bernoulli likelihood, minibatches) with a deep kernel trains the
// network and separates two rings.
func TestDeepKernelSVGPClassifier(t *testing.T) {
	x, labels := rings(1, 200)
	xt, lt := rings(2, 100)
	net := smallNet(3)
	before := net.Params()[0].Value.Clone()
	m, err := FitSVGPClassifier(context.Background(), x, labels, SVGPOptions{
		Kernel: kernel.NewScale(kernel.NewDeep(net, kernel.NewRBF(1)), 1), NumInducing: 16, BatchSize: 50, Steps: 300, LR: 0.03, Seed: 4})
	require.NoError(t, err)
	assert.NotEqual(t, before.Values(), net.Params()[0].Value.Values(), "the network is trained")
	pred, err := m.Predict(xt)
	require.NoError(t, err)
	acc, err := metrics.Accuracy(pred, lt)
	require.NoError(t, err)
	assert.Greater(t, acc, 0.95)
}

// Deep kernel learning on the exact objective: FitExact with Adam trains
// the network with the kernel and raises the LML; a network whose output
// width the kernel does not accept is an error naming the width.
func TestDeepKernelFitExact(t *testing.T) {
	x, y := toyData(5, 40, 2)
	net := smallNet(6)
	m, err := FitExact(context.Background(), x, y, ExactOptions{Kernel: kernel.NewScale(kernel.NewDeep(net, kernel.NewRBF(1)), 1), Optimizer: "adam", MaxIter: 100, LR: 0.02})
	require.NoError(t, err)
	fr := m.FitResult()
	start, err := NewExact(x, y, ExactOptions{Kernel: kernel.NewScale(kernel.NewDeep(smallNet(6), kernel.NewRBF(1)), 1)})
	require.NoError(t, err)
	assert.Greater(t, fr.LML, lmlOf(t, start)+5)
	assert.NotNil(t, m.Hyperparam("features.0.weight"))

	bad := kernel.NewDeep(smallNet(7), kernel.NewRBF(1, 1, 1))
	_, err = FitExact(context.Background(), x, y, ExactOptions{Kernel: bad, MaxIter: 5})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the feature extractor gives 2 features, which the base kernel does not accept")
	e, err := NewExact(x, y, ExactOptions{Kernel: bad})
	require.NoError(t, err)
	_, err = e.Predict(x)
	assert.ErrorContains(t, err, "the feature extractor gives 2 features")
}

// The same with K classes: a deep kernel under the SVGP's softmax
// likelihood (Monte Carlo ELBO) separates three blobs.
func TestDeepKernelSVGPSoftmax(t *testing.T) {
	x, labels := threeBlobs(8, 150)
	xt, lt := threeBlobs(9, 90)
	net := smallNet(10)
	m, err := FitSVGPClassifier(context.Background(), x, labels, SVGPOptions{
		Kernel: kernel.NewScale(kernel.NewDeep(net, kernel.NewRBF(1)), 1), Likelihood: NewSoftmaxLikelihood(3, 8, 11),
		NumInducing: 12, BatchSize: 50, Steps: 200, LR: 0.03, Seed: 12})
	require.NoError(t, err)
	pred, err := m.Predict(xt)
	require.NoError(t, err)
	acc, err := metrics.Accuracy(pred, lt)
	require.NoError(t, err)
	assert.Greater(t, acc, 0.85)
}

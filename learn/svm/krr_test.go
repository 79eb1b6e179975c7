package svm_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/learn/svm"
	"github.com/gradus-ml/gradus/probabilistic/gp"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// Kernel ridge regression with λ predicts exactly the posterior mean of the
// zero-mean GP with noise σ² = λ (Rasmussen and Williams 2006, §6.2), here through
// probabilistic/gp's exact model with its noise fixed.
func TestKernelRidgeEqualsGPPosteriorMean(t *testing.T) {
	rng := tensor.NewRNG(3)
	x := rng.Uniform(tensor.Float64, -3, 3, 40, 2)
	z := make([]float64, 40)
	for i := range z {
		z[i] = x.At(i, 0)*x.At(i, 0)/3 - x.At(i, 1) + 0.1*rng.NormFloat64()
	}
	const lambda = 0.05
	k := kernel.NewScale(kernel.NewRBF(1.3), 2)
	r, err := svm.FitKernelRidge(x, tensor.FromFloat64s(z, len(z)), svm.KernelRidgeOptions{Kernel: k, Lambda: lambda})
	require.NoError(t, err)
	m, err := gp.NewExact(x, tensor.FromFloat64s(z, 40), gp.ExactOptions{Kernel: k, Noise: lambda, FixNoise: true, NoiseFloor: 1e-12})
	require.NoError(t, err)
	xs := rng.Uniform(tensor.Float64, -3, 3, 15, 2)
	pred, err := m.Predict(xs)
	require.NoError(t, err)
	assert.InDeltaSlice(t, pred.Mean.Values(), r.Predict(xs).Values(), 1e-9)
}

// By hand: one point x = 0 with z = 2 and K(0, 0) = 1 gives α = 2/(1 + λ);
// with λ = 1, f(0) = 1 and f at distance 1 is e^{-1/2}.
func TestKernelRidgeByHand(t *testing.T) {
	r, err := svm.FitKernelRidge(tensor.FromFloat64s([]float64{0}, 1, 1), tensor.FromFloat64s([]float64{2}, 1), svm.KernelRidgeOptions{Kernel: kernel.NewRBF(1), Lambda: 1})
	require.NoError(t, err)
	assert.InDeltaSlice(t, []float64{1}, r.Alpha, 1e-15)
	assert.InDeltaSlice(t, []float64{1, 0.6065306597126334}, r.Predict(tensor.FromFloat64s([]float64{0, 1}, 2, 1)).Values(), 1e-15)
	_, err = svm.FitKernelRidge(tensor.FromFloat64s([]float64{0}, 1, 1), tensor.FromFloat64s([]float64{2}, 1), svm.KernelRidgeOptions{Kernel: kernel.NewRBF(1), Lambda: -1})
	assert.ErrorContains(t, err, "λ = -1")
}

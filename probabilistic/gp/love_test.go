package gp

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// LOVE's predictive variances equal the exact ones to 1e-3 relative at
// n = 2,000 (and its means to 1e-6 of y's scale), from one Lanczos
// decomposition of the default rank 100, for an RBF kernel of lengthscale
// 0.8 on [−2, 2]² with noise 0.05 (the worst relative error is about
// 2e-4). Rougher kernels need a higher rank: at lengthscale 0.5 and noise
// 0.01 rank 150 still leaves 7e-2.
func TestLOVEMatchesExactAtN2000(t *testing.T) {
	x, y := toyData(21, 2000, 2)
	m, err := NewExact(x, y, ExactOptions{Kernel: kernel.NewScale(kernel.NewRBF(0.8), 1), Noise: 0.05, Mean: ConstantMean})
	require.NoError(t, err)
	require.NoError(t, m.Hyperparam("mean").Set(0.4))
	xs := tensor.NewRNG(22).Uniform(tensor.Float64, -2.5, 2.5, 100, 2)
	exact, err := m.Predict(xs)
	require.NoError(t, err)
	c, err := m.LOVE(LOVEOptions{})
	require.NoError(t, err)
	assert.Equal(t, 100, c.Rank())
	love, err := c.Predict(xs)
	require.NoError(t, err)
	worst := 0.0
	for i, v := range exact.Var.Values() {
		worst = math.Max(worst, math.Abs(love.Var.Values()[i]-v)/v)
	}
	t.Logf("largest relative variance error %.2e", worst)
	assert.Less(t, worst, 1e-3)
	for i, v := range exact.Mean.Values() {
		assert.InDelta(t, v, love.Mean.Values()[i], 1e-6)
	}
}

// With the rank at n Lanczos is exact: LOVE reproduces Predict to 1e-8,
// with normalisation and a linear mean, and its samples have the exact
// posterior's mean and covariance.
func TestLOVEFullRankIsExact(t *testing.T) {
	x, y := toyData(23, 30, 1)
	m, err := NewExact(x, y, ExactOptions{Kernel: kernel.NewScale(kernel.NewMatern52(0.7), 1), Noise: 0.1, Normalize: true, MeanFunc: NewLinearMean(1)})
	require.NoError(t, err)
	require.NoError(t, m.Hyperparam("mean.weight").Set(0.3))
	xs := tensor.NewRNG(24).Uniform(tensor.Float64, -2, 2, 6, 1)
	exact, err := m.Predict(xs)
	require.NoError(t, err)
	c, err := m.LOVE(LOVEOptions{Rank: 30})
	require.NoError(t, err)
	love, err := c.Predict(xs)
	require.NoError(t, err)
	for i := range 6 {
		assert.InDelta(t, exact.Mean.Values()[i], love.Mean.Values()[i], 1e-8)
		assert.InDelta(t, exact.Var.Values()[i], love.Var.Values()[i], 1e-8)
		assert.InDelta(t, exact.NoisyVar.Values()[i], love.NoisyVar.Values()[i], 1e-8)
	}
	const draws = 20000
	s, err := c.SamplePosterior(xs, draws, tensor.NewRNG(25))
	require.NoError(t, err)
	assert.Equal(t, []int{draws, 6}, s.Shape())
	checkMoments(t, s, exact.Mean.Values(), exact.Var.Values())
}

// checkMoments compares the sample means and variances of the columns of
// s (count, m) with the given ones, to 5 standard errors.
func checkMoments(t *testing.T, s *tensor.Tensor, mean, variance []float64) {
	t.Helper()
	n, m := s.Shape()[0], s.Shape()[1]
	v := s.Values()
	for j := range m {
		mu, sq := 0.0, 0.0
		for i := range n {
			mu += v[i*m+j]
		}
		mu /= float64(n)
		for i := range n {
			sq += (v[i*m+j] - mu) * (v[i*m+j] - mu)
		}
		sq /= float64(n - 1)
		assert.InDelta(t, mean[j], mu, 5*math.Sqrt(variance[j]/float64(n))+1e-9, "mean %d", j)
		assert.InDelta(t, variance[j], sq, 5*variance[j]*math.Sqrt(2/float64(n))+1e-9, "variance %d", j)
	}
}

// Prior samples have the kernel's covariance and the mean function's
// mean: with a Scale(RBF) kernel of variance 2 the sample covariance of
// two points at distance d is 2·exp(−d²/2ℓ²).
func TestSamplePrior(t *testing.T) {
	xs := tensor.FromFloat64s([]float64{0, 0.5, 3}, 3, 1)
	lin := NewLinearMean(1)
	require.NoError(t, lin.Weight().Set(2))
	require.NoError(t, lin.Bias().Set(-1))
	const draws = 40000
	s, err := SamplePrior(kernel.NewScale(kernel.NewRBF(1), 2), lin, xs, draws, tensor.NewRNG(26))
	require.NoError(t, err)
	checkMoments(t, s, []float64{-1, 0, 5}, []float64{2, 2, 2})
	cov := 0.0
	v := s.Values()
	for i := range draws {
		cov += (v[i*3] + 1) * v[i*3+1]
	}
	cov /= draws
	assert.InDelta(t, 2*math.Exp(-0.125), cov, 0.05)
	// The model's prior, with its constant mean and y's scale.
	x, y := toyData(27, 10, 1)
	m, err := NewExact(x, y, ExactOptions{Kernel: kernel.NewRBF(1), Mean: ConstantMean, Normalize: true})
	require.NoError(t, err)
	require.NoError(t, m.Hyperparam("mean").Set(1))
	ps, err := m.SamplePrior(xs, draws, tensor.NewRNG(28))
	require.NoError(t, err)
	mu, sd := m.YScale()
	checkMoments(t, ps, []float64{mu + sd, mu + sd, mu + sd}, []float64{sd * sd, sd * sd, sd * sd})
	_, err = SamplePrior(kernel.NewRBF(1), nil, xs, 0, tensor.NewRNG(1))
	assert.ErrorContains(t, err, "count 0 < 1")
}

// On a CG-inference model LOVE runs on the matrix-free kernel tiles and
// gives the same cache as on the dense covariance: predictions agree to
// 1e-8, and with the exact ones to 1e-3 relative.
func TestLOVEOnCGModel(t *testing.T) {
	x, y := toyData(29, 500, 2)
	mk := func(inf Inference) *Exact {
		m, err := NewExact(x, y, ExactOptions{Kernel: kernel.NewScale(kernel.NewRBF(0.8), 1.5), Noise: 0.05, Mean: ConstantMean, Normalize: true, Inference: inf})
		require.NoError(t, err)
		require.NoError(t, m.Hyperparam("mean").Set(0.2))
		return m
	}
	dense, cg := mk(Cholesky), mk(CG)
	xs := tensor.NewRNG(30).Uniform(tensor.Float64, -2.5, 2.5, 40, 2)
	exact, err := dense.Predict(xs)
	require.NoError(t, err)
	var preds [2]*Prediction
	for i, m := range []*Exact{dense, cg} {
		c, err := m.LOVE(LOVEOptions{Rank: 150})
		require.NoError(t, err)
		preds[i], err = c.Predict(xs)
		require.NoError(t, err)
	}
	numtest.Close(t, preds[0].Mean.Values(), preds[1].Mean, 1e-8, "mean")
	numtest.Close(t, preds[0].Var.Values(), preds[1].Var, 1e-8, "var")
	numtest.Close(t, preds[0].NoisyVar.Values(), preds[1].NoisyVar, 1e-8, "noisy var")
	for i, v := range exact.Var.Values() {
		assert.InDelta(t, v, preds[1].Var.Values()[i], 1e-3*v, "var %d", i)
	}
	c, err := cg.LOVE(LOVEOptions{Rank: 10})
	require.NoError(t, err)
	_, err = c.SamplePosterior(xs, 2, tensor.NewRNG(1))
	assert.ErrorContains(t, err, "needs a model with Cholesky inference")
}

package mixture_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/learn/mixture"
	"github.com/gradus-ml/gradus/tensor"
)

// Rows drawn from two Bernoulli prototypes, (0.9, 0.9, 0.1, 0.1) with
// weight 0.3 and (0.1, 0.2, 0.8, 0.9) with weight 0.7: EM recovers both
// within sampling error, and its log-likelihood never decreases.
func TestBernoulliMixtureRecoversPrototypes(t *testing.T) {
	rng := tensor.NewRNG(8)
	protos := [][]float64{{0.9, 0.9, 0.1, 0.1}, {0.1, 0.2, 0.8, 0.9}}
	n := 6000
	x := make([]float64, 0, n*4)
	for range n {
		p := protos[1]
		if rng.Float64() < 0.3 {
			p = protos[0]
		}
		for _, q := range p {
			v := 0.0
			if rng.Float64() < q {
				v = 1
			}
			x = append(x, v)
		}
	}
	xt := tensor.FromFloat64s(x, n, 4)
	m, err := mixture.FitBernoulliMixture(ctx, xt, mixture.BernoulliMixtureOptions{K: 2, MaxIter: 500, Tol: 1e-9, Seed: 3})
	require.NoError(t, err)
	for i := 1; i < len(m.Trace); i++ {
		assert.GreaterOrEqual(t, m.Trace[i], m.Trace[i-1]-1e-12)
	}
	first := 0
	if m.Means.At(0, 0) < m.Means.At(1, 0) {
		first = 1
	}
	assert.InDelta(t, 0.3, m.Weights[first], 0.02)
	for f := range 4 {
		assert.InDelta(t, protos[0][f], m.Means.At(first, f), 0.03)
		assert.InDelta(t, protos[1][f], m.Means.At(1-first, f), 0.03)
	}
	// The prediction methods agree with the fitted likelihood, and a row
	// of the first prototype's mode belongs to the first component.
	assert.InDelta(t, m.LogLikelihood, tensor.Mean(m.LogProb(xt), nil, false).Item(), 1e-12)
	one := tensor.FromFloat64s([]float64{1, 1, 0, 0}, 1, 4)
	assert.Equal(t, []int{first}, m.Predict(one))
	p := m.PredictProba(one).Float64s()
	assert.InDelta(t, 1, p[0]+p[1], 1e-12)
	assert.Greater(t, p[first], 0.99)
}

// On 300 binarised MNIST digits, ten components rise well above one
// (the independent-pixels model).
func TestBernoulliMixtureOnMNIST(t *testing.T) {
	x, _, err := data.MNIST("train")
	require.NoError(t, err)
	imgs := tensor.Reshape(tensor.Slice(x, 0, 0, 300, 1), 300, 784).Contiguous().Values()
	for i, v := range imgs {
		imgs[i] = 0
		if v > 0.5 {
			imgs[i] = 1
		}
	}
	bin := tensor.FromFloat64s(imgs, 300, 784)
	one, err := mixture.FitBernoulliMixture(ctx, bin, mixture.BernoulliMixtureOptions{K: 1, MaxIter: 5, Seed: 1})
	require.NoError(t, err)
	ten, err := mixture.FitBernoulliMixture(ctx, bin, mixture.BernoulliMixtureOptions{K: 10, MaxIter: 10, Seed: 1})
	assert.ErrorIs(t, err, tensor.ErrNotConverged, "ten iterations are too few")
	assert.Greater(t, ten.LogLikelihood, one.LogLikelihood+40, "nats per image")
}

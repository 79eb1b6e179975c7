package inference

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/tensor"
)

// noisyBlob is a 20×20 image, +1 inside a centred square and −1 outside,
// and its observations with Gaussian noise of standard deviation sigma.
func noisyBlob(sigma float64, seed uint64) (clean, y []float64) {
	rng := tensor.NewRNG(seed)
	for r := range 20 {
		for c := range 20 {
			v := -1.0
			if r >= 5 && r < 15 && c >= 5 && c < 15 {
				v = 1
			}
			clean = append(clean, v)
			y = append(y, v+sigma*rng.NormFloat64())
		}
	}
	return clean, y
}

// Without coupling the posterior factorises: after one sweep μᵢ = tanh(yᵢ/σ²)
// (each pixel's posterior alone).
func TestIsingWithoutCoupling(t *testing.T) {
	_, y := noisyBlob(0.7, 1)
	res, err := IsingDenoise(ctx, tensor.FromFloat64s(y, 20, 20), IsingOptions{Sigma: 0.7, Sweeps: 1})
	require.NoError(t, err)
	for i, v := range res.Mean.Values() {
		assert.InDelta(t, math.Tanh(y[i]/0.49), v, 1e-15)
	}
}

// With coupling the ELBO never decreases over the sweeps, and the signs of
// μ recover the image far better than the signs of y.
func TestIsingDenoises(t *testing.T) {
	clean, y := noisyBlob(1.0, 2)
	res, err := IsingDenoise(ctx, tensor.FromFloat64s(y, 20, 20), IsingOptions{Coupling: 0.8, Sigma: 1.0, Sweeps: 15})
	require.NoError(t, err)
	for i := 1; i < len(res.ELBO); i++ {
		assert.GreaterOrEqual(t, res.ELBO[i], res.ELBO[i-1]-1e-9, "sweep %d", i)
	}
	wrongNoisy, wrongDenoised := 0, 0
	for i, v := range res.Mean.Values() {
		if (y[i] > 0) != (clean[i] > 0) {
			wrongNoisy++
		}
		if (v > 0) != (clean[i] > 0) {
			wrongDenoised++
		}
	}
	assert.Greater(t, wrongNoisy, 40, "σ = 1 flips about 16 %% of 400 pixels")
	assert.Less(t, wrongDenoised, wrongNoisy/4)
	_, err = IsingDenoise(ctx, tensor.FromFloat64s(y, 20, 20), IsingOptions{Coupling: 0.8, Sigma: -1, Sweeps: 1})
	assert.ErrorContains(t, err, "σ > 0")
	// Cancelled after 3 sweeps, it returns those 3 sweeps' q.
	part, err := IsingDenoise(&countdown{Context: ctx, n: 3}, tensor.FromFloat64s(y, 20, 20), IsingOptions{Coupling: 0.8, Sigma: 1.0, Sweeps: 15})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, res.ELBO[:3], part.ELBO)
	three, err := IsingDenoise(ctx, tensor.FromFloat64s(y, 20, 20), IsingOptions{Coupling: 0.8, Sigma: 1.0, Sweeps: 3})
	require.NoError(t, err)
	assert.Equal(t, three.Mean.Values(), part.Mean.Values())
}

package inference

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

type looFixture struct {
	Y, Mu, Sigma []float64
	WAIC         struct {
		ELPD, P, SE float64
		Pointwise   []float64
	}
	LOO struct {
		ELPD, P, SE  float64
		Pointwise, K []float64
	}
}

// logLikMatrix rebuilds the fixture's (S, N) normal log-likelihoods.
func logLikMatrix(fx looFixture) *tensor.Tensor {
	s, n := len(fx.Mu), len(fx.Y)
	v := make([]float64, 0, s*n)
	for d := 0; d < s; d++ {
		for _, y := range fx.Y {
			z := (y - fx.Mu[d]) / fx.Sigma[d]
			v = append(v, -0.5*math.Log(2*math.Pi)-math.Log(fx.Sigma[d])-0.5*z*z)
		}
	}
	return tensor.FromFloat64s(v, s, n)
}

// WAIC and PSIS-LOO, pointwise values and Pareto k̂, against the NumPy
// implementation of testdata/make_loo.py (1000 posterior draws of a normal
// model, 20 observations and an outlier).
func TestWAICAndPSISLOOAgainstNumPy(t *testing.T) {
	raw, err := os.ReadFile("testdata/loo.json")
	require.NoError(t, err)
	var fx looFixture
	require.NoError(t, json.Unmarshal(raw, &fx))
	ll := logLikMatrix(fx)

	w, err := WAIC(ll)
	require.NoError(t, err)
	assert.InDelta(t, fx.WAIC.ELPD, w.Estimate, 1e-10)
	assert.InDelta(t, fx.WAIC.P, w.P, 1e-10)
	assert.InDelta(t, fx.WAIC.SE, w.SE, 1e-10)
	assert.InDeltaSlice(t, fx.WAIC.Pointwise, w.Pointwise, 1e-10)
	assert.Nil(t, w.ParetoK)

	l, err := PSISLOO(ll)
	require.NoError(t, err)
	assert.InDelta(t, fx.LOO.ELPD, l.Estimate, 1e-10)
	assert.InDelta(t, fx.LOO.P, l.P, 1e-10)
	assert.InDelta(t, fx.LOO.SE, l.SE, 1e-10)
	assert.InDeltaSlice(t, fx.LOO.Pointwise, l.Pointwise, 1e-10)
	assert.InDeltaSlice(t, fx.LOO.K, l.ParetoK, 1e-10)
	assert.InDelta(t, 2.0/3, l.KThreshold, 1e-15, "S = 1000: min(1 − 1/log₁₀ 1000, 0.7)")
	assert.Equal(t, []int{20}, l.BadK(), "only the outlier's k̂ (0.87) is above the threshold")
}

// With identical draws the importance weights are flat: PSIS leaves them
// alone (k̂ = +Inf, no smoothing) and LOO equals the log-likelihood.
func TestPSISFlatAndSmallSamples(t *testing.T) {
	lw, k := PSIS([]float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5})
	assert.True(t, math.IsInf(k, 1))
	for _, v := range lw {
		assert.Equal(t, 0.5, v)
	}
	ll := tensor.FromFloat64s([]float64{-1, -2, -1, -2, -1, -2}, 3, 2)
	l, err := PSISLOO(ll)
	require.NoError(t, err)
	assert.InDeltaSlice(t, []float64{-1, -2}, l.Pointwise, 1e-15)
	assert.InDelta(t, 0, l.P, 1e-15)
}

// A wrong shape panics; a NaN is bad data and returns an error.
func TestLOOErrors(t *testing.T) {
	numtest.Misuse(t, "inference.WAIC", numtest.Here(), func() { _, _ = WAIC(tensor.FromFloat64s([]float64{1, 2}, 2)) }, "(S draws, N observations)")
	numtest.Misuse(t, "inference.PSIS", numtest.Here(), func() { PSIS([]float64{1}) }, "at least 2")
	_, err := PSISLOO(tensor.FromFloat64s([]float64{-1, math.NaN(), -1, -2}, 2, 2))
	require.ErrorContains(t, err, "draw 0, observation 1")
}

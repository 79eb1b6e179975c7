package mixture_test

import (
	"math"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/learn/mixture"
	"github.com/gradus-ml/gradus/tensor"
)

// One component on x = {0, 1, 2, 5} (n = 4, x̄ = 2, S = 14) under
// m₀ = 0, κ₀ = 1, ν₀ = 3, Ψ₀ = 2, worked by hand:
// μ = (4·2 + 0)/5 = 1.6, Σ = (2 + 14 + (4/5)·2²)/(3 + 4 + 1 + 2) = 1.92.
// The point is also checked to be a stationary point of the log posterior
// written out independently (central differences).
func TestMAPEMOneComponentByHand(t *testing.T) {
	xs := []float64{0, 1, 2, 5}
	x := tensor.FromFloat64s(xs, 4, 1)
	prior := &mixture.Prior{Mean: []float64{0}, Kappa: 1, Nu: 3, Scale: tensor.FromFloat64s([]float64{2}, 1, 1)}
	m, err := mixture.FitGaussianMixture(ctx, x, mixture.GaussianMixtureOptions{K: 1, Prior: prior, Tol: 1e-12})
	require.NoError(t, err)
	assert.InDelta(t, 1.6, m.Means.Float64s()[0], 1e-12)
	assert.InDelta(t, 1.92, m.Covariances.Float64s()[0], 1e-12)
	assert.InDelta(t, 1.0, m.Weights[0], 1e-12)
	// log prior up to a constant: −(ν₀+d+2)/2·log Σ − Ψ₀/(2Σ) − κ₀μ²/(2Σ).
	assert.InDelta(t, -3*math.Log(1.92)-1/1.92-0.5*1.6*1.6/1.92, m.LogPrior, 1e-12)

	post := func(mu, v float64) float64 {
		s := 0.0
		for _, a := range xs {
			s += -0.5*math.Log(2*math.Pi*v) - 0.5*(a-mu)*(a-mu)/v
		}
		return s - 3*math.Log(v) - 1/v - 0.5*mu*mu/v
	}
	h := 1e-5
	assert.InDelta(t, 0, (post(1.6+h, 1.92)-post(1.6-h, 1.92))/(2*h), 1e-6)
	assert.InDelta(t, 0, (post(1.6, 1.92+h)-post(1.6, 1.92-h))/(2*h), 1e-6)
	assert.Greater(t, post(1.6, 1.92), post(1.6, 1.92*1.01))
	assert.InDelta(t, m.LogLikelihood, post(1.6, 1.92)/4-m.LogPrior/4, 1e-12)
}

// Two well-separated groups {0, 1} and {100, 101, 102} with α = 3,
// κ₀ = 0 (flat on means), ν₀ = 2, Ψ₀ = 1, by hand:
// π = (2 + 2)/(5 + 4) = 4/9 and 5/9; μ = x̄ = 0.5 and 101;
// Σ = (1 + 0.5)/(2 + 2 + 1 + 1) = 1/4 and (1 + 2)/(2 + 3 + 1 + 1) = 3/7.
func TestMAPEMDirichletAndFlatMeansByHand(t *testing.T) {
	x := tensor.FromFloat64s([]float64{100, 0, 101, 1, 102}, 5, 1)
	prior := &mixture.Prior{Alpha: 3, Nu: 2, Scale: tensor.FromFloat64s([]float64{1}, 1, 1)}
	m, err := mixture.FitGaussianMixture(ctx, x, mixture.GaussianMixtureOptions{K: 2, Prior: prior, Tol: 1e-12})
	require.NoError(t, err)
	order := []int{0, 1}
	mv, cv := m.Means.Float64s(), m.Covariances.Float64s()
	sort.Slice(order, func(a, b int) bool { return mv[order[a]] < mv[order[b]] })
	lo, hi := order[0], order[1]
	assert.InDelta(t, 4.0/9, m.Weights[lo], 1e-12)
	assert.InDelta(t, 5.0/9, m.Weights[hi], 1e-12)
	assert.InDelta(t, 0.5, mv[lo], 1e-12)
	assert.InDelta(t, 101, mv[hi], 1e-12)
	assert.InDelta(t, 0.25, cv[lo], 1e-12)
	assert.InDelta(t, 3.0/7, cv[hi], 1e-12)
}

// On iris with the default prior and with an informative one (κ₀ > 0,
// α > 1), MAP-EM's log posterior never decreases for any covariance type,
// and a prior of vanishing weight gives back the maximum-likelihood fit.
func TestMAPEMMonotoneOnIris(t *testing.T) {
	x := iris(t)
	for _, ct := range []mixture.CovarianceType{mixture.Full, mixture.Diagonal, mixture.Spherical, mixture.Tied} {
		for _, prior := range []mixture.Prior{{}, {Alpha: 2, Kappa: 0.5, Nu: 8}} {
			m, err := mixture.FitGaussianMixture(ctx, x, mixture.GaussianMixtureOptions{K: 3, Seed: 1, Covariance: ct, Prior: &prior, Tol: 1e-10, MaxIter: 300})
			require.NoError(t, err)
			require.Greater(t, len(m.Trace), 5, "type %d", ct)
			for i := 1; i < len(m.Trace); i++ {
				assert.GreaterOrEqual(t, m.Trace[i], m.Trace[i-1]-1e-12, "type %d, prior %+v, iteration %d", ct, prior, i)
			}
			assert.InDelta(t, m.LogLikelihood+m.LogPrior/150, m.Trace[len(m.Trace)-1], 1e-12)
		}
	}

	tiny := tensor.MulScalar(tensor.Eye(tensor.Float64, 4), 1e-10)
	weak := &mixture.Prior{Nu: 3 + 1e-9, Scale: tiny}
	ml, err := mixture.FitGaussianMixture(ctx, x, mixture.GaussianMixtureOptions{K: 3, Seed: 1, Tol: 1e-10, MaxIter: 300, RegCovar: 1e-10})
	require.NoError(t, err)
	mp, err := mixture.FitGaussianMixture(ctx, x, mixture.GaussianMixtureOptions{K: 3, Seed: 1, Tol: 1e-10, MaxIter: 300, Prior: weak})
	require.NoError(t, err)
	// The weak prior still counts ν₀ + d + 1 ≈ 8 pseudo-rows per
	// component, so the two optima are close but not equal.
	assert.InDelta(t, ml.LogLikelihood, mp.LogLikelihood, 0.05)
}

func TestMAPEMBadPrior(t *testing.T) {
	x := iris(t)
	for name, o := range map[string]mixture.GaussianMixtureOptions{
		"Alpha":    {K: 2, Prior: &mixture.Prior{Alpha: 0.5}},
		"Kappa":    {K: 2, Prior: &mixture.Prior{Kappa: -1}},
		"Nu":       {K: 2, Prior: &mixture.Prior{Nu: 2}},
		"Mean":     {K: 2, Prior: &mixture.Prior{Mean: []float64{1, 2}}},
		"Scale":    {K: 2, Prior: &mixture.Prior{Scale: tensor.Eye(tensor.Float64, 3)}},
		"positive": {K: 2, Prior: &mixture.Prior{Scale: tensor.MulScalar(tensor.Eye(tensor.Float64, 4), -1)}},
		"Nu/Tied":  {K: 2, Covariance: mixture.Tied, Prior: &mixture.Prior{Nu: 3}},
	} {
		_, err := mixture.FitGaussianMixture(ctx, x, o)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "mixture.FitGaussianMixture", name)
	}
}

func TestInitMeansShape(t *testing.T) {
	_, err := mixture.FitGaussianMixture(ctx, iris(t), mixture.GaussianMixtureOptions{K: 3, InitMeans: tensor.Eye(tensor.Float64, 3)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "InitMeans has shape [3 3], want (3, 4)")
}

package mixture_test

import (
	"encoding/json"
	"math"
	"os"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/learn/mixture"
	"github.com/gradus-ml/gradus/tensor"
)

// iris returns the 150×4 iris measurements.
func iris(t *testing.T) *tensor.Tensor {
	t.Helper()
	x, _, err := data.Classes("sklearn/iris.csv", "target")
	require.NoError(t, err)
	return x
}

type skFit struct {
	LogLik  float64     `json:"loglik"`
	BIC     float64     `json:"bic"`
	AIC     float64     `json:"aic"`
	Weights []float64   `json:"weights"`
	Means   [][]float64 `json:"means"`
}

// EM on iris reaches scikit-learn's best fit (10 starts each): the same
// mean log-likelihood, weights and means (up to the components' order),
// and its trace never decreases.
func TestEMMatchesScikitLearnOnIris(t *testing.T) {
	b, err := os.ReadFile("testdata/iris_gmm.json")
	require.NoError(t, err)
	var fx map[string]skFit
	require.NoError(t, json.Unmarshal(b, &fx))
	x := iris(t)
	for name, cov := range map[string]mixture.CovarianceType{"full": mixture.Full, "diag": mixture.Diagonal,
		"spherical": mixture.Spherical, "tied": mixture.Tied} {
		want := fx[name]
		m, err := mixture.FitGaussianMixture(x, mixture.Options{K: 3, Covariance: cov, Tol: 1e-10, MaxIter: 2000, Restarts: 10, Seed: 1})
		require.NoError(t, err)
		assert.InDelta(t, want.LogLik, m.LogLikelihood, 1e-6, "%s log-likelihood", name)
		bic, err := m.BIC(x)
		require.NoError(t, err)
		aic, err := m.AIC(x)
		require.NoError(t, err)
		assert.InDelta(t, want.BIC, bic, 1e-3, "%s BIC", name)
		assert.InDelta(t, want.AIC, aic, 1e-3, "%s AIC", name)
		for i := 1; i < len(m.Trace); i++ {
			assert.GreaterOrEqual(t, m.Trace[i], m.Trace[i-1]-1e-12, "%s: EM decreased at %d", name, i)
		}
		order := func(w []float64, means [][]float64) ([]float64, [][]float64) {
			idx := []int{0, 1, 2}
			sort.Slice(idx, func(a, b int) bool { return means[idx[a]][0] < means[idx[b]][0] })
			var ws []float64
			var ms [][]float64
			for _, i := range idx {
				ws, ms = append(ws, w[i]), append(ms, means[i])
			}
			return ws, ms
		}
		gotMeans := make([][]float64, 3)
		mv := m.Means.Values()
		for j := range gotMeans {
			gotMeans[j] = mv[j*4 : (j+1)*4]
		}
		ww, wm := order(want.Weights, want.Means)
		gw, gm := order(m.Weights, gotMeans)
		assert.InDeltaSlice(t, ww, gw, 1e-4, "%s weights", name)
		for j := range wm {
			assert.InDeltaSlice(t, wm[j], gm[j], 1e-3, "%s mean %d", name, j)
		}
	}
}

// One component is a Gaussian fitted by maximum likelihood: the mean and
// the covariance with divisor n, by hand for (0, 0), (2, 0), (0, 2), (2, 2):
// mean (1, 1), covariance I, log p = −log 2π − 1 at every point.
func TestSingleComponentByHand(t *testing.T) {
	x := tensor.FromFloat64s([]float64{0, 0, 2, 0, 0, 2, 2, 2}, 4, 2)
	m, err := mixture.FitGaussianMixture(x, mixture.Options{K: 1, RegCovar: 1e-300})
	require.NoError(t, err)
	assert.InDeltaSlice(t, []float64{1, 1}, m.Means.Values(), 1e-12)
	assert.InDeltaSlice(t, []float64{1, 0, 0, 1}, m.Covariances.Values(), 1e-12)
	assert.InDelta(t, -math.Log(2*math.Pi)-1, m.LogLikelihood, 1e-12)
	r, err := m.Responsibilities(x)
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 1, 1, 1}, r.Values())
}

// The gradient fit, started from one EM step, reaches EM's optimum.
func TestGradientReachesEMOptimum(t *testing.T) {
	x := iris(t)
	full, err := mixture.FitGaussianMixture(x, mixture.Options{K: 3, Tol: 1e-12, MaxIter: 5000, Seed: 2})
	require.NoError(t, err)
	rough, err := mixture.FitGaussianMixture(x, mixture.Options{K: 3, MaxIter: 1, Seed: 2})
	require.NoError(t, err)
	require.Less(t, rough.LogLikelihood, full.LogLikelihood-0.01, "the start should be visibly worse")
	gm, res, err := mixture.FitGaussianMixtureGradient(x, rough, 2000)
	require.NoError(t, err)
	assert.InDelta(t, full.LogLikelihood, gm.LogLikelihood, 1e-5, "gradient fit (%s)", res.Reason)
	lp, err := gm.LogProb(x)
	require.NoError(t, err)
	s := 0.0
	for _, v := range lp {
		s += v
	}
	assert.InDelta(t, gm.LogLikelihood, s/150, 1e-6, "LogProb agrees with the reported likelihood")
}

func TestBadInput(t *testing.T) {
	_, err := mixture.FitGaussianMixture(tensor.FromFloat64s([]float64{1, 2}, 2), mixture.Options{K: 1})
	assert.ErrorContains(t, err, "(n, d) matrix")
	_, err = mixture.FitGaussianMixture(tensor.FromFloat64s([]float64{1, 2}, 2, 1), mixture.Options{K: 3})
	assert.ErrorContains(t, err, "K = 3 components for 2 rows")
}

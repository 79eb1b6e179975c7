package mixture_test

import (
	"context"
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

var ctx = context.Background()

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
		m, err := mixture.FitGaussianMixture(ctx, x, mixture.GaussianMixtureOptions{K: 3, Covariance: cov, Tol: 1e-10, MaxIter: 2000, Restarts: 10, Seed: 1})
		require.NoError(t, err)
		assert.InDelta(t, want.LogLik, m.LogLikelihood, 1e-6, "%s log-likelihood", name)
		bic, aic := m.BIC(x), m.AIC(x)
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
	m, err := mixture.FitGaussianMixture(ctx, x, mixture.GaussianMixtureOptions{K: 1, RegCovar: 1e-300})
	require.NoError(t, err)
	assert.InDeltaSlice(t, []float64{1, 1}, m.Means.Values(), 1e-12)
	assert.InDeltaSlice(t, []float64{1, 0, 0, 1}, m.Covariances.Values(), 1e-12)
	assert.InDelta(t, -math.Log(2*math.Pi)-1, m.LogLikelihood, 1e-12)
	assert.Equal(t, []float64{1, 1, 1, 1}, m.PredictProba(x).Values())
	assert.Equal(t, []int{0, 0, 0, 0}, m.Predict(x))
	lp := m.LogProb(x)
	assert.Equal(t, []int{4}, lp.Shape())
	assert.InDeltaSlice(t, []float64{-math.Log(2*math.Pi) - 1, -math.Log(2*math.Pi) - 1, -math.Log(2*math.Pi) - 1, -math.Log(2*math.Pi) - 1}, lp.Float64s(), 1e-12)
}

// The gradient fit, started from one EM step, reaches EM's optimum.
func TestGradientReachesEMOptimum(t *testing.T) {
	x := iris(t)
	full, err := mixture.FitGaussianMixture(ctx, x, mixture.GaussianMixtureOptions{K: 3, Tol: 1e-12, MaxIter: 5000, Seed: 2})
	require.NoError(t, err)
	rough, err := mixture.FitGaussianMixture(ctx, x, mixture.GaussianMixtureOptions{K: 3, MaxIter: 1, Seed: 2})
	var nc *tensor.NotConvergedError
	require.ErrorAs(t, err, &nc, "one EM step does not converge")
	assert.Equal(t, "mixture.FitGaussianMixture", nc.Op)
	assert.Equal(t, 1, nc.Iterations)
	require.Less(t, rough.LogLikelihood, full.LogLikelihood-0.01, "the start should be visibly worse")
	gm, err := mixture.FitGaussianMixtureGradient(ctx, x, mixture.GaussianMixtureGradientOptions{Start: rough, MaxIter: 2000})
	require.NoError(t, err)
	assert.InDelta(t, full.LogLikelihood, gm.LogLikelihood, 1e-5, "gradient fit")
	s := 0.0
	for _, v := range gm.LogProb(x).Float64s() {
		s += v
	}
	assert.InDelta(t, gm.LogLikelihood, s/150, 1e-6, "LogProb agrees with the reported likelihood")
}

// Every fit rejects bad data and options with an error naming the fit and
// what was wrong.
func TestBadInput(t *testing.T) {
	nan := tensor.FromFloat64s([]float64{1, math.NaN(), 0, 1}, 2, 2)
	noCols := tensor.Zeros(tensor.Float64, 3, 0)
	line := tensor.FromFloat64s([]float64{1, 2}, 2, 1)
	gmm := func(x *tensor.Tensor, o mixture.GaussianMixtureOptions) func() error {
		return func() error { _, err := mixture.FitGaussianMixture(ctx, x, o); return err }
	}
	bern := func(x *tensor.Tensor, o mixture.BernoulliMixtureOptions) func() error {
		return func() error { _, err := mixture.FitBernoulliMixture(ctx, x, o); return err }
	}
	for _, c := range []struct {
		name string
		fit  func() error
		want string
	}{
		{"gmm vector", gmm(tensor.FromFloat64s([]float64{1, 2}, 2), mixture.GaussianMixtureOptions{K: 1}), "mixture.FitGaussianMixture: x must be an (n, d) matrix, got shape [2]"},
		{"gmm K > n", gmm(line, mixture.GaussianMixtureOptions{K: 3}), "mixture.FitGaussianMixture: K = 3 components for 2 rows"},
		{"gmm NaN", gmm(nan, mixture.GaussianMixtureOptions{K: 1}), "mixture.FitGaussianMixture: x[0, 1] is NaN: values must be finite"},
		{"gmm zero columns", gmm(noCols, mixture.GaussianMixtureOptions{K: 1}), "mixture.FitGaussianMixture: x has zero columns"},
		{"gmm nil", gmm(nil, mixture.GaussianMixtureOptions{K: 1}), "mixture.FitGaussianMixture: x is nil"},
		{"gmm Tol", gmm(line, mixture.GaussianMixtureOptions{K: 1, Tol: -1}), "must not be negative"},
		{"gmm covariance", gmm(line, mixture.GaussianMixtureOptions{K: 1, Covariance: 7}), "unknown CovarianceType 7"},
		{"bernoulli K > n", bern(tensor.Zeros(tensor.Float64, 2, 3), mixture.BernoulliMixtureOptions{K: 3}), "mixture.FitBernoulliMixture: K = 3 components for 2 rows"},
		{"bernoulli NaN", bern(nan, mixture.BernoulliMixtureOptions{K: 1}), "mixture.FitBernoulliMixture: x[0, 1] is NaN: values must be finite"},
		{"bernoulli zero columns", bern(noCols, mixture.BernoulliMixtureOptions{K: 1}), "mixture.FitBernoulliMixture: x has zero columns"},
		{"bernoulli range", bern(tensor.FromFloat64s([]float64{0.5, 2}, 1, 2), mixture.BernoulliMixtureOptions{K: 1}), "row 0, column 1 is 2, not in [0, 1]"},
		{"gradient start", func() error {
			_, err := mixture.FitGaussianMixtureGradient(ctx, line, mixture.GaussianMixtureGradientOptions{})
			return err
		}, "mixture.FitGaussianMixtureGradient: nil Start"},
	} {
		assert.ErrorContains(t, c.fit(), c.want, c.name)
	}
}

// Prediction on data of the wrong width is misuse: a *tensor.Error panic
// naming the call.
func TestPredictMisusePanics(t *testing.T) {
	m, err := mixture.FitGaussianMixture(ctx, iris(t), mixture.GaussianMixtureOptions{K: 2, Seed: 1})
	require.NoError(t, err)
	bad := tensor.Zeros(tensor.Float64, 2, 3)
	for name, f := range map[string]func(){
		"mixture.GaussianMixture.Predict":      func() { m.Predict(bad) },
		"mixture.GaussianMixture.PredictProba": func() { m.PredictProba(bad) },
		"mixture.GaussianMixture.LogProb":      func() { m.LogProb(nil) },
	} {
		assert.Contains(t, panicMessage(t, f), "tensor."+name, name)
	}
}

// panicMessage returns the error text of the *tensor.Error f panics with.
func panicMessage(t *testing.T, f func()) (msg string) {
	t.Helper()
	defer func() {
		e, ok := recover().(*tensor.Error)
		require.True(t, ok, "want a *tensor.Error panic")
		msg = e.Error()
	}()
	f()
	return ""
}

// A cancelled context stops EM after its first iteration: the mixture of
// that iteration comes back with the context's error.
func TestCancelledContext(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	x := iris(t)
	m, err := mixture.FitGaussianMixture(cancelled, x, mixture.GaussianMixtureOptions{K: 3, Restarts: 4, Seed: 1})
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "mixture.FitGaussianMixture")
	require.NotNil(t, m)
	assert.Equal(t, 1, m.Iterations)
	assert.Len(t, m.Predict(x), 150)
	b, err := mixture.FitBernoulliMixture(cancelled, tensor.FromFloat64s([]float64{0, 1, 1, 0, 1, 1}, 3, 2), mixture.BernoulliMixtureOptions{K: 2})
	assert.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, b)
	assert.Equal(t, 1, b.Iterations)
	g, err := mixture.FitGaussianMixtureGradient(cancelled, x, mixture.GaussianMixtureGradientOptions{Start: m})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Nil(t, g, "cancelled before the first evaluation: nothing better than Start")
}

package bayeslinear

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

var ctx = context.Background()

// vec makes an (n) tensor of targets.
func vec(v []float64) *tensor.Tensor { return tensor.FromFloat64s(v, len(v)) }

// polyData is y = 0.5 − x + 2x² + noise on [−1, 1] with the basis (1, x, x², x³).
func polyData(n int, seed uint64) (*tensor.Tensor, []float64) {
	rng := tensor.NewRNG(seed)
	phi := make([]float64, 0, n*4)
	y := make([]float64, n)
	for i := range n {
		x := -1 + 2*float64(i)/float64(n-1)
		phi = append(phi, 1, x, x*x, x*x*x)
		y[i] = 0.5 - x + 2*x*x + 0.2*rng.NormFloat64()
	}
	return tensor.FromFloat64s(phi, n, 4), y
}

// The evidence is the Gaussian marginal N(y; 0, β⁻¹I + α⁻¹ΦΦᵀ), computed
// here independently by its Cholesky factor; the posterior mean solves the
// normal equations of ridge regression with λ = α/β.
func TestEvidenceAndPosteriorAgainstMarginal(t *testing.T) {
	phi, y := polyData(30, 1)
	const alpha, beta = 0.7, 20.0
	m, err := FitRegression(phi, vec(y), RegressionOptions{Alpha: alpha, Beta: beta})
	require.NoError(t, err)
	n := 30
	c := tensor.AddDiag(tensor.MulScalar(tensor.MatMulT(phi, phi, false, true), 1/alpha), tensor.Scalar(tensor.Float64, 1/beta))
	l, err := tensor.Cholesky(c)
	require.NoError(t, err)
	z := tensor.TriSolve(l, tensor.FromFloat64s(y, n, 1), true, false).Values()
	want := -float64(n) / 2 * math.Log(2*math.Pi)
	for i := range n {
		want -= math.Log(l.At(i, i)) + z[i]*z[i]/2
	}
	assert.InDelta(t, want, m.LogEvidence, 1e-9)
	ridge := tensor.AddDiag(tensor.MatMulT(phi, phi, true, false), tensor.Scalar(tensor.Float64, alpha/beta))
	w, err := tensor.Solve(ridge, tensor.MatMulT(phi, tensor.FromFloat64s(y, n, 1), true, false))
	require.NoError(t, err)
	assert.InDeltaSlice(t, w.Values(), m.Mean, 1e-10)
}

// At MacKay's fixed point the evidence is stationary in α and β: central
// differences of log p(y | α, β) in log α and log β vanish.
func TestEvidenceMaximum(t *testing.T) {
	phi, y := polyData(40, 2)
	m, err := FitEvidence(ctx, phi, vec(y), EvidenceOptions{})
	require.NoError(t, err, "converged")
	a, b := m.Alpha[0], m.Beta
	ev := func(a, b float64) float64 {
		f, err := FitRegression(phi, vec(y), RegressionOptions{Alpha: a, Beta: b})
		require.NoError(t, err)
		return f.LogEvidence
	}
	const h = 1e-4
	da := (ev(a*math.Exp(h), b) - ev(a*math.Exp(-h), b)) / (2 * h)
	db := (ev(a, b*math.Exp(h)) - ev(a, b*math.Exp(-h))) / (2 * h)
	assert.InDelta(t, 0, da, 1e-5)
	assert.InDelta(t, 0, db, 1e-5)
	// The noise precision lands near the truth, 1/0.2² = 25.
	assert.InDelta(t, 25, b, 12)
	q := tensor.FromFloat64s([]float64{1, 0, 0, 0}, 1, 4)
	mean, variance := m.Predict(q), m.PredictVariance(q)
	assert.Equal(t, []int{1}, mean.Shape())
	assert.InDelta(t, 0.5, mean.Float64s()[0], 0.2)
	// By hand at φ = e₀: 1/β + (S_N)₀₀, and the mean is the first weight.
	assert.InDelta(t, 1/b+m.Cov.At(0, 0), variance.Float64s()[0], 1e-12)
	assert.InDelta(t, m.Mean[0], mean.Float64s()[0], 1e-12)
}

// Tipping's sinc example: 100 noisy samples of sin(x)/x on [−10, 10] with
// an RBF basis on every input plus a bias. The RVM keeps a handful of
// relevance vectors and fits the function well.
func TestRVMSinc(t *testing.T) {
	rng := tensor.NewRNG(3)
	n := 100
	xs := make([]float64, n)
	y := make([]float64, n)
	for i := range n {
		xs[i] = -10 + 20*float64(i)/float64(n-1)
		y[i] = sinc(xs[i]) + 0.1*rng.NormFloat64()
	}
	design := func(q []float64) *tensor.Tensor {
		g := graph.New()
		k := kernel.NewRBF(1.6).K(g.Const(tensor.FromFloat64s(q, len(q), 1)), g.Const(tensor.FromFloat64s(xs, n, 1))).Value()
		return tensor.Concat(1, tensor.Ones(tensor.Float64, len(q), 1), k)
	}
	r, err := FitRVM(ctx, design(xs), vec(y), RVMOptions{})
	require.NoError(t, err)
	assert.Less(t, len(r.Relevant), 20, "relevance vectors %v", r.Relevant)
	assert.Greater(t, len(r.Relevant), 2)
	grid := make([]float64, 201)
	for i := range grid {
		grid[i] = -10 + 0.1*float64(i)
	}
	mean := r.Predict(design(grid)).Float64s()
	se := 0.0
	for i, g := range grid {
		se += (mean[i] - sinc(g)) * (mean[i] - sinc(g))
	}
	assert.Less(t, math.Sqrt(se/201), 0.05, "RMSE against the noiseless sinc")
}

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	return math.Sin(x) / x
}

// Every fit rejects bad data and options with an error naming the fit and
// what was wrong.
func TestBadInput(t *testing.T) {
	x := tensor.FromFloat64s([]float64{1, 2, 3, 4}, 2, 2)
	y := vec([]float64{1, 2})
	nan := tensor.FromFloat64s([]float64{1, 2, math.NaN(), 4}, 2, 2)
	noCols := tensor.Zeros(tensor.Float64, 2, 0)
	type fit func(x, y *tensor.Tensor) error
	fits := map[string]fit{
		"bayeslinear.FitRegression": func(x, y *tensor.Tensor) error { _, err := FitRegression(x, y, RegressionOptions{}); return err },
		"bayeslinear.FitEvidence":   func(x, y *tensor.Tensor) error { _, err := FitEvidence(ctx, x, y, EvidenceOptions{}); return err },
		"bayeslinear.FitEvidenceGradient": func(x, y *tensor.Tensor) error {
			_, err := FitEvidenceGradient(ctx, x, y, EvidenceOptions{})
			return err
		},
		"bayeslinear.FitRVM": func(x, y *tensor.Tensor) error { _, err := FitRVM(ctx, x, y, RVMOptions{}); return err },
	}
	for name, f := range fits {
		assert.ErrorContains(t, f(x, vec([]float64{1})), name+": y must have shape (2) to match x's rows")
		assert.ErrorContains(t, f(nan, y), name+": x[1, 0] is NaN")
		assert.ErrorContains(t, f(x, vec([]float64{1, math.Inf(-1)})), name+": y[1] is -Inf")
		assert.ErrorContains(t, f(noCols, y), name+": x has zero columns")
		assert.ErrorContains(t, f(x, nil), name+": y is nil")
	}
	_, err := FitRegression(x, y, RegressionOptions{Alpha: -1})
	assert.ErrorContains(t, err, "α = -1")
	_, err = FitEvidence(ctx, x, y, EvidenceOptions{Tol: -1})
	assert.ErrorContains(t, err, "Tol = -1 must not be negative")
	_, err = FitRVC(ctx, x, []int{1, 1}, RVCOptions{})
	assert.ErrorContains(t, err, "bayeslinear.FitRVC: the labels hold a single class (1)")
	_, err = FitRVC(ctx, nan, []int{0, 1}, RVCOptions{})
	assert.ErrorContains(t, err, "bayeslinear.FitRVC: x[1, 0] is NaN")
	_, err = FitRVC(ctx, noCols, []int{0, 1}, RVCOptions{})
	assert.ErrorContains(t, err, "zero columns")
}

// A cancelled context stops the iterative fits after their first
// re-estimation: the model so far comes back with the context's error. A
// fit out of iterations returns its model with a NotConvergedError.
func TestCancelledAndNotConverged(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	phi, y := polyData(30, 1)
	m, err := FitEvidence(cancelled, phi, vec(y), EvidenceOptions{})
	assert.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, m)
	assert.Equal(t, 1, m.Iterations)
	r, err := FitRVM(cancelled, phi, vec(y), RVMOptions{})
	assert.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, r)
	_, err = FitEvidenceGradient(cancelled, phi, vec(y), EvidenceOptions{})
	assert.ErrorIs(t, err, context.Canceled)
	c, err := FitRVC(cancelled, phi, []int{0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1}, RVCOptions{})
	assert.ErrorIs(t, err, context.Canceled)
	assert.NotNil(t, c)

	m, err = FitEvidence(ctx, phi, vec(y), EvidenceOptions{MaxIter: 2})
	var nc *tensor.NotConvergedError
	require.ErrorAs(t, err, &nc)
	assert.Equal(t, "bayeslinear.FitEvidence", nc.Op)
	assert.Equal(t, 2, m.Iterations)
	r, err = FitRVM(ctx, phi, vec(y), RVMOptions{MaxIter: 2})
	assert.ErrorIs(t, err, tensor.ErrNotConverged)
	assert.Equal(t, len(r.Relevant), len(r.Mean), "the posterior is over the relevant columns")
}

// On diabetes (442 rows, 10 features, centred as scikit-learn's
// fit_intercept does) the fixed point equals scikit-learn's BayesianRidge
// (its vague gamma hyperpriors of 1e-6 shift nothing at 1e-5): λ =
// 1.14623e-5 is our α, α = 3.41020e-4 our β; and maximising the evidence
// by gradient through the graph reaches the same α, β and evidence.
func TestEvidenceFixedPointGradientAndScikitLearn(t *testing.T) {
	x, labels, err := data.Classes("sklearn/diabetes.csv", "target")
	require.NoError(t, err)
	n, d := x.Shape()[0], x.Shape()[1]
	xv := x.Values()
	y := make([]float64, n)
	for i, l := range labels {
		y[i] = float64(l)
	}
	for j := range d { // centre the columns and the target
		mean := 0.0
		for i := range n {
			mean += xv[i*d+j] / float64(n)
		}
		for i := range n {
			xv[i*d+j] -= mean
		}
	}
	ym := 0.0
	for _, v := range y {
		ym += v / float64(n)
	}
	for i := range y {
		y[i] -= ym
	}
	phi := tensor.FromFloat64s(xv, n, d)
	fp, err := FitEvidence(ctx, phi, vec(y), EvidenceOptions{Tol: 1e-12, MaxIter: 100000})
	require.NoError(t, err)
	assert.InEpsilon(t, 1.1462296185517662e-05, fp.Alpha[0], 1e-5)
	assert.InEpsilon(t, 0.000341019507147856, fp.Beta, 1e-5)
	gr, err := FitEvidenceGradient(ctx, phi, vec(y), EvidenceOptions{})
	require.NoError(t, err)
	assert.InEpsilon(t, fp.Alpha[0], gr.Alpha[0], 1e-5)
	assert.InEpsilon(t, fp.Beta, gr.Beta, 1e-5)
	assert.InDelta(t, fp.LogEvidence, gr.LogEvidence, 1e-8)
}

package bayeslinear

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

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
	m, err := Fit(phi, y, alpha, beta)
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
	m, err := FitEvidence(phi, y, Options{})
	require.NoError(t, err)
	require.True(t, m.Converged)
	a, b := m.Alpha[0], m.Beta
	ev := func(a, b float64) float64 {
		f, err := Fit(phi, y, a, b)
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
	mean, variance := m.Predict(tensor.FromFloat64s([]float64{1, 0, 0, 0}, 1, 4))
	assert.InDelta(t, 0.5, mean[0], 0.2)
	assert.Greater(t, variance[0], 1/b)
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
	r, err := FitRVM(design(xs), y, Options{})
	require.NoError(t, err)
	assert.Less(t, len(r.Relevant), 20, "relevance vectors %v", r.Relevant)
	assert.Greater(t, len(r.Relevant), 2)
	grid := make([]float64, 201)
	for i := range grid {
		grid[i] = -10 + 0.1*float64(i)
	}
	mean, _ := r.Predict(design(grid))
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

func TestBadInput(t *testing.T) {
	_, err := Fit(tensor.FromFloat64s([]float64{1, 2}, 2, 1), []float64{1}, 1, 1)
	assert.ErrorContains(t, err, "2 rows but 1 targets")
	_, err = Fit(tensor.FromFloat64s([]float64{1, 2}, 2, 1), []float64{1, 2}, 0, 1)
	assert.ErrorContains(t, err, "α = 0")
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
	fp, err := FitEvidence(phi, y, Options{Tol: 1e-12, MaxIter: 100000})
	require.NoError(t, err)
	assert.InEpsilon(t, 1.1462296185517662e-05, fp.Alpha[0], 1e-5)
	assert.InEpsilon(t, 0.000341019507147856, fp.Beta, 1e-5)
	gr, err := FitEvidenceGradient(phi, y, Options{})
	require.NoError(t, err)
	assert.InEpsilon(t, fp.Alpha[0], gr.Alpha[0], 1e-5)
	assert.InEpsilon(t, fp.Beta, gr.Beta, 1e-5)
	assert.InDelta(t, fp.LogEvidence, gr.LogEvidence, 1e-8)
}

package pca_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/learn/pca"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// iris returns the 150×4 iris measurements.
func iris(t *testing.T) *tensor.Tensor {
	t.Helper()
	x, _, err := data.Classes("sklearn/iris.csv", "target")
	require.NoError(t, err)
	return x
}

type fixture struct {
	PCA struct {
		Components             [][]float64 `json:"components"`
		ExplainedVariance      []float64   `json:"explained_variance"`
		ExplainedVarianceRatio []float64   `json:"explained_variance_ratio"`
		Mean                   []float64   `json:"mean"`
	} `json:"pca"`
	PPCA struct {
		Sigma2 float64     `json:"sigma2"`
		WWt    [][]float64 `json:"wwt"`
		LogLik float64     `json:"loglik"`
	} `json:"ppca_q2"`
	KPCA struct {
		Eigenvalues []float64   `json:"eigenvalues"`
		Train       [][]float64 `json:"train"`
		New         [][]float64 `json:"new"`
	} `json:"kpca_rbf"`
}

func load(t *testing.T) fixture {
	t.Helper()
	b, err := os.ReadFile("testdata/iris.json")
	require.NoError(t, err)
	var f fixture
	require.NoError(t, json.Unmarshal(b, &f))
	return f
}

func flat(rows [][]float64) []float64 {
	var out []float64
	for _, r := range rows {
		out = append(out, r...)
	}
	return out
}

// PCA of iris by both eigenproblems against scikit-learn (signs by the
// documented convention in testdata/make_fixtures.py).
func TestPCAMatchesScikitLearn(t *testing.T) {
	f := load(t)
	x := iris(t)
	for _, m := range []pca.Method{pca.Covariance, pca.Gram, pca.SVD} {
		p, err := pca.FitPCA(x, pca.PCAOptions{Components: 3, Method: m})
		require.NoError(t, err)
		numtest.CloseValues(t, f.PCA.Mean, p.Mean, 1e-12, "mean")
		numtest.Close(t, flat(f.PCA.Components), p.Components, 1e-9, "components (method %d)", m)
		numtest.CloseValues(t, f.PCA.ExplainedVariance, p.ExplainedVariance, 1e-10, "variance")
		numtest.CloseValues(t, f.PCA.ExplainedVarianceRatio, p.ExplainedVarianceRatio, 1e-10, "ratio")
	}
}

// With every component kept, InverseTransform undoes Transform, whitened
// or not; whitened projections have unit variance and no correlation.
func TestPCATransformRoundTripAndWhitening(t *testing.T) {
	x := iris(t)
	for _, whiten := range []bool{false, true} {
		p, err := pca.FitPCA(x, pca.PCAOptions{Whiten: whiten})
		require.NoError(t, err)
		z := p.Transform(x)
		numtest.Close(t, x.Values(), p.InverseTransform(z), 1e-12, "round trip, whiten %v", whiten)
		if whiten {
			cov := tensor.MulScalar(tensor.MatMulT(z, z, true, false), 1/float64(149))
			numtest.Close(t, tensor.Eye(tensor.Float64, 4).Values(), cov, 1e-10, "whitened covariance")
		}
	}
}

// A hand-worked case: the points (0,0), (1,1), (2,2) on the line y = x,
// centred to (−1,−1), (0,0), (1,1), lie along the one component (1, 1)/√2;
// their projections are −√2, 0, √2, of variance (2 + 0 + 2)/(n − 1) = 2,
// all of the total.
func TestPCAByHand(t *testing.T) {
	x := tensor.FromFloat64s([]float64{0, 0, 1, 1, 2, 2}, 3, 2)
	p, err := pca.FitPCA(x, pca.PCAOptions{Components: 1})
	require.NoError(t, err)
	s := 1 / math.Sqrt2
	numtest.Close(t, []float64{s, s}, p.Components, 1e-12)
	numtest.CloseValues(t, []float64{2}, p.ExplainedVariance, 1e-12)
	numtest.CloseValues(t, []float64{1}, p.ExplainedVarianceRatio, 1e-12)
	numtest.Close(t, []float64{-math.Sqrt2, 0, math.Sqrt2}, p.Transform(x), 1e-12)
}

func TestPCABadInput(t *testing.T) {
	_, err := pca.FitPCA(tensor.FromFloat64s([]float64{1, 2}, 1, 2), pca.PCAOptions{})
	assert.ErrorContains(t, err, "at least two are needed")
	_, err = pca.FitPCA(tensor.FromFloat64s([]float64{1, 2, 3, math.Inf(1)}, 2, 2), pca.PCAOptions{})
	assert.ErrorContains(t, err, "x[1, 1] is +Inf")
	_, err = pca.FitPCA(tensor.FromFloat64s([]float64{1, 2, 3, 4}, 2, 2), pca.PCAOptions{Components: 3})
	assert.ErrorContains(t, err, "3 components")
	_, err = pca.FitPPCA(tensor.FromFloat64s([]float64{1, 2, 3, 4}, 2, 2), pca.PPCAOptions{Components: 2})
	assert.ErrorContains(t, err, "1 ≤ q < d")
}

// The closed-form PPCA against NumPy: σ², WWᵀ (W itself is only defined up
// to a rotation) and the log-likelihood.
func TestPPCAClosedForm(t *testing.T) {
	f := load(t)
	x := iris(t)
	m, err := pca.FitPPCA(x, pca.PPCAOptions{Components: 2})
	require.NoError(t, err)
	assert.InDelta(t, f.PPCA.Sigma2, m.Sigma2, 1e-12)
	numtest.Close(t, flat(f.PPCA.WWt), tensor.MatMulT(m.W, m.W, false, true), 1e-10, "WWᵀ")
	ll, err := m.LogLikelihood(x)
	require.NoError(t, err)
	assert.InDelta(t, f.PPCA.LogLik, ll, 1e-9*math.Abs(f.PPCA.LogLik))
}

// The closed form is a stationary point of the graph log-likelihood, EM
// climbs to it monotonically, and L-BFGS on the graph reaches it too.
func TestPPCAGradientAndEMMeetClosedForm(t *testing.T) {
	x := iris(t)
	closed, err := pca.FitPPCA(x, pca.PPCAOptions{Components: 2})
	require.NoError(t, err)
	want, err := closed.LogLikelihood(x)
	require.NoError(t, err)

	g := graph.New()
	xc := tensor.Sub(x, tensor.FromFloat64s(closed.Mean, 4))
	w := g.Var(closed.W)
	s := g.Var(tensor.Scalar(tensor.Float64, math.Log(closed.Sigma2)))
	grads := autodiff.Grad(pca.LogLikelihood(g.Const(xc), w, s), w, s)
	for _, gr := range grads {
		for _, v := range gr.Value().Values() {
			assert.InDelta(t, 0, v, 1e-8, "gradient at the closed form")
		}
	}

	em, err := pca.FitPPCAEM(context.Background(), x, pca.PPCAOptions{Components: 2, Seed: 3})
	require.NoError(t, err)
	trace := em.Trace
	for i := 1; i < len(trace); i++ {
		assert.GreaterOrEqual(t, trace[i], trace[i-1]-1e-9, "EM lowered the log-likelihood at iteration %d", i)
	}
	assert.InDelta(t, want, trace[len(trace)-1], 1e-6*math.Abs(want), "EM's final log-likelihood")
	assert.InDelta(t, closed.Sigma2, em.Sigma2, 1e-5)

	gm, err := pca.FitPPCAGradient(context.Background(), x, pca.PPCAOptions{Components: 2, Seed: 5})
	require.NoError(t, err)
	assert.Positive(t, gm.Iterations)
	got, err := gm.LogLikelihood(x)
	require.NoError(t, err)
	assert.InDelta(t, want, got, 1e-7*math.Abs(want), "gradient fit's log-likelihood")
	numtest.Close(t, tensor.MatMulT(closed.W, closed.W, false, true).Values(), tensor.MatMulT(gm.W, gm.W, false, true), 1e-5, "WWᵀ")
}

// Kernel PCA with an RBF kernel of lengthscale 1 (γ = 1/2) against
// scikit-learn's KernelPCA, on training and new rows; each component is
// compared up to its sign, which scikit-learn fixes differently.
func TestKernelPCAMatchesScikitLearn(t *testing.T) {
	f := load(t)
	x := iris(t)
	p, err := pca.FitKernelPCA(x, pca.KernelPCAOptions{Kernel: kernel.NewRBF(1), Components: 2})
	require.NoError(t, err)
	numtest.CloseValues(t, f.KPCA.Eigenvalues, p.Eigenvalues, 1e-9)
	for _, c := range []struct {
		in   *tensor.Tensor
		want [][]float64
	}{
		{tensor.Slice(x, 0, 0, 5, 1), f.KPCA.Train},
		{tensor.FromFloat64s([]float64{5, 3, 4, 1, 7, 3.2, 6, 2}, 2, 4), f.KPCA.New},
	} {
		z := p.Transform(c.in)
		for j := range 2 {
			sign := 1.0
			if z.At(0, j)*c.want[0][j] < 0 {
				sign = -1
			}
			for i := range c.want {
				assert.InDelta(t, c.want[i][j], sign*z.At(i, j), 1e-8, "row %d component %d", i, j)
			}
		}
	}
}

// Constant data is degenerate but valid: no variance to explain gives
// ratios of 0, and whitening maps every row to 0, not to NaN or ±Inf.
func TestPCAConstantDataIsFinite(t *testing.T) {
	x := tensor.FromFloat64s([]float64{3, -1, 3, -1, 3, -1}, 3, 2)
	p, err := pca.FitPCA(x, pca.PCAOptions{Whiten: true})
	require.NoError(t, err)
	for _, r := range p.ExplainedVarianceRatio {
		assert.Equal(t, 0.0, r)
	}
	for _, v := range p.Transform(x).Values() {
		assert.Equal(t, 0.0, v)
	}
	numtest.CloseValues(t, []float64{3, -1, 3, -1, 3, -1}, p.InverseTransform(p.Transform(x)).Values(), 1e-12)
}

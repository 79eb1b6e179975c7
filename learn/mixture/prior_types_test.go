package mixture_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/learn/mixture"
	"github.com/gradus-ml/gradus/tensor"
)

// logNormal is log N(x; μ, v) and logInvGamma log IG(v; a, b), written out
// from the densities (normalising constants included).
func logNormal(x, mu, v float64) float64 {
	return -0.5*math.Log(2*math.Pi*v) - (x-mu)*(x-mu)/(2*v)
}

func logInvGamma(v, a, b float64) float64 {
	lg, _ := math.Lgamma(a)
	return a*math.Log(b) - lg - (a+1)*math.Log(v) - b/v
}

// stationary checks that every central-difference partial derivative of f
// at theta is zero, and that f falls when a coordinate moves 1 % away.
func stationary(t *testing.T, name string, f func([]float64) float64, theta []float64) {
	t.Helper()
	const h = 1e-5
	at := func(i int, d float64) float64 {
		th := append([]float64(nil), theta...)
		th[i] += d
		return f(th)
	}
	for i := range theta {
		assert.InDelta(t, 0, (at(i, h)-at(i, -h))/(2*h), 1e-6, "%s: ∂/∂θ%d", name, i)
		assert.Greater(t, f(theta), at(i, 0.01*math.Abs(theta[i])), "%s: θ%d up", name, i)
		assert.Greater(t, f(theta), at(i, -0.01*math.Abs(theta[i])), "%s: θ%d down", name, i)
	}
}

// One component on the 2-D points (0,0), (2,1), (1,3), (5,4): n = 4,
// x̄ = (2, 2), S = [[14, 9], [9, 10]]. Prior m₀ = 0, κ₀ = 1, ν₀ = 4,
// Ψ₀ = [[2, 1], [1, 4]], so c = κ₀n/(κ₀ + n) = 0.8, δ = x̄ − m₀ = (2, 2),
// μ = n x̄/(n + κ₀) = (1.6, 1.6) for every type, and by hand
//
//	Full = Tied:  Σ = (Ψ₀ + S + cδδᵀ)/(ν₀ + n + d + 2) = [[19.2, 13.2], [13.2, 17.2]]/12
//	Diagonal:     σ² = (19.2, 17.2)/(n + ν₀ − d + 4) = (1.92, 1.72)
//	Spherical:    σ² = (tr Ψ₀ + tr S + c‖δ‖²)/(d(n + ν₀ − d + 2) + 2) = (6 + 24 + 6.4)/18
//
// Each is a stationary point (and a local maximum along every coordinate)
// of its log posterior written out independently from the densities:
// the Gaussian likelihood, the normal prior on μ and the inverse gamma
// IG((ν₀ − d + 1)/2, Ψ₀ff/2) per variance (Diagonal) or
// IG(d(ν₀ − d + 1)/2, tr Ψ₀/2) (Spherical); LogPrior is that log prior
// up to its normalising constant.
func TestMAPEMOneComponentTypesByHand(t *testing.T) {
	xs := []float64{0, 0, 2, 1, 1, 3, 5, 4}
	x := tensor.FromFloat64s(xs, 4, 2)
	prior := func() *mixture.Prior {
		return &mixture.Prior{Mean: []float64{0, 0}, Kappa: 1, Nu: 4, Scale: tensor.FromFloat64s([]float64{2, 1, 1, 4}, 2, 2)}
	}
	fit := func(ct mixture.CovarianceType) *mixture.GaussianMixture {
		m, err := mixture.FitGaussianMixture(ctx, x, mixture.GaussianMixtureOptions{K: 1, Covariance: ct, Prior: prior(), Tol: 1e-12})
		require.NoError(t, err)
		assert.InDeltaSlice(t, []float64{1.6, 1.6}, m.Means.Float64s(), 1e-12, "type %d", ct)
		assert.Equal(t, []float64{1}, m.Weights)
		return m
	}
	full := []float64{19.2 / 12, 13.2 / 12, 13.2 / 12, 17.2 / 12}
	for _, ct := range []mixture.CovarianceType{mixture.Full, mixture.Tied} {
		assert.InDeltaSlice(t, full, fit(ct).Covariances.Float64s(), 1e-12, "type %d", ct)
	}

	diag := fit(mixture.Diagonal)
	assert.InDeltaSlice(t, []float64{1.92, 0, 0, 1.72}, diag.Covariances.Float64s(), 1e-12)
	a := (4.0 - 2 + 1) / 2
	diagPrior := func(th []float64) float64 { // θ = (μ₁, μ₂, σ₁², σ₂²)
		return logInvGamma(th[2], a, 1) + logInvGamma(th[3], a, 2) +
			logNormal(th[0], 0, th[2]) + logNormal(th[1], 0, th[3])
	}
	diagPost := func(th []float64) float64 {
		s := diagPrior(th)
		for i := range 4 {
			s += logNormal(xs[2*i], th[0], th[2]) + logNormal(xs[2*i+1], th[1], th[3])
		}
		return s
	}
	th := []float64{1.6, 1.6, 1.92, 1.72}
	stationary(t, "diagonal", diagPost, th)
	lg, _ := math.Lgamma(a)
	norm := a*math.Log(1) - lg + a*math.Log(2) - lg - math.Log(2*math.Pi) // the densities' constants
	assert.InDelta(t, diagPrior(th), diag.LogPrior+norm, 1e-12)

	sph := fit(mixture.Spherical)
	v := 36.4 / 18
	assert.InDeltaSlice(t, []float64{v, 0, 0, v}, sph.Covariances.Float64s(), 1e-12)
	sphPrior := func(th []float64) float64 { // θ = (μ₁, μ₂, σ²)
		return logInvGamma(th[2], 2*a, 3) + logNormal(th[0], 0, th[2]) + logNormal(th[1], 0, th[2])
	}
	sphPost := func(th []float64) float64 {
		s := sphPrior(th)
		for i := range 4 {
			s += logNormal(xs[2*i], th[0], th[2]) + logNormal(xs[2*i+1], th[1], th[2])
		}
		return s
	}
	th = []float64{1.6, 1.6, v}
	stationary(t, "spherical", sphPost, th)
	lg, _ = math.Lgamma(2 * a)
	assert.InDelta(t, sphPrior(th), sph.LogPrior+2*a*math.Log(3)-lg-math.Log(2*math.Pi), 1e-12)
}

// Tied with two components: the groups {0, 1} and {100, 101, 102} are
// far enough apart that the responsibilities are 0 or 1 to machine
// precision. Under α = 2, m₀ = 50, κ₀ = 0.01, ν₀ = 2, Ψ₀ = 1, by hand:
// π = (2 + 1)/(5 + 2) = 3/7 and 4/7, μ = (2·0.5 + 0.5)/2.01 and
// (3·101 + 0.5)/3.01, and the shared variance
//
//	σ² = (Ψ₀ + S₁ + S₂ + c₁δ₁² + c₂δ₂²)/(ν₀ + n + d + 1 + K)
//	   = (1 + 0.5 + 2 + (0.02/2.01)·49.5² + (0.03/3.01)·51²)/11,
//
// a stationary point of the mixture's log posterior written out from the
// densities: IG(ν₀/2, Ψ₀/2) (the one-dimensional inverse Wishart) on σ²,
// N(m₀, σ²/κ₀) on each mean, the Dirichlet(2, 2) on the weights.
func TestMAPEMTiedTwoComponentsByHand(t *testing.T) {
	xs := []float64{100, 0, 101, 1, 102}
	x := tensor.FromFloat64s(xs, 5, 1)
	prior := &mixture.Prior{Alpha: 2, Mean: []float64{50}, Kappa: 0.01, Nu: 2, Scale: tensor.FromFloat64s([]float64{1}, 1, 1)}
	m, err := mixture.FitGaussianMixture(ctx, x, mixture.GaussianMixtureOptions{K: 2, Covariance: mixture.Tied, Prior: prior, Tol: 1e-12,
		InitMeans: tensor.FromFloat64s([]float64{0, 100}, 2, 1)})
	require.NoError(t, err)
	v := (1 + 0.5 + 2 + (0.02/2.01)*49.5*49.5 + (0.03/3.01)*51*51) / 11
	mu := []float64{(2*0.5 + 0.5) / 2.01, (3*101 + 0.5) / 3.01}
	assert.InDeltaSlice(t, []float64{3.0 / 7, 4.0 / 7}, m.Weights, 1e-12)
	assert.InDeltaSlice(t, mu, m.Means.Float64s(), 1e-12)
	assert.InDeltaSlice(t, []float64{v, v}, m.Covariances.Float64s(), 1e-12)
	post := func(th []float64) float64 { // θ = (μ₁, μ₂, σ²)
		s := logInvGamma(th[2], 1, 0.5) + logNormal(th[0], 50, th[2]/0.01) + logNormal(th[1], 50, th[2]/0.01)
		s += math.Log(3.0/7) + math.Log(4.0/7) // Dirichlet(2, 2) up to its constant
		for _, a := range xs {
			s += math.Log(3.0/7*math.Exp(logNormal(a, th[0], th[2])) + 4.0/7*math.Exp(logNormal(a, th[1], th[2])))
		}
		return s
	}
	stationary(t, "tied", post, []float64{mu[0], mu[1], v})
}

// In one dimension a diagonal or spherical covariance is a full 1×1 one,
// and the priors agree, so MAP-EM from the same start follows the same
// path for Full, Diagonal and Spherical (and Tied with one component);
// in any dimension Tied with one component is Full. Checked on iris's
// petal length (K = 2 and 1) and its first two features (K = 1).
func TestMAPEMTypesCoincide(t *testing.T) {
	x := iris(t)
	petal := tensor.Slice(x, 1, 2, 3, 1).Contiguous()
	prior := mixture.Prior{Alpha: 2, Kappa: 0.5, Nu: 3}
	same := func(name string, a, b *mixture.GaussianMixture) {
		require.Equal(t, len(a.Trace), len(b.Trace), name)
		assert.InDeltaSlice(t, a.Trace, b.Trace, 1e-12, name)
		assert.InDeltaSlice(t, a.Weights, b.Weights, 1e-12, name)
		assert.InDeltaSlice(t, a.Means.Float64s(), b.Means.Float64s(), 1e-12, name)
		assert.InDeltaSlice(t, a.Covariances.Float64s(), b.Covariances.Float64s(), 1e-12, name)
		assert.InDelta(t, a.LogPrior, b.LogPrior, 1e-12, name)
	}
	fit := func(x *tensor.Tensor, k int, ct mixture.CovarianceType) *mixture.GaussianMixture {
		p := prior
		m, err := mixture.FitGaussianMixture(ctx, x, mixture.GaussianMixtureOptions{K: k, Covariance: ct, Prior: &p, Tol: 1e-10, Seed: 3})
		require.NoError(t, err)
		return m
	}
	full2 := fit(petal, 2, mixture.Full)
	require.Greater(t, len(full2.Trace), 3)
	same("1-D diagonal, K = 2", full2, fit(petal, 2, mixture.Diagonal))
	same("1-D spherical, K = 2", full2, fit(petal, 2, mixture.Spherical))
	full1 := fit(petal, 1, mixture.Full)
	for _, ct := range []mixture.CovarianceType{mixture.Diagonal, mixture.Spherical, mixture.Tied} {
		same("1-D, K = 1", full1, fit(petal, 1, ct))
	}
	two := tensor.Slice(x, 1, 0, 2, 1).Contiguous()
	same("2-D tied, K = 1", fit(two, 1, mixture.Full), fit(two, 1, mixture.Tied))
	tied2 := fit(petal, 2, mixture.Tied)
	assert.NotEqual(t, full2.Covariances.Float64s()[0], tied2.Covariances.Float64s()[0], "tied shares one variance")
}

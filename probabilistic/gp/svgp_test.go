package gp

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// svgpSetup is a 1-D regression problem with an RBF kernel at fixed
// hyperparameters.
type svgpSetup struct {
	x, y, z             []float64
	variance, ls, noise float64
	jitter              float64
}

func (p svgpSetup) kernel() kernel.Kernel {
	k := kernel.NewScale(kernel.NewRBF(p.ls), p.variance)
	for _, h := range k.Hyperparams() {
		h.SetFixed(true)
	}
	return k
}

// model returns an SVGP at the setup's hyperparameters with inducing
// inputs z and the noise fixed.
func (p svgpSetup) model(t *testing.T, unwhitened bool) *SVGP {
	lik := NewGaussianLikelihood(p.noise)
	lik.Noise().SetFixed(true)
	s, err := NewSVGP(col(p.x), tensor.FromFloat64s(append([]float64(nil), p.y...), len(p.y)), SVGPOptions{
		Kernel: p.kernel(), Likelihood: lik, Inducing: col(p.z), FixInducing: true, Unwhitened: unwhitened, Jitter: p.jitter})
	require.NoError(t, err)
	return s
}

func col(v []float64) *tensor.Tensor {
	return tensor.FromFloat64s(append([]float64(nil), v...), len(v), 1)
}

// gram returns the hand-computed RBF matrix k(a, b).
func (p svgpSetup) gram(a, b []float64) *tensor.Tensor {
	k := tensor.New(tensor.Float64, len(a), len(b))
	for i := range a {
		for j := range b {
			k.SetAt(apxRBF(a[i], b[j], p.variance, p.ls), i, j)
		}
	}
	return k
}

// optimalQ returns the optimal whitened q(v) = N(m, LLᵀ) of Titsias (2009)
// in closed form, with Lz = chol(Kzz + jitter·I) and Φ = Lz⁻¹Kzx:
//
//	S = (I + ΦΦᵀ/σ²)⁻¹,  m = SΦy/σ²,
//
// and Lz itself.
func (p svgpSetup) optimalQ(t *testing.T) (mean, sqrt, lz *tensor.Tensor) {
	mz := len(p.z)
	kzz := tensor.Add(p.gram(p.z, p.z), tensor.MulScalar(tensor.Eye(tensor.Float64, mz), p.jitter))
	lz, err := tensor.Cholesky(kzz)
	require.NoError(t, err)
	phi := tensor.TriSolve(lz, p.gram(p.z, p.x), true, false)
	prec := tensor.Add(tensor.Eye(tensor.Float64, mz), tensor.MulScalar(tensor.MatMulT(phi, phi, false, true), 1/p.noise))
	lp, err := tensor.Cholesky(prec)
	require.NoError(t, err)
	cov := tensor.CholeskySolve(lp, tensor.Eye(tensor.Float64, mz))
	sqrt, err = tensor.Cholesky(cov)
	require.NoError(t, err)
	mean = tensor.CholeskySolve(lp, tensor.MulScalar(tensor.MatMul(phi, col(p.y)), 1/p.noise))
	return mean, sqrt, lz
}

// setOptimal puts the optimal q into s, mapped to u = Lz v when s is
// unwhitened.
func (p svgpSetup) setOptimal(t *testing.T, s *SVGP) {
	mean, sqrt, lz := p.optimalQ(t)
	if !s.Whitened() {
		mean, sqrt = tensor.MatMul(lz, mean), tensor.MatMul(lz, sqrt)
	}
	require.NoError(t, s.SetVariational(mean, sqrt))
}

func svgpELBO(t *testing.T, s *SVGP, rows []int) float64 {
	e, err := s.ELBO(graph.New(), rows)
	require.NoError(t, err)
	return e.Item()
}

func svgpSmall(n int, z []float64) svgpSetup {
	x, y := apxRegression(n, 3)
	if z == nil {
		z = x
	}
	return svgpSetup{x: x, y: y, z: z, variance: 1.3, ls: 0.8, noise: 0.05, jitter: 1e-10}
}

// With the inducing inputs at the data and the optimal q, the ELBO is the
// exact log marginal likelihood, by NewExact and by hand.
func TestSVGPOptimalQReachesExactLML(t *testing.T) {
	p := svgpSmall(15, nil)
	ex, err := NewExact(col(p.x), tensor.FromFloat64s(append([]float64(nil), p.y...), len(p.y)),
		ExactOptions{Kernel: kernel.NewScale(kernel.NewRBF(p.ls), p.variance), Noise: p.noise})
	require.NoError(t, err)
	lml, err := ex.LogMarginalLikelihood(graph.New())
	require.NoError(t, err)
	exact := lml.Item()
	require.InDelta(t, apxExactLML(t, p.x, p.y, p.variance, p.ls, p.noise), exact, 1e-9)
	for _, tc := range []struct {
		name       string
		unwhitened bool
	}{{"whitened", false}, {"unwhitened", true}} {
		t.Run(tc.name, func(t *testing.T) {
			s := p.model(t, tc.unwhitened)
			prior := svgpELBO(t, s, nil)
			p.setOptimal(t, s)
			got := svgpELBO(t, s, nil)
			assert.InDelta(t, exact, got, 1e-6*math.Abs(exact), "ELBO at the optimal q against the exact LML")
			assert.Less(t, prior, exact-1, "q at the prior is well below")
		})
	}
}

// With fewer inducing inputs, the ELBO at the optimal q equals Titsias'
// collapsed bound (gp.Sparse); at any other q it is lower by exactly
// KL(q ‖ q*), which is computed here from the two Gaussians directly.
func TestSVGPEqualsTitsiasBoundAtOptimum(t *testing.T) {
	p := svgpSmall(40, []float64{-2.7, -1.5, -0.4, 0.3, 1.1, 2.0, 2.9})
	p.jitter = 1e-6
	titsias := apxELBO(t, apxSparse(t, p.x, p.y, p.z, p.variance, p.ls, p.noise, p.jitter))
	mStar, lStar, _ := p.optimalQ(t)
	rng := tensor.NewRNG(9)
	mq := rng.Normal(tensor.Float64, 0, 0.5, len(p.z), 1)
	lq := lowerOf(tensor.Add(tensor.MulScalar(tensor.Eye(tensor.Float64, len(p.z)), 0.4), rng.Normal(tensor.Float64, 0, 0.1, len(p.z), len(p.z))))
	kl := gaussKL(t, mq, lq, mStar, lStar)
	require.Greater(t, kl, 1.0)
	for _, tc := range []struct {
		name       string
		unwhitened bool
	}{{"whitened", false}, {"unwhitened", true}} {
		t.Run(tc.name, func(t *testing.T) {
			s := p.model(t, tc.unwhitened)
			p.setOptimal(t, s)
			assert.InDelta(t, titsias, svgpELBO(t, s, nil), 1e-6*math.Abs(titsias), "optimal q")
			_, _, lz := p.optimalQ(t)
			m, l := mq, lq
			if tc.unwhitened {
				m, l = tensor.MatMul(lz, mq), tensor.MatMul(lz, lq)
			}
			require.NoError(t, s.SetVariational(m, l))
			assert.InDelta(t, titsias-kl, svgpELBO(t, s, nil), 1e-6*math.Abs(titsias), "ELBO(q) = bound − KL(q ‖ q*)")
		})
	}
}

// gaussKL is KL(N(m1, L1L1ᵀ) ‖ N(m2, L2L2ᵀ)) by the textbook formula with
// explicit inverses and determinants: ½[tr(S2⁻¹S1) + (m2−m1)ᵀS2⁻¹(m2−m1) − k + log|S2|/|S1|].
func gaussKL(t *testing.T, m1, l1, m2, l2 *tensor.Tensor) float64 {
	k := m1.Size()
	s1 := tensor.MatMulT(l1, l1, false, true)
	s2 := tensor.MatMulT(l2, l2, false, true)
	inv, err := tensor.Inverse(s2)
	require.NoError(t, err)
	d := tensor.Sub(m2, m1)
	tr := tensor.Sum(tensor.Mul(inv, s1), nil, false).Item() // S2⁻¹ is symmetric
	quad := tensor.MatMulT(d, tensor.MatMul(inv, d), true, false).Item()
	ld1, ld2 := 0.0, 0.0
	for i := 0; i < k; i++ {
		ld1 += 2 * math.Log(math.Abs(l1.At(i, i)))
		ld2 += 2 * math.Log(math.Abs(l2.At(i, i)))
	}
	return 0.5 * (tr + quad - float64(k) + ld2 - ld1)
}

// The minibatch ELBO is an unbiased estimate: its average over the
// batches of one epoch is the full ELBO.
func TestSVGPMinibatchELBOIsUnbiased(t *testing.T) {
	p := svgpSmall(24, []float64{-2, 0, 2})
	s := p.model(t, false)
	p.setOptimal(t, s)
	full := svgpELBO(t, s, nil)
	perm := tensor.NewRNG(4).Perm(24)
	sum := 0.0
	for b := 0; b < 4; b++ {
		sum += svgpELBO(t, s, perm[6*b:6*b+6])
	}
	assert.InDelta(t, full, sum/4, 1e-9)
	assert.NotEqual(t, full, svgpELBO(t, s, perm[:6]), "one batch alone differs")
}

// Training q by Adam (full batch, everything else fixed) approaches the
// optimum from below; one natural-gradient step with γ = 1 reaches it.
func TestSVGPTrainingApproachesTheOptimum(t *testing.T) {
	p := svgpSmall(30, []float64{-2.5, -1.2, 0, 1.2, 2.5})
	p.jitter = 1e-6
	optimum := apxELBO(t, apxSparse(t, p.x, p.y, p.z, p.variance, p.ls, p.noise, p.jitter))
	lik := func() *GaussianLikelihood {
		l := NewGaussianLikelihood(p.noise)
		l.Noise().SetFixed(true)
		return l
	}
	for _, tc := range []struct {
		name string
		opts SVGPOptions
		tol  float64
	}{
		{"adam whitened", SVGPOptions{Steps: 600, LR: 0.05}, 1e-3},
		{"adam unwhitened", SVGPOptions{Steps: 600, LR: 0.05, Unwhitened: true}, 1e-2},
		{"one natural-gradient step", SVGPOptions{Steps: 1, NaturalGradient: 1}, 1e-9},
		{"natural gradients unwhitened", SVGPOptions{Steps: 1, NaturalGradient: 1, Unwhitened: true}, 1e-9},
		{"a batch above n is the full batch", SVGPOptions{Steps: 1, NaturalGradient: 1, BatchSize: 1000}, 1e-9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			o.Kernel, o.Likelihood, o.Inducing, o.FixInducing, o.Jitter = p.kernel(), lik(), col(p.z), true, p.jitter
			if o.BatchSize == 0 {
				o.BatchSize = len(p.x)
			}
			s, err := FitSVGP(context.Background(), col(p.x), tensor.FromFloat64s(append([]float64(nil), p.y...), len(p.y)), o)
			require.NoError(t, err)
			got := svgpELBO(t, s, nil)
			assert.LessOrEqual(t, got, optimum+1e-9)
			assert.InDelta(t, optimum, got, tc.tol*math.Abs(optimum))
			assert.Len(t, s.Trace(), o.Steps)
		})
	}
}

// A full fit of hyperparameters, inducing inputs and q with minibatches
// raises the ELBO and predicts the sine.
func TestFitSVGPLearnsTheSine(t *testing.T) {
	x, y := apxRegression(200, 5)
	k := kernel.NewScale(kernel.NewRBF(0.5), 0.5)
	s, err := FitSVGP(context.Background(), col(x), tensor.FromFloat64s(y, len(y)), SVGPOptions{
		Kernel: k, NumInducing: 12, BatchSize: 50, Steps: 800, LR: 0.03, Seed: 2})
	require.NoError(t, err)
	tr := s.Trace()
	assert.Greater(t, mean(tr[len(tr)-50:]), mean(tr[:50])+50)
	xs := []float64{-2, -1, 0, 1, 2}
	pred, err := s.Predict(col(xs))
	require.NoError(t, err)
	for i, v := range xs {
		assert.InDelta(t, math.Sin(v), pred.Mean.Values()[i], 0.1, "x=%g", v)
		assert.Less(t, pred.Var.Values()[i], 0.01)
		assert.InDelta(t, pred.Var.Values()[i]+s.Hyperparam("noise").Value(), pred.NoisyVar.Values()[i], 1e-12)
	}
	assert.InDelta(t, 0.01, s.Hyperparam("noise").Value(), 0.006, "the data's noise is 0.1²")
	lpd, err := s.LogPredictiveDensity(col(xs), []float64{math.Sin(-2), math.Sin(-1), 0, math.Sin(1), math.Sin(2)})
	require.NoError(t, err)
	for _, v := range lpd {
		assert.Greater(t, v, 0.5, "a density above 1 near the mean")
	}
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// At q = p(u) (the start of both parameterisations) the KL term vanishes,
// so the whitened and unwhitened ELBOs agree and equal Σ E log p(y | f)
// under the prior marginals N(0, k(x, x)), written out here:
// −½ log 2πσ² − (y² + k(x, x))/(2σ²) per point.
func TestSVGPPriorStartAgrees(t *testing.T) {
	p := svgpSmall(20, []float64{-2, -0.5, 1, 2.5})
	p.jitter = 1e-9
	want := 0.0
	for _, y := range p.y {
		want += -0.5*math.Log(2*math.Pi*p.noise) - (y*y+p.variance)/(2*p.noise)
	}
	for _, unwhitened := range []bool{false, true} {
		got := svgpELBO(t, p.model(t, unwhitened), nil)
		assert.InDelta(t, want, got, 1e-6*math.Abs(want), "unwhitened=%v", unwhitened)
	}
}

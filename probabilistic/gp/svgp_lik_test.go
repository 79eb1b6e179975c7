package gp

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// trapGauss integrates h(f) N(f | mu, v) df by the trapezoid rule on ±10
// standard deviations with the given number of panels.
func trapGauss(mu, v float64, panels int, h func(float64) float64) float64 {
	sd := math.Sqrt(v)
	a, step := mu-10*sd, 20*sd/float64(panels)
	s := 0.0
	for i := 0; i <= panels; i++ {
		f := a + float64(i)*step
		wt := 1.0
		if i == 0 || i == panels {
			wt = 0.5
		}
		s += wt * h(f) * math.Exp(-(f-mu)*(f-mu)/(2*v)) / math.Sqrt(2*math.Pi*v)
	}
	return s * step
}

// ellOf evaluates lik.ExpectedLogLik at (b, L) means and variances.
func ellOf(lik Likelihood, mu, v, y []float64) []float64 {
	g, b := graph.New(), len(y)
	l := len(mu) / b
	return lik.ExpectedLogLik(g.Const(tensor.FromFloat64s(mu, b, l)), g.Const(tensor.FromFloat64s(v, b, l)),
		g.Const(tensor.FromFloat64s(y, b))).Value().Values()
}

// The one-latent likelihoods' expected log-likelihood, predictive moments
// and predictive log density agree with direct trapezoid integration of
// the log density written out here.
func TestOneLatentExpectationsAgainstIntegration(t *testing.T) {
	mus := []float64{-1.5, -0.2, 0.4, 1.1}
	vs := []float64{0.05, 0.8, 2, 0.3}
	studentT := func(nu, s float64) func(y, f float64) float64 {
		a, _ := math.Lgamma((nu + 1) / 2)
		b, _ := math.Lgamma(nu / 2)
		return func(y, f float64) float64 {
			return a - b - 0.5*math.Log(nu*math.Pi*s*s) - (nu+1)/2*math.Log(1+(y-f)*(y-f)/(nu*s*s))
		}
	}
	poisson := func(y, f float64) float64 { lf, _ := math.Lgamma(y + 1); return y*f - math.Exp(f) - lf }
	for _, tc := range []struct {
		name     string
		lik      Likelihood
		logp     func(y, f float64) float64
		ys       []float64
		ellTol   float64
		lpdTol   float64
		momentsY func(f float64) (m, m2 float64) // E[y | f], E[y² | f]
	}{
		{"poisson", NewPoissonLikelihood(40), poisson, []float64{0, 3, 1, 7}, 1e-9, 1e-4,
			func(f float64) (float64, float64) { r := math.Exp(f); return r, r + r*r }},
		// Gauss–Hermite with 40 nodes on a t density of scale 0.4 under q(f)
		// of standard deviation up to 1.4 is good to about 3e-4.
		{"student-t", NewStudentTLikelihood(3.5, 0.4, 40), studentT(3.5, 0.4), []float64{-1, 0.5, 2.5, 1.3}, 5e-4, 1e-7,
			func(f float64) (float64, float64) { return f, f*f + 0.16*3.5/1.5 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ell := ellOf(tc.lik, mus, vs, tc.ys)
			mean, variance := tc.lik.PredictY(mus, vs)
			lpd := tc.lik.LogPredictive(mus, vs, tc.ys)
			for i := range mus {
				y := tc.ys[i]
				want := trapGauss(mus[i], vs[i], 20000, func(f float64) float64 { return tc.logp(y, f) })
				assert.InDelta(t, want, ell[i], tc.ellTol, "E log p, point %d", i)
				m := trapGauss(mus[i], vs[i], 20000, func(f float64) float64 { a, _ := tc.momentsY(f); return a })
				m2 := trapGauss(mus[i], vs[i], 20000, func(f float64) float64 { _, b := tc.momentsY(f); return b })
				assert.InDelta(t, m, mean[i], 1e-8*math.Max(1, m), "mean, point %d", i)
				assert.InDelta(t, m2-m*m, variance[i], 1e-8*math.Max(1, m2), "variance, point %d", i)
				p := trapGauss(mus[i], vs[i], 20000, func(f float64) float64 { return math.Exp(tc.logp(y, f)) })
				assert.InDelta(t, math.Log(p), lpd[i], tc.lpdTol, "log predictive, point %d", i)
			}
		})
	}
}

// The heteroscedastic Gaussian's closed-form expectation equals a nested
// trapezoid over both latents, and its predictive log density equals the
// trapezoid over the noise latent of N(y | μ₁, v₁ + e^{f₂}).
func TestHeteroscedasticAgainstIntegration(t *testing.T) {
	lik := NewHeteroscedasticLikelihood(40)
	mu := []float64{0.3, -1, -0.5, 0.8, 1.2, -2}
	v := []float64{0.2, 0.5, 0.05, 1.5, 0.7, 0.1}
	ys := []float64{0.1, 1.7, -0.4}
	ell := ellOf(lik, mu, v, ys)
	mean, variance := lik.PredictY(mu, v)
	lpd := lik.LogPredictive(mu, v, ys)
	for i, y := range ys {
		m1, v1, m2, v2 := mu[2*i], v[2*i], mu[2*i+1], v[2*i+1]
		want := trapGauss(m1, v1, 300, func(f1 float64) float64 {
			return trapGauss(m2, v2, 300, func(f2 float64) float64 {
				return -0.5*(math.Log(2*math.Pi)+f2) - 0.5*(y-f1)*(y-f1)*math.Exp(-f2)
			})
		})
		assert.InDelta(t, want, ell[i], 1e-6, "E log p, point %d", i)
		assert.Equal(t, m1, mean[i])
		noise := trapGauss(m2, v2, 20000, math.Exp)
		assert.InDelta(t, v1+noise, variance[i], 1e-9, "variance, point %d", i)
		p := trapGauss(m2, v2, 20000, func(f2 float64) float64 {
			t := v1 + math.Exp(f2)
			return math.Exp(-0.5*(y-m1)*(y-m1)/t) / math.Sqrt(2*math.Pi*t)
		})
		assert.InDelta(t, math.Log(p), lpd[i], 1e-6, "log predictive, point %d", i)
	}
}

// The softmax likelihood's Monte Carlo expectation (20,000 draws) and its
// predictive probabilities (2000 draws) agree with a nested trapezoid over
// the three latents within their Monte Carlo error (about 4 standard
// errors); its gradient is the average of the per-draw gradients, so
// GradCheck passes when every evaluation draws the same ε.
func TestSoftmaxAgainstIntegration(t *testing.T) {
	lik := NewSoftmaxLikelihood(3, 20000, 1)
	mu := []float64{0.5, -0.3, 1, -1, 0.2, 0.4}
	v := []float64{0.3, 1, 0.5, 0.2, 0.8, 1.5}
	ys := []float64{2, 0}
	ell := ellOf(lik, mu, v, ys)
	probs := lik.ClassProbs(mu, v)
	for i, y := range ys {
		m, s := mu[3*i:3*i+3], v[3*i:3*i+3]
		logSoftmax := func(f []float64, k int) float64 {
			top := math.Max(f[0], math.Max(f[1], f[2]))
			return f[k] - top - math.Log(math.Exp(f[0]-top)+math.Exp(f[1]-top)+math.Exp(f[2]-top))
		}
		integrate := func(h func(f []float64) float64) float64 {
			f := make([]float64, 3)
			return trapGauss(m[0], s[0], 60, func(a float64) float64 {
				f[0] = a
				return trapGauss(m[1], s[1], 60, func(b float64) float64 {
					f[1] = b
					return trapGauss(m[2], s[2], 60, func(c float64) float64 { f[2] = c; return h(f) })
				})
			})
		}
		want := integrate(func(f []float64) float64 { return logSoftmax(f, int(y)) })
		assert.InDelta(t, want, ell[i], 0.02, "E log p, point %d", i)
		for k := 0; k < 3; k++ {
			pk := integrate(func(f []float64) float64 { return math.Exp(logSoftmax(f, k)) })
			assert.InDelta(t, pk, probs[3*i+k], 0.01, "p(y=%d), point %d", k, i)
		}
	}
	few := NewSoftmaxLikelihood(3, 4, 9)
	_, err := autodiff.GradCheck(func(xs []*graph.Node) *graph.Node {
		few.rng = tensor.NewRNG(9)
		return few.ExpectedLogLik(xs[0], xs[1], xs[0].Graph().Const(tensor.FromFloat64s(ys, 2)))
	}, []*tensor.Tensor{tensor.FromFloat64s(mu, 2, 3), tensor.FromFloat64s(v, 2, 3)}, autodiff.GradCheckOptions{Name: "softmax ELL", Order: 1})
	require.NoError(t, err)
}

// Targets outside a likelihood's support are errors naming the target.
func TestLikelihoodTargets(t *testing.T) {
	for _, tc := range []struct {
		lik  Likelihood
		y    []float64
		want string
	}{
		{NewPoissonLikelihood(0), []float64{1, 2, -1}, "target 2 is -1; the poisson likelihood takes counts"},
		{NewPoissonLikelihood(0), []float64{1.5}, "target 0 is 1.5; the poisson likelihood takes counts"},
		{NewPoissonLikelihood(0), []float64{math.Inf(1)}, "target 0 is +Inf"},
		{NewStudentTLikelihood(0, 0, 0), []float64{0, math.NaN()}, "y[1] = NaN is not finite"},
		{NewHeteroscedasticLikelihood(0), []float64{math.Inf(-1)}, "y[0] = -Inf is not finite"},
		{NewSoftmaxLikelihood(3, 0, 0), []float64{0, 1, 3}, "target 2 is 3; the softmax likelihood over 3 classes takes labels 0 to 2"},
		{NewSoftmaxLikelihood(3, 0, 0), []float64{0.5}, "target 0 is 0.5"},
		{NewSoftmaxLikelihood(3, 0, 0), []float64{-1}, "target 0 is -1"},
	} {
		err := tc.lik.CheckTargets(tc.y)
		require.Error(t, err, tc.lik.Name())
		assert.Contains(t, err.Error(), tc.want)
	}
	assert.NoError(t, NewPoissonLikelihood(0).CheckTargets([]float64{0, 4, 17}))
	assert.NoError(t, NewSoftmaxLikelihood(4, 0, 0).CheckTargets([]float64{0, 3, 2}))
}

// The Monte Carlo expectation of each pointwise likelihood (40,000 draws)
// agrees with the same likelihood's own rule (closed form or 40-point
// Gauss–Hermite) within four standard errors, the standard error from a
// trapezoid integral of the log density's variance under q(f); with the
// draws held fixed it passes GradCheck.
func TestMonteCarloLikelihood(t *testing.T) {
	mus := []float64{-1.2, 0.3, 1.5}
	vs := []float64{0.4, 1.1, 0.2}
	for _, tc := range []struct {
		base PointwiseLikelihood
		ys   []float64
	}{
		{NewGaussianLikelihood(0.3), []float64{-1, 0.5, 2}},
		{NewBernoulliLikelihood(Logit, 40), []float64{0, 1, 1}},
		{NewBernoulliLikelihood(Probit, 40), []float64{1, 0, 1}},
		{NewPoissonLikelihood(40), []float64{0, 2, 5}},
		{NewStudentTLikelihood(4, 0.5, 40), []float64{-1, 0.5, 2}},
	} {
		mc := NewMonteCarloLikelihood(tc.base, 40000, 1)
		want, got := ellOf(tc.base, mus, vs, tc.ys), ellOf(mc, mus, vs, tc.ys)
		for i := range mus {
			// log p on the trapezoid's grid in one call, then E[(log p)²].
			const panels = 400
			sd := math.Sqrt(vs[i])
			grid := make([]float64, panels+1)
			for k := range grid {
				grid[k] = mus[i] - 10*sd + 20*sd*float64(k)/panels
			}
			g := graph.New()
			lp := tc.base.LogLik(g.Const(tensor.FromFloat64s(grid, 1, panels+1)), g.Const(tensor.FromFloat64s(tc.ys[i:i+1], 1, 1))).Value().Values()
			k := 0
			m2 := trapGauss(mus[i], vs[i], panels, func(float64) float64 { l := lp[k]; k++; return l * l })
			se := math.Sqrt(math.Max(m2-want[i]*want[i], 0) / 40000)
			assert.InDelta(t, want[i], got[i], 4*se+1e-6, "%s point %d", mc.Name(), i)
		}
		few := NewMonteCarloLikelihood(tc.base, 5, 2)
		_, err := autodiff.GradCheck(func(xs []*graph.Node) *graph.Node {
			few.rng = tensor.NewRNG(2)
			return few.ExpectedLogLik(xs[0], xs[1], xs[0].Graph().Const(tensor.FromFloat64s(tc.ys, 3)))
		}, []*tensor.Tensor{tensor.FromFloat64s(mus, 3), tensor.FromFloat64s(vs, 3)}, autodiff.GradCheckOptions{Name: mc.Name(), Order: 1})
		require.NoError(t, err)
	}
	assert.Equal(t, "poisson-mc", NewMonteCarloLikelihood(NewPoissonLikelihood(0), 0, 0).Name())
}

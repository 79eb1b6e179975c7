package gp

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// The n-point rule integrates e^(−x²)x^(2k) exactly for 2k < 2n, giving
// Γ(k + ½); odd moments vanish. The 3-point rule by hand: nodes 0 and
// ±√(3/2), weights 2√π/3 and √π/6.
func TestGaussHermiteMoments(t *testing.T) {
	x, w := GaussHermite(3)
	assert.InDeltaSlice(t, []float64{-math.Sqrt(1.5), 0, math.Sqrt(1.5)}, x, 1e-14)
	assert.InDeltaSlice(t, []float64{math.SqrtPi / 6, 2 * math.SqrtPi / 3, math.SqrtPi / 6}, w, 1e-14)
	for _, n := range []int{1, 2, 5, 20, 40} {
		x, w := GaussHermite(n)
		for p := 0; p < 2*n; p++ {
			s, scale := 0.0, 0.0 // scale bounds the rounding of the sum
			for k := range x {
				s += w[k] * math.Pow(x[k], float64(p))
				scale += w[k] * math.Abs(math.Pow(x[k], float64(p)))
			}
			want := 0.0
			if p%2 == 0 {
				want = math.Gamma(float64(p)/2 + 0.5)
			}
			assert.InDelta(t, want, s, 1e-12*scale+1e-14, "n=%d power %d", n, p)
		}
	}
}

// quadGauss integrates h(f) N(f | mu, v) df by the trapezoid rule on
// ±12 standard deviations with 20,000 panels.
func quadGauss(mu, v float64, h func(float64) float64) float64 {
	sd := math.Sqrt(v)
	const panels = 20000
	a, b := mu-12*sd, mu+12*sd
	step := (b - a) / panels
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

// The quadrature expected log-likelihood and the predictive probability
// agree with direct numerical integration.
func TestBernoulliExpectationsAgainstIntegration(t *testing.T) {
	// log p(y | f), stable in both tails (math.Erfc is accurate there).
	logit := func(y, f float64) float64 {
		s := 2*y - 1
		return -math.Max(-s*f, 0) - math.Log1p(math.Exp(-math.Abs(s*f)))
	}
	probit := func(y, f float64) float64 {
		return math.Log(0.5 * math.Erfc(-(2*y-1)*f/math.Sqrt2))
	}
	for _, tc := range []struct {
		name   string
		link   Link
		logLik func(y, f float64) float64
	}{{"logit", Logit, logit}, {"probit", Probit, probit}} {
		lik := NewBernoulliLikelihood(tc.link, 40)
		mus := []float64{-2, -0.3, 0, 0.7, 3}
		vs := []float64{0.05, 1, 0.5, 2.5, 4}
		ys := []float64{0, 1, 1, 0, 1}
		g := graph.New()
		ell := lik.ExpectedLogLik(g.Const(tensor.FromFloat64s(mus, 5)), g.Const(tensor.FromFloat64s(vs, 5)), g.Const(tensor.FromFloat64s(ys, 5))).Value().Values()
		prob, _ := lik.PredictY(mus, vs)
		lpd := lik.LogPredictive(mus, vs, ys)
		for i := range mus {
			y := ys[i]
			want := quadGauss(mus[i], vs[i], func(f float64) float64 { return tc.logLik(y, f) })
			assert.InDelta(t, want, ell[i], 1e-7, "%s E log p, point %d", tc.name, i)
			p1 := quadGauss(mus[i], vs[i], func(f float64) float64 { return math.Exp(tc.logLik(1, f)) })
			assert.InDelta(t, p1, prob[i], 1e-7, "%s p(y=1), point %d", tc.name, i)
			py := p1
			if y == 0 {
				py = 1 - p1
			}
			assert.InDelta(t, math.Log(py), lpd[i], 1e-6, "%s log predictive, point %d", tc.name, i)
		}
	}
}

// svgpClassData is a 1-D problem whose class-1 probability is σ(2 sin x).
func svgpClassData(n int, seed uint64) (x []float64, labels []int) {
	rng := tensor.NewRNG(seed)
	x = make([]float64, n)
	labels = make([]int, n)
	for i := range x {
		x[i] = -3 + 6*rng.Float64()
		if rng.Float64() < 1/(1+math.Exp(-2*math.Sin(x[i]))) {
			labels[i] = 1
		}
	}
	return x, labels
}

// At the same (fixed) hyperparameters and with the inducing inputs at the
// data, the SVGP classifier's probabilities agree with the Laplace
// classifier's: both approximate the same posterior, and the variational
// one is known to sit slightly further from ½ (Nickisch and Rasmussen
// 2008, "Approximations for Binary Gaussian Process Classification"), so
// the tolerance is 0.03 per point, and the latent means agree in sign.
func TestSVGPClassifierMatchesLaplace(t *testing.T) {
	x, labels := svgpClassData(40, 7)
	newKernel := func() kernel.Kernel {
		k := kernel.NewScale(kernel.NewRBF(1), 2)
		for _, h := range k.Hyperparams() {
			h.SetFixed(true)
		}
		return k
	}
	lap, err := NewClassifier(col(x), labels, ClassifierOptions{Kernel: newKernel()})
	require.NoError(t, err)
	xs := []float64{-2.5, -1.5, -0.7, 0, 0.7, 1.5, 2.5}
	want, err := lap.Predict(col(xs))
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		opts SVGPOptions
	}{
		{"natural gradients", SVGPOptions{NaturalGradient: 0.5, Steps: 60}},
		{"adam", SVGPOptions{LR: 0.05, Steps: 1500}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			o.Kernel, o.Inducing, o.FixInducing, o.Jitter = newKernel(), col(x), true, 1e-8
			c, err := FitSVGPClassifier(context.Background(), col(x), labels, o)
			require.NoError(t, err)
			proba, err := c.PredictProba(col(xs))
			require.NoError(t, err)
			pred, err := c.Model().Predict(col(xs))
			require.NoError(t, err)
			worst := 0.0
			for i := range xs {
				p1 := proba.At(i, 1)
				worst = math.Max(worst, math.Abs(want.Prob[i]-p1))
				assert.InDelta(t, want.Prob[i], p1, 0.03, "x=%g", xs[i])
				assert.InDelta(t, 1, proba.At(i, 0)+p1, 1e-12)
				assert.Equal(t, math.Signbit(want.Mean[i]), math.Signbit(pred.Mean.Values()[i]), "x=%g", xs[i])
			}
			t.Logf("largest |p_SVGP − p_Laplace| = %.4f", worst)
			classes, err := c.Predict(col(xs))
			require.NoError(t, err)
			for i, k := range classes {
				assert.Equal(t, want.Prob[i] > 0.5, k == 1, "x=%g", xs[i])
			}
		})
	}
}

// Bad inputs are errors that name what was wrong.
func TestSVGPBadInputs(t *testing.T) {
	x := tensor.FromFloat64s([]float64{0, 0, 1, 1, 2, 0, 3, 1}, 4, 2)
	y := tensor.FromFloat64s([]float64{0.1, 0.2, 0.3, 0.4}, 4)
	k := func() kernel.Kernel { return kernel.NewRBF(1) }
	reg := func(o SVGPOptions) error { _, err := FitSVGP(context.Background(), x, y, o); return err }
	cls := func(labels []int, o SVGPOptions) error {
		_, err := FitSVGPClassifier(context.Background(), x, labels, o)
		return err
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"inducing of the wrong width", reg(SVGPOptions{Kernel: k(), Inducing: tensor.FromFloat64s([]float64{0, 1, 2}, 3, 1)}), "inducing inputs must be a non-empty (m, 2) matrix"},
		{"more inducing than rows", reg(SVGPOptions{Kernel: k(), NumInducing: 5}), "NumInducing 5 exceeds the 4 rows"},
		{"no kernel", reg(SVGPOptions{}), "nil Kernel"},
		{"NaN target", func() error {
			_, err := FitSVGP(context.Background(), x, tensor.FromFloat64s([]float64{0, math.NaN(), 0, 0}, 4), SVGPOptions{Kernel: k()})
			return err
		}(), "y[1] = NaN is not finite"},
		{"Bernoulli on real targets", reg(SVGPOptions{Kernel: k(), Likelihood: NewBernoulliLikelihood(Probit, 0)}), "target 0 is 0.1; the bernoulli-probit likelihood takes labels 0 and 1"},
		{"three classes", cls([]int{0, 1, 2, 1}, SVGPOptions{Kernel: k()}), "label 2 at row 2; the bernoulli-logit likelihood takes labels 0 to 1"},
		{"Gaussian on labels", cls([]int{0, 1, 1, 0}, SVGPOptions{Kernel: k(), Likelihood: NewGaussianLikelihood(0.1)}), "the gaussian likelihood does not model class labels"},
		{"one class", cls([]int{1, 1, 1, 1}, SVGPOptions{Kernel: k()}), "every label is 1"},
		{"natural-gradient step above 1", reg(SVGPOptions{Kernel: k(), NaturalGradient: 2}), "NaturalGradient step 2 above 1"},
		{"negative steps", reg(SVGPOptions{Kernel: k(), Steps: -1}), "Steps -1"},
		{"label count", func() error { _, err := NewSVGPClassifier(x, []int{0, 1}, SVGPOptions{Kernel: k()}); return err }(), "x has 4 rows but there are 2 targets"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Error(t, tc.err)
			assert.Contains(t, tc.err.Error(), tc.want)
		})
	}
}

// Predicting at inputs of the wrong width is misuse.
func TestSVGPPredictMisuse(t *testing.T) {
	x, y := apxRegression(10, 1)
	s, err := NewSVGP(col(x), tensor.FromFloat64s(y, 10), SVGPOptions{Kernel: kernel.NewRBF(1)})
	require.NoError(t, err)
	bad := tensor.Zeros(tensor.Float64, 3, 2)
	numtest.Misuse(t, "gp.SVGP.Predict", numtest.Here(), func() { _, _ = s.Predict(bad) }, "(k, 1) matrix", "[3 2]")
	c, err := NewSVGPClassifier(col(x), []int{0, 1, 0, 1, 0, 1, 0, 1, 0, 1}, SVGPOptions{Kernel: kernel.NewRBF(1)})
	require.NoError(t, err)
	numtest.Misuse(t, "gp.SVGPClassifier.PredictProba", numtest.Here(), func() { _, _ = c.PredictProba(bad) }, "(k, 1) matrix")
	assert.Panics(t, func() { NewBernoulliLikelihood(Link(7), 0) })
	assert.Panics(t, func() { NewGaussianLikelihood(-1) })
}

// A cancelled fit returns promptly with the model and the context's error.
func TestFitSVGPCancelled(t *testing.T) {
	x, y := apxRegression(50, 1)
	ctx, cancel := context.WithCancel(context.Background())
	steps := 0
	s, err := FitSVGP(ctx, col(x), tensor.FromFloat64s(y, 50), SVGPOptions{Kernel: kernel.NewRBF(1), Steps: 1000, BatchSize: 10,
		Progress: func(e SVGPEvent) {
			steps = e.Step
			if e.Step == 5 {
				cancel()
			}
		}})
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, s)
	assert.Equal(t, 5, steps)
	assert.Len(t, s.Trace(), 5)
	assert.False(t, errors.Is(err, tensor.ErrNotConverged))
}

// log Φ matches math.Erfc's value to 10 digits in both tails and on each side of the
// switch at −5, its derivative is φ/Φ (checked by reverse mode), and
// GradCheck passes to second order across the switch.
func TestLogNormCDF(t *testing.T) {
	zs := []float64{-30, -12, -6, -5.0001, -4.9999, -2, 0, 1.5, 8}
	g := graph.New()
	z := g.Var(tensor.FromFloat64s(zs, len(zs)))
	lp := logNormCDF(z)
	grad := autodiff.Grad(graph.Sum(lp, nil, false), z)[0].Value().Values()
	for i, v := range zs {
		phi := 0.5 * math.Erfc(-v/math.Sqrt2)
		want := math.Log(phi)
		assert.InDelta(t, want, lp.Value().Values()[i], 1e-10*math.Max(1, math.Abs(want)), "log Φ(%g)", v)
		dens := math.Exp(-v*v/2) / math.Sqrt(2*math.Pi)
		assert.InDelta(t, dens/phi, grad[i], 1e-9*math.Max(1, dens/phi), "φ/Φ at %g", v)
	}
	_, err := autodiff.GradCheck(func(xs []*graph.Node) *graph.Node { return logNormCDF(xs[0]) },
		[]*tensor.Tensor{tensor.FromFloat64s([]float64{-9, -5.3, -4.7, -1, 0.5, 3}, 6)}, autodiff.GradCheckOptions{Name: "logNormCDF"})
	require.NoError(t, err)
}

// The ELBO's gradients with respect to q's mean and factor and the
// inducing inputs agree with finite differences for each likelihood and
// parameterisation.
func TestSVGPELBOGradCheck(t *testing.T) {
	x, labels := svgpClassData(12, 3)
	y := make([]float64, len(labels))
	for i, l := range labels {
		y[i] = float64(l)
	}
	rng := tensor.NewRNG(5)
	mz := 4
	mu := rng.Normal(tensor.Float64, 0, 0.5, mz, 1)
	sq := lowerOf(tensor.Add(tensor.Eye(tensor.Float64, mz), rng.Normal(tensor.Float64, 0, 0.2, mz, mz)))
	zs := tensor.FromFloat64s([]float64{-2, -0.5, 0.7, 2.2}, mz, 1)
	for _, tc := range []struct {
		name       string
		lik        Likelihood
		unwhitened bool
	}{
		{"gaussian whitened", NewGaussianLikelihood(0.2), false},
		{"gaussian unwhitened", NewGaussianLikelihood(0.2), true},
		{"logit whitened", NewBernoulliLikelihood(Logit, 10), false},
		{"probit unwhitened", NewBernoulliLikelihood(Probit, 10), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := newSVGP("test", col(x), y, SVGPOptions{Kernel: kernel.NewScale(kernel.NewRBF(0.9), 1.5), Likelihood: tc.lik, Inducing: zs, Unwhitened: tc.unwhitened})
			require.NoError(t, err)
			rows := []int{0, 2, 3, 5, 7, 11}
			yb := make([]float64, len(rows))
			for i, r := range rows {
				yb[i] = y[r]
			}
			f := func(xs []*graph.Node) *graph.Node {
				e, err := s.elbo(xs[0].Graph(), xs[2], xs[0], []*graph.Node{graph.Tril(xs[1])}, pickRows(s.x, rows), yb)
				require.NoError(t, err)
				return e
			}
			_, err = autodiff.GradCheck(f, []*tensor.Tensor{mu, sq, zs}, autodiff.GradCheckOptions{Name: tc.name, Order: 1})
			require.NoError(t, err)
		})
	}
}

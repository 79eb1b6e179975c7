package gp

import (
	"context"
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

// uniformX returns n inputs drawn uniformly from [lo, hi).
func uniformX(rng *tensor.RNG, n int, lo, hi float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = lo + (hi-lo)*rng.Float64()
	}
	return x
}

// poissonDraw draws a Poisson(rate) count by inversion.
func poissonDraw(rng *tensor.RNG, rate float64) float64 {
	u, k, p := rng.Float64(), 0, math.Exp(-rate)
	for c := p; u > c; c += p {
		k++
		p *= rate / float64(k)
	}
	return float64(k)
}

// Counts drawn with rate e^(1 + sin x): the fitted predictive mean rate
// recovers the generating rate within 20% at every test point (14%
// measured, at the low-rate end, where some fifty counts near 1 fix the
// log rate only to about ±0.14).
func TestSVGPPoissonRecoversRate(t *testing.T) {
	rng := tensor.NewRNG(3)
	x := uniformX(rng, 300, 0, 6)
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = poissonDraw(rng, math.Exp(1+math.Sin(v)))
	}
	s, err := FitSVGP(context.Background(), col(x), tensor.FromFloat64s(y, len(y)), SVGPOptions{
		Kernel: kernel.NewScale(kernel.NewRBF(1), 1), Likelihood: NewPoissonLikelihood(0), NumInducing: 15,
		NaturalGradient: 0.2, LR: 0.02, Steps: 150, BatchSize: 300, Seed: 1})
	require.NoError(t, err)
	xs := []float64{0.5, 1.5, 2.5, 3.5, 4.5, 5.5}
	pred, err := s.Predict(col(xs))
	require.NoError(t, err)
	m, _ := s.Likelihood().PredictY(pred.Mean.Values(), pred.Var.Values())
	worst := 0.0
	for i, v := range xs {
		want := math.Exp(1 + math.Sin(v))
		assert.InDelta(t, want, m[i], 0.2*want, "rate at x=%g", v)
		worst = math.Max(worst, math.Abs(m[i]-want)/want)
	}
	t.Logf("largest relative error of the rate %.3f", worst)
}

// Residuals drawn from a Student-t with ν = 4 and scale 0.2: the fitted
// scale is within 20% of 0.2 (the maximum-likelihood scale of these
// residuals alone is 0.18 to 0.23 across seeds, by scipy). With 5% gross
// outliers added (+6), the Student-t mean still tracks sin x within 0.1,
// where a Gaussian likelihood is pulled off by more.
func TestSVGPStudentTRecoversScale(t *testing.T) {
	rng := tensor.NewRNG(4)
	x := uniformX(rng, 300, -3, 3)
	clean, dirty := make([]float64, len(x)), make([]float64, len(x))
	for i, v := range x {
		chi := 0.0 // χ² with 4 degrees of freedom
		for k := 0; k < 4; k++ {
			z := rng.NormFloat64()
			chi += z * z
		}
		clean[i] = math.Sin(v) + 0.2*rng.NormFloat64()/math.Sqrt(chi/4)
		dirty[i] = clean[i]
		if i%20 == 0 {
			dirty[i] += 6
		}
	}
	fit := func(y []float64, lik Likelihood) *SVGP {
		s, err := FitSVGP(context.Background(), col(x), tensor.FromFloat64s(y, len(y)), SVGPOptions{
			Kernel: kernel.NewScale(kernel.NewRBF(1), 1), Likelihood: lik, NumInducing: 15,
			NaturalGradient: 0.2, LR: 0.05, Steps: 120, BatchSize: 300, Seed: 1})
		require.NoError(t, err)
		return s
	}
	st := NewStudentTLikelihood(4, 0.5, 0)
	fit(clean, st)
	assert.InDelta(t, 0.2, st.Scale().Value(), 0.04)
	xs := []float64{-2.5, -1.5, -0.5, 0.5, 1.5, 2.5}
	pred, err := fit(dirty, NewStudentTLikelihood(4, 0.5, 0)).Predict(col(xs))
	require.NoError(t, err)
	gauss, err := fit(dirty, NewGaussianLikelihood(0.3)).Predict(col(xs))
	require.NoError(t, err)
	worstT, worstG := 0.0, 0.0
	for i, v := range xs {
		worstT = math.Max(worstT, math.Abs(pred.Mean.Values()[i]-math.Sin(v)))
		worstG = math.Max(worstG, math.Abs(gauss.Mean.Values()[i]-math.Sin(v)))
	}
	t.Logf("scale %.3f; with outliers, largest error of the mean: Student-t %.3f, Gaussian %.3f", st.Scale().Value(), worstT, worstG)
	assert.Less(t, worstT, 0.1)
	assert.Less(t, worstT+0.1, worstG)
}

// Noise whose standard deviation grows as e^((x − 3)/2) on [0, 3], so its
// log variance is x − 3: the heteroscedastic fit recovers the noise
// standard deviation within 25% and the mean within 0.15.
func TestSVGPHeteroscedasticRecoversNoise(t *testing.T) {
	rng := tensor.NewRNG(5)
	x := uniformX(rng, 400, 0, 3)
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = math.Sin(2*v) + math.Exp((v-3)/2)*rng.NormFloat64()
	}
	lik := NewHeteroscedasticLikelihood(0)
	s, err := FitSVGP(context.Background(), col(x), tensor.FromFloat64s(y, len(y)), SVGPOptions{
		Kernel: kernel.NewScale(kernel.NewRBF(1), 1), Likelihood: lik, NumInducing: 15,
		NaturalGradient: 0.2, LR: 0.05, Steps: 180, BatchSize: 400, Seed: 1})
	require.NoError(t, err)
	assert.Equal(t, 2, s.Latents())
	xs := []float64{0.3, 1, 1.7, 2.4, 2.9}
	pred, err := s.Predict(col(xs))
	require.NoError(t, err)
	require.Equal(t, []int{5, 2}, pred.Mean.Shape())
	worstMean, worstSD := 0.0, 0.0
	for i, v := range xs {
		assert.InDelta(t, math.Sin(2*v), pred.Mean.At(i, 0), 0.15, "mean at x=%g", v)
		sd, want := math.Exp(pred.Mean.At(i, 1)/2), math.Exp((v-3)/2)
		assert.InDelta(t, want, sd, 0.25*want, "noise sd at x=%g", v)
		worstMean = math.Max(worstMean, math.Abs(pred.Mean.At(i, 0)-math.Sin(2*v)))
		worstSD = math.Max(worstSD, math.Abs(sd-want)/want)
	}
	t.Logf("largest error of the mean %.3f, relative error of the noise sd %.3f", worstMean, worstSD)
	lpd, err := s.LogPredictiveDensity(col(xs[:2]), []float64{math.Sin(2 * xs[0]), math.Sin(2 * xs[1])})
	require.NoError(t, err)
	assert.Greater(t, lpd[0], lpd[1], "sharper where the noise is smaller")
}

// Three classes whose latent functions are 3 cos(x − cₖ), cₖ = −2, 0, 2:
// the softmax SVGP classifier's probabilities are within 0.06 of the
// generating ones on average, and its accuracy on fresh data is within 5
// points of the Bayes classifier's.
func TestSVGPSoftmaxRecoversClasses(t *testing.T) {
	centres := []float64{-2, 0, 2}
	truth := func(v float64) []float64 {
		p, z := make([]float64, 3), 0.0
		for k, c := range centres {
			p[k] = math.Exp(3 * math.Cos(v-c))
			z += p[k]
		}
		for k := range p {
			p[k] /= z
		}
		return p
	}
	draw := func(rng *tensor.RNG, n int) ([]float64, []int) {
		x := uniformX(rng, n, -3, 3)
		labels := make([]int, n)
		for i, v := range x {
			u, p := rng.Float64(), truth(v)
			for labels[i] = 0; labels[i] < 2 && u > p[labels[i]]; labels[i]++ {
				u -= p[labels[i]]
			}
		}
		return x, labels
	}
	rng := tensor.NewRNG(6)
	x, labels := draw(rng, 300)
	c, err := FitSVGPClassifier(context.Background(), col(x), labels, SVGPOptions{
		Kernel: kernel.NewScale(kernel.NewRBF(1), 2), Likelihood: NewSoftmaxLikelihood(3, 8, 1), NumInducing: 12,
		LR: 0.05, Steps: 300, BatchSize: 300, Seed: 1})
	require.NoError(t, err)
	assert.Equal(t, 3, c.Classes())
	xt, lt := draw(rng, 400)
	proba, err := c.PredictProba(col(xt))
	require.NoError(t, err)
	pred, err := c.Predict(col(xt))
	require.NoError(t, err)
	gap, hits, bayes := 0.0, 0, 0
	for i, v := range xt {
		p := truth(v)
		best := 0
		for k := range p {
			gap += math.Abs(p[k]-proba.At(i, k)) / float64(3*len(xt))
			if p[k] > p[best] {
				best = k
			}
		}
		if pred[i] == lt[i] {
			hits++
		}
		if best == lt[i] {
			bayes++
		}
	}
	acc, bayesAcc := float64(hits)/float64(len(xt)), float64(bayes)/float64(len(xt))
	t.Logf("mean |p − p_true| %.3f; accuracy %.3f, Bayes %.3f", gap, acc, bayesAcc)
	assert.Less(t, gap, 0.06)
	assert.Greater(t, acc, bayesAcc-0.05)
}

// twinGaussian observes each y twice, once through each of two latent
// functions with Gaussian noise σ²: log N(y | f₁, σ²) + log N(y | f₂, σ²).
// The latents' posteriors are then both the single-latent one, which
// checks the multi-latent marginals, KL and natural-gradient step.
type twinGaussian struct{ *GaussianLikelihood }

func (twinGaussian) Latents() int { return 2 }

// PredictY predicts from the first latent.
func (l twinGaussian) PredictY(mu, v []float64) (mean, variance []float64) {
	m, w := make([]float64, len(mu)/2), make([]float64, len(mu)/2)
	for i := range m {
		m[i], w[i] = mu[2*i], v[2*i]
	}
	return l.GaussianLikelihood.PredictY(m, w)
}

func (l twinGaussian) ExpectedLogLik(mu, v, y *graph.Node) *graph.Node {
	b := mu.Shape()[0]
	c := func(a *graph.Node, j int) *graph.Node { return graph.Reshape(graph.Slice(a, 1, j, j+1, 1), b) }
	return graph.Add(l.GaussianLikelihood.ExpectedLogLik(c(mu, 0), c(v, 0), y), l.GaussianLikelihood.ExpectedLogLik(c(mu, 1), c(v, 1), y))
}

// One natural-gradient step of size 1 with two latents reaches, in each
// latent, the same q as the one-latent model's step (the optimum of
// Titsias 2009), and the two-latent ELBO is exactly twice the one-latent
// one, since both the expected log-likelihood and the KL split over the
// latents. Whitened and unwhitened.
func TestSVGPTwoLatentsNaturalGradient(t *testing.T) {
	p := svgpSmall(15, []float64{-2, -1, 0, 1, 2})
	for _, unwhitened := range []bool{false, true} {
		one := p.model(t, unwhitened)
		lik := NewGaussianLikelihood(p.noise)
		lik.Noise().SetFixed(true)
		two, err := NewSVGP(col(p.x), tensor.FromFloat64s(append([]float64(nil), p.y...), len(p.y)), SVGPOptions{
			Kernel: p.kernel(), Likelihood: twinGaussian{lik}, Inducing: col(p.z), FixInducing: true, Unwhitened: unwhitened, Jitter: p.jitter})
		require.NoError(t, err)
		all := make([]int, len(p.x))
		for i := range all {
			all[i] = i
		}
		require.NoError(t, one.natGradStep(all, 1))
		require.NoError(t, two.natGradStep(all, 1))
		m1, l1 := one.Variational()
		m2, l2 := two.Variational()
		require.Equal(t, []int{5, 2}, m2.Shape())
		require.Equal(t, []int{2, 5, 5}, l2.Shape())
		for i := 0; i < 5; i++ {
			for j := 0; j < 2; j++ {
				assert.InDelta(t, m1.At(i, 0), m2.At(i, j), 1e-9)
			}
			for k := 0; k < 5; k++ {
				assert.InDelta(t, l1.At(i, k), l2.At(0, i, k), 1e-9)
				assert.InDelta(t, l1.At(i, k), l2.At(1, i, k), 1e-9)
			}
		}
		assert.InDelta(t, 2*svgpELBO(t, one, nil), svgpELBO(t, two, nil), 1e-8)
		pred, err := two.Predict(col([]float64{0.3}))
		require.NoError(t, err)
		want, err := one.Predict(col([]float64{0.3}))
		require.NoError(t, err)
		assert.InDelta(t, want.Mean.Values()[0], pred.Mean.At(0, 1), 1e-9)
		assert.InDelta(t, want.Var.Values()[0], pred.Var.At(0, 1), 1e-9)
	}
}

// The ELBO's gradients with respect to q's mean and factors and the
// inducing inputs agree with finite differences for the new likelihoods,
// one and several latents.
func TestSVGPNewLikelihoodsGradCheck(t *testing.T) {
	x, labels := svgpClassData(10, 4)
	y := make([]float64, len(labels))
	for i, l := range labels {
		y[i] = float64(l + i%2)
	}
	rng := tensor.NewRNG(8)
	mz := 3
	zs := tensor.FromFloat64s([]float64{-2, 0.1, 1.9}, mz, 1)
	soft := NewSoftmaxLikelihood(3, 3, 2)
	for _, tc := range []struct {
		name       string
		lik        Likelihood
		unwhitened bool
	}{
		{"poisson", NewPoissonLikelihood(8), false},
		{"student-t", NewStudentTLikelihood(3, 0.5, 8), true},
		{"heteroscedastic", NewHeteroscedasticLikelihood(0), false},
		{"softmax", soft, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := newSVGP("test", col(x), y, SVGPOptions{Kernel: kernel.NewScale(kernel.NewRBF(0.9), 1.5), Likelihood: tc.lik, Inducing: zs, Unwhitened: tc.unwhitened})
			require.NoError(t, err)
			nl := tc.lik.Latents()
			in := []*tensor.Tensor{zs, rng.Normal(tensor.Float64, 0, 0.3, mz, nl)}
			for range nl {
				in = append(in, lowerOf(tensor.Add(tensor.Eye(tensor.Float64, mz), rng.Normal(tensor.Float64, 0, 0.2, mz, mz))))
			}
			f := func(xs []*graph.Node) *graph.Node {
				soft.rng = tensor.NewRNG(2) // the same draws on every evaluation
				ls := make([]*graph.Node, nl)
				for i := range ls {
					ls[i] = graph.Tril(xs[2+i])
				}
				e, err := s.elbo(xs[0].Graph(), xs[0], xs[1], ls, pickRows(s.x, []int{0, 3, 4, 8}), []float64{y[0], y[3], y[4], y[8]})
				require.NoError(t, err)
				return e
			}
			_, err = autodiff.GradCheck(f, in, autodiff.GradCheckOptions{Name: tc.name, Order: 1})
			require.NoError(t, err)
		})
	}
}

// Targets that do not fit the likelihood, and likelihoods that do not fit
// the labels, are errors naming the fault.
func TestSVGPLikelihoodMismatch(t *testing.T) {
	x := col([]float64{0, 1, 2, 3})
	k := func() kernel.Kernel { return kernel.NewRBF(1) }
	fit := func(y []float64, lik Likelihood) error {
		_, err := FitSVGP(context.Background(), x, tensor.FromFloat64s(y, 4), SVGPOptions{Kernel: k(), Likelihood: lik, Steps: 1})
		return err
	}
	cls := func(labels []int, lik Likelihood) error {
		_, err := FitSVGPClassifier(context.Background(), x, labels, SVGPOptions{Kernel: k(), Likelihood: lik, Steps: 1})
		return err
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"negative count", fit([]float64{1, 0, -2, 3}, NewPoissonLikelihood(0)), "gp.NewSVGP: target 2 is -2; the poisson likelihood takes counts"},
		{"fractional count", fit([]float64{1, 0.5, 2, 3}, NewPoissonLikelihood(0)), "target 1 is 0.5"},
		{"fractional class", fit([]float64{0, 1, 1.5, 2}, NewSoftmaxLikelihood(3, 0, 0)), "target 2 is 1.5; the softmax likelihood over 3 classes"},
		{"class at K", cls([]int{0, 1, 3, 2}, NewSoftmaxLikelihood(3, 0, 0)), "label 3 at row 2; the softmax likelihood takes labels 0 to 2"},
		{"negative class", cls([]int{0, -1, 1, 2}, NewSoftmaxLikelihood(3, 0, 0)), "label -1 at row 1"},
		{"regression likelihood on labels", cls([]int{0, 1, 1, 0}, NewPoissonLikelihood(0)), "the poisson likelihood does not model class labels"},
		{"one class", cls([]int{2, 2, 2, 2}, NewSoftmaxLikelihood(3, 0, 0)), "every label is 2; fitting needs at least two classes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Error(t, tc.err)
			assert.Contains(t, tc.err.Error(), tc.want)
		})
	}
	numtest.Misuse(t, "gp.NewSoftmaxLikelihood", numtest.Here(), func() { NewSoftmaxLikelihood(1, 0, 0) }, "1 classes")
	numtest.Misuse(t, "gp.NewSoftmaxLikelihood", numtest.Here(), func() { NewSoftmaxLikelihood(3, -1, 0) }, "-1 samples")
	numtest.Misuse(t, "gp.NewStudentTLikelihood", numtest.Here(), func() { NewStudentTLikelihood(-1, 0, 0) }, "df -1")
	numtest.Misuse(t, "gp.NewStudentTLikelihood", numtest.Here(), func() { NewStudentTLikelihood(0, math.Inf(1), 0) }, "scale +Inf")
	numtest.Misuse(t, "gp.NewPoissonLikelihood", numtest.Here(), func() { NewPoissonLikelihood(101) }, "101 quadrature points")
}

// With a kernel per latent function, one natural-gradient step of size 1
// gives each latent the q of a one-latent model with its own kernel, the
// ELBO is the sum of theirs, and the ELBO's gradients (q and the inducing
// inputs) pass GradCheck. A wrong number of kernels is an error.
func TestSVGPLatentKernels(t *testing.T) {
	p := svgpSmall(12, []float64{-2, -0.7, 0.4, 1.8})
	ka := kernel.NewScale(kernel.NewRBF(0.8), 1.3)
	kb := kernel.NewScale(kernel.NewMatern32(1.7), 0.6)
	for _, k := range []kernel.Kernel{ka, kb} {
		for _, h := range k.Hyperparams() {
			h.SetFixed(true)
		}
	}
	y := tensor.FromFloat64s(append([]float64(nil), p.y...), len(p.y))
	lik := func() *GaussianLikelihood {
		l := NewGaussianLikelihood(p.noise)
		l.Noise().SetFixed(true)
		return l
	}
	all := make([]int, len(p.x))
	for i := range all {
		all[i] = i
	}
	for _, unwhitened := range []bool{false, true} {
		base := SVGPOptions{Inducing: col(p.z), FixInducing: true, Unwhitened: unwhitened, Jitter: 1e-9}
		o := base
		o.Likelihood, o.LatentKernels = twinGaussian{lik()}, []kernel.Kernel{ka, kb}
		two, err := NewSVGP(col(p.x), y, o)
		require.NoError(t, err)
		require.NoError(t, two.natGradStep(all, 1))
		m2, l2 := two.Variational()
		sum := 0.0
		for j, k := range []kernel.Kernel{ka, kb} {
			o := base
			o.Kernel, o.Likelihood = k, lik()
			one, err := NewSVGP(col(p.x), y, o)
			require.NoError(t, err)
			require.NoError(t, one.natGradStep(all, 1))
			m1, l1 := one.Variational()
			for i := 0; i < 4; i++ {
				assert.InDelta(t, m1.At(i, 0), m2.At(i, j), 1e-9)
				for c := 0; c < 4; c++ {
					assert.InDelta(t, l1.At(i, c), l2.At(j, i, c), 1e-9)
				}
			}
			sum += svgpELBO(t, one, nil)
		}
		assert.InDelta(t, sum, svgpELBO(t, two, nil), 1e-8)
		f := func(xs []*graph.Node) *graph.Node {
			e, err := two.elbo(xs[0].Graph(), xs[0], xs[1], []*graph.Node{graph.Tril(xs[2]), graph.Tril(xs[3])}, pickRows(two.x, []int{0, 4, 7}), []float64{p.y[0], p.y[4], p.y[7]})
			require.NoError(t, err)
			return e
		}
		rng := tensor.NewRNG(3)
		in := []*tensor.Tensor{col([]float64{-1.9, -0.6, 0.5, 1.7}), rng.Normal(tensor.Float64, 0, 0.5, 4, 2),
			lowerOf(tensor.Add(tensor.Eye(tensor.Float64, 4), rng.Normal(tensor.Float64, 0, 0.2, 4, 4))),
			lowerOf(tensor.Add(tensor.Eye(tensor.Float64, 4), rng.Normal(tensor.Float64, 0, 0.2, 4, 4)))}
		_, err = autodiff.GradCheck(f, in, autodiff.GradCheckOptions{Name: "latent kernels", Order: 1})
		require.NoError(t, err)
	}
	_, err := NewSVGP(col(p.x), y, SVGPOptions{LatentKernels: []kernel.Kernel{ka}, Likelihood: NewHeteroscedasticLikelihood(0)})
	assert.ErrorContains(t, err, "1 LatentKernels for the 2 latent functions of the heteroscedastic-gaussian likelihood")
	_, err = NewSVGP(col(p.x), y, SVGPOptions{LatentKernels: []kernel.Kernel{ka, nil}, Likelihood: NewHeteroscedasticLikelihood(0)})
	assert.ErrorContains(t, err, "LatentKernels[1] is nil")
}

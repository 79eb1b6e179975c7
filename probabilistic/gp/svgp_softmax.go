package gp

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// ClassLikelihood is a Likelihood of class labels 0 … Classes()−1, which
// FitSVGPClassifier takes: BernoulliLikelihood (two classes) and
// SoftmaxLikelihood.
type ClassLikelihood interface {
	Likelihood
	// Classes returns the number of classes K.
	Classes() int
	// ClassProbs returns p(y = k) = ∫ p(y = k | f) q(f) df for each of the
	// b points and K classes, row-major (b, K); mu and v are as in
	// Likelihood.PredictY.
	ClassProbs(mu, v []float64) []float64
}

// Classes returns 2.
func (l *BernoulliLikelihood) Classes() int { return 2 }

// ClassProbs returns 1 − p and p per point, p = p(y = 1).
func (l *BernoulliLikelihood) ClassProbs(mu, v []float64) []float64 {
	out := make([]float64, 0, 2*len(mu))
	for i := range mu {
		p := l.prob(mu[i], v[i])
		out = append(out, 1-p, p)
	}
	return out
}

// SoftmaxLikelihood is classification into K classes with one latent
// function per class and p(y = k | f) = softmax(f)ₖ (Williams and Barber
// 1998, "Bayesian Classification with Gaussian Processes"; Hensman,
// Matthews and Ghahramani 2015 for the sparse variational form). Its
// expected log-likelihood has no closed form and is estimated by Monte
// Carlo with the reparameterisation f = μ + √v ⊙ ε, ε ~ N(0, I), so each
// ELBO is an unbiased, differentiable estimate drawn from the
// likelihood's own seeded stream (Kingma and Welling 2014, "Auto-Encoding
// Variational Bayes"). Predictive probabilities average the softmax over
// 2000 draws from a stream that restarts at the seed on every call, so
// predictions are deterministic.
type SoftmaxLikelihood struct {
	classes, samples int
	seed             uint64
	rng              *tensor.RNG
}

// softmaxPredictDraws is the number of draws behind ClassProbs.
const softmaxPredictDraws = 2000

// NewSoftmaxLikelihood returns a softmax likelihood over classes ≥ 2
// classes whose expected log-likelihood averages samples draws per point
// (zero means 16), seeded by seed. It panics with a *tensor.Error for
// fewer than two classes or a negative sample count.
func NewSoftmaxLikelihood(classes, samples int, seed uint64) *SoftmaxLikelihood {
	if classes < 2 || samples < 0 {
		tensor.Fail("gp.NewSoftmaxLikelihood", "%d classes and %d samples; want at least 2 classes and a non-negative count", classes, samples)
	}
	if samples == 0 {
		samples = 16
	}
	return &SoftmaxLikelihood{classes: classes, samples: samples, seed: seed, rng: tensor.NewRNG(seed)}
}

// Name returns "softmax".
func (l *SoftmaxLikelihood) Name() string { return "softmax" }

// Latents returns the number of classes.
func (l *SoftmaxLikelihood) Latents() int { return l.classes }

// Classes returns the number of classes.
func (l *SoftmaxLikelihood) Classes() int { return l.classes }

// Hyperparams returns none.
func (l *SoftmaxLikelihood) Hyperparams() []*kernel.Hyperparam { return nil }

// ExpectedLogLik returns the Monte Carlo estimate of
// E log softmax(f)_y = E [f_y − log Σₖ e^{fₖ}] per point from fresh draws;
// mu and v are (b, K) and y holds class indices.
func (l *SoftmaxLikelihood) ExpectedLogLik(mu, v, y *graph.Node) *graph.Node {
	g, dt, b, k, s := mu.Graph(), mu.DType(), mu.Shape()[0], l.classes, l.samples
	if mu.Dim() != 2 || mu.Shape()[1] != k {
		tensor.Fail("gp.SoftmaxLikelihood.ExpectedLogLik", "mu must be (b, %d), got shape %v", k, mu.Shape())
	}
	labels := make([]int, b)
	for i, c := range y.Value().Values() {
		labels[i] = int(c)
	}
	eps := g.Const(l.rng.Normal(dt, 0, 1, s, b, k))
	sd := graph.Sqrt(graph.Clamp(v, 1e-12, math.Inf(1)))
	f := graph.Add(mu, graph.Mul(sd, eps)) // (s, b, k)
	fy := graph.Sum(graph.Mul(f, graph.OneHot(g, dt, labels, k)), []int{2}, false)
	return graph.Mean(graph.Sub(fy, graph.LogSumExp(f, []int{2}, false)), []int{0}, false)
}

// CheckTargets accepts the integers 0 … K−1.
func (l *SoftmaxLikelihood) CheckTargets(y []float64) error {
	for i, v := range y {
		if !(v >= 0 && v < float64(l.classes)) || v != math.Floor(v) {
			return fmt.Errorf("target %d is %g; the %s likelihood over %d classes takes labels 0 to %d", i, v, l.Name(), l.classes, l.classes-1)
		}
	}
	return nil
}

// ClassProbs returns the class probabilities averaged over 2000 draws of
// f per point, the same draws on every call.
func (l *SoftmaxLikelihood) ClassProbs(mu, v []float64) []float64 {
	k := l.classes
	b := len(mu) / k
	rng := tensor.NewRNG(l.seed ^ 0x9e3779b97f4a7c15)
	out := make([]float64, b*k)
	f := make([]float64, k)
	for s := 0; s < softmaxPredictDraws; s++ {
		for i := 0; i < b; i++ {
			top := math.Inf(-1)
			for c := 0; c < k; c++ {
				f[c] = mu[i*k+c] + math.Sqrt(math.Max(v[i*k+c], 0))*rng.NormFloat64()
				top = math.Max(top, f[c])
			}
			z := 0.0
			for c := range f {
				f[c] = math.Exp(f[c] - top)
				z += f[c]
			}
			for c := range f {
				out[i*k+c] += f[c] / z
			}
		}
	}
	for i := range out {
		out[i] /= softmaxPredictDraws
	}
	return out
}

// PredictY returns the mean and variance of the label read as a number
// (Σₖ k pₖ and Σₖ k² pₖ − mean²); ClassProbs is usually what is wanted.
func (l *SoftmaxLikelihood) PredictY(mu, v []float64) (mean, variance []float64) {
	p, k := l.ClassProbs(mu, v), l.classes
	b := len(p) / k
	mean, variance = make([]float64, b), make([]float64, b)
	for i := range mean {
		m2 := 0.0
		for c := 0; c < k; c++ {
			mean[i] += float64(c) * p[i*k+c]
			m2 += float64(c*c) * p[i*k+c]
		}
		variance[i] = m2 - mean[i]*mean[i]
	}
	return mean, variance
}

// LogPredictive returns log p(y) from ClassProbs.
func (l *SoftmaxLikelihood) LogPredictive(mu, v, y []float64) []float64 {
	p, k := l.ClassProbs(mu, v), l.classes
	out := make([]float64, len(y))
	for i := range y {
		out[i] = math.Log(p[i*k+int(y[i])])
	}
	return out
}

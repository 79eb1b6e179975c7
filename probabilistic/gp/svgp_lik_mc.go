package gp

import (
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// PointwiseLikelihood is a Likelihood of one latent function whose log
// density is a graph, so its expectation can be taken by any rule:
// GaussianLikelihood, BernoulliLikelihood, PoissonLikelihood and
// StudentTLikelihood implement it.
type PointwiseLikelihood interface {
	Likelihood
	// LogLik returns log p(y | f) elementwise, y broadcast against f
	// (f (b, k) with y (b, 1), say).
	LogLik(f, y *graph.Node) *graph.Node
}

// MonteCarloLikelihood takes a PointwiseLikelihood's expected
// log-likelihood by Monte Carlo instead of its own rule: with fresh draws
// ε ~ N(0, 1) from its seeded stream on every call,
//
//	E log p(y | f) ≈ (1/S) Σₛ log p(y | μ + √v εₛ),
//
// an unbiased, reparameterised (so differentiable) estimate (Kingma and
// Welling 2014, "Auto-Encoding Variational Bayes"), for log densities
// that quadrature handles badly or that a user writes without a rule of
// their own. Everything else (targets, predictions) is the base
// likelihood's.
type MonteCarloLikelihood struct {
	PointwiseLikelihood
	samples int
	rng     *tensor.RNG
}

// NewMonteCarloLikelihood wraps base with samples draws per point (zero
// means 16) seeded by seed. It panics with a *tensor.Error for a nil base
// or a negative count.
func NewMonteCarloLikelihood(base PointwiseLikelihood, samples int, seed uint64) *MonteCarloLikelihood {
	if base == nil || samples < 0 {
		tensor.Fail("gp.NewMonteCarloLikelihood", "nil base likelihood or %d samples", samples)
	}
	if samples == 0 {
		samples = 16
	}
	return &MonteCarloLikelihood{PointwiseLikelihood: base, samples: samples, rng: tensor.NewRNG(seed)}
}

// Name returns the base's name with "-mc" appended.
func (l *MonteCarloLikelihood) Name() string { return l.PointwiseLikelihood.Name() + "-mc" }

// ExpectedLogLik returns the Monte Carlo estimate per point from fresh
// draws.
func (l *MonteCarloLikelihood) ExpectedLogLik(mu, v, y *graph.Node) *graph.Node {
	mu, v = flatLatent(mu, v)
	g, b := mu.Graph(), mu.Shape()[0]
	eps := g.Const(l.rng.Normal(mu.DType(), 0, 1, b, l.samples))
	sd := graph.Reshape(graph.Sqrt(graph.Clamp(v, 1e-12, math.Inf(1))), b, 1)
	f := graph.Add(graph.Reshape(mu, b, 1), graph.Mul(sd, eps))
	return graph.Mean(l.LogLik(f, graph.Reshape(y, b, 1)), []int{1}, false)
}

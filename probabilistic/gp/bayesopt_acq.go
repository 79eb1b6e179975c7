package gp

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Acquisition scores candidate points for Bayesian optimisation (which
// maximises). It receives the fitted model once per Ask, with the whole
// posterior (joint covariances and samples, not only marginals), and
// returns the score to maximise; what it draws at random (a function
// sample, max-value samples, base samples) it draws then, from the
// optimiser's seeded stream, so the score is a fixed, differentiable
// function for the maximiser.
type Acquisition interface {
	// Name is a short identifier such as "ei".
	Name() string
	// Prepare returns the score under the model s.
	Prepare(s Surrogate, rng *tensor.RNG) (Score, error)
}

// Score returns acquisition values (m), larger is better, at the points
// u (m, d) of the unit cube, as a node of u's graph differentiable with
// respect to u.
type Score func(u *graph.Node) (*graph.Node, error)

// BatchAcquisition is an Acquisition that can choose the next member of
// a batch given the members already chosen (pending: (k, d) in the unit
// cube, not yet observed), which BayesOpt.AskBatch uses to pick q points
// one at a time (the greedy sequential strategy that Wilson, Hutter and
// Deisenroth 2018, "Maximizing Acquisition Functions for Bayesian
// Optimization", found competitive with joint optimisation).
type BatchAcquisition interface {
	Acquisition
	// PrepareBatch returns the score of a candidate joining pending; a
	// nil pending is the same as Prepare.
	PrepareBatch(s Surrogate, pending *tensor.Tensor, rng *tensor.RNG) (Score, error)
}

// marginalScore turns an acquisition of the posterior mean and standard
// deviation into a Score, with σ clamped below at minStd.
func marginalScore(s Surrogate, f func(mean, std *graph.Node, best float64) *graph.Node) Score {
	best := s.Incumbent()
	return func(u *graph.Node) (*graph.Node, error) {
		mean, variance, err := s.Posterior(u)
		if err != nil {
			return nil, err
		}
		return f(mean, graph.Sqrt(graph.Clamp(variance, minStd*minStd, math.Inf(1))), best), nil
	}
}

// EI is expected improvement (Močkus 1975; Jones et al. 1998) over the
// incumbent plus a margin Xi ≥ 0 that favours exploration.
type EI struct{ Xi float64 }

// Name returns "ei".
func (EI) Name() string { return "ei" }

// Prepare returns the closed-form EI of the posterior marginals over the
// incumbent.
func (a EI) Prepare(s Surrogate, _ *tensor.RNG) (Score, error) { return marginalScore(s, a.Score), nil }

// Score returns ExpectedImprovement(mean, std, best, Xi).
func (a EI) Score(mean, std *graph.Node, best float64) *graph.Node {
	return ExpectedImprovement(mean, std, best, a.Xi)
}

// PI is the probability of improvement (Kushner 1964) over the incumbent
// plus a margin Xi ≥ 0.
type PI struct{ Xi float64 }

// Name returns "pi".
func (PI) Name() string { return "pi" }

// Prepare returns PI of the posterior marginals over the incumbent.
func (a PI) Prepare(s Surrogate, _ *tensor.RNG) (Score, error) { return marginalScore(s, a.Score), nil }

// Score returns ProbabilityOfImprovement(mean, std, best, Xi).
func (a PI) Score(mean, std *graph.Node, best float64) *graph.Node {
	return ProbabilityOfImprovement(mean, std, best, a.Xi)
}

// UCB is the upper confidence bound μ + βσ (Srinivas et al. 2010).
type UCB struct{ Beta float64 }

// Name returns "ucb".
func (UCB) Name() string { return "ucb" }

// Prepare returns the UCB of the posterior marginals.
func (a UCB) Prepare(s Surrogate, _ *tensor.RNG) (Score, error) {
	return marginalScore(s, a.Score), nil
}

// Score returns UpperConfidenceBound(mean, std, Beta); best is not used.
func (a UCB) Score(mean, std *graph.Node, best float64) *graph.Node {
	return UpperConfidenceBound(mean, std, a.Beta)
}

// AcquisitionByName returns EI{Xi: 0.01}, PI{Xi: 0.01}, UCB{Beta: 2},
// Thompson{}, MES{} or QEI{} for "ei", "pi", "ucb", "thompson", "mes" or
// "qei", or an error.
func AcquisitionByName(name string) (Acquisition, error) {
	switch name {
	case "ei":
		return EI{Xi: 0.01}, nil
	case "pi":
		return PI{Xi: 0.01}, nil
	case "ucb":
		return UCB{Beta: 2}, nil
	case "thompson":
		return Thompson{}, nil
	case "mes":
		return MES{}, nil
	case "qei":
		return QEI{}, nil
	}
	return nil, fmt.Errorf("gp: unknown acquisition %q (want ei, pi, ucb, thompson, mes or qei)", name)
}

// minStd keeps z = (μ − best)/σ finite where the posterior is certain.
const minStd = 1e-9

// improvementZ returns the improvement μ − best − xi and z = it / σ, with
// σ clamped below at minStd.
func improvementZ(mean, std *graph.Node, best, xi float64) (imp, z, s *graph.Node) {
	s = graph.Clamp(std, minStd, math.Inf(1))
	imp = graph.AddScalar(mean, -best-xi)
	return imp, graph.Div(imp, s), s
}

// normCDF is Φ(z) = ½(1 + erf(z/√2)).
func normCDF(z *graph.Node) *graph.Node {
	return graph.MulScalar(graph.AddScalar(graph.Erf(graph.MulScalar(z, 1/math.Sqrt2)), 1), 0.5)
}

// normPDF is φ(z) = exp(−z²/2)/√(2π).
func normPDF(z *graph.Node) *graph.Node {
	return graph.MulScalar(graph.Exp(graph.MulScalar(graph.Square(z), -0.5)), 1/math.Sqrt(2*math.Pi))
}

// ExpectedImprovement returns E[max(f − best − xi, 0)] for f ~ N(mean,
// std²), in closed form:
//
//	EI = (μ − best − ξ) Φ(z) + σ φ(z),   z = (μ − best − ξ)/σ,
//
// elementwise. With μ = best, ξ = 0 and σ = 1 it is φ(0) = 1/√(2π).
// Standard deviations below 1e-9 are treated as 1e-9.
func ExpectedImprovement(mean, std *graph.Node, best, xi float64) *graph.Node {
	imp, z, s := improvementZ(mean, std, best, xi)
	return graph.Add(graph.Mul(imp, normCDF(z)), graph.Mul(s, normPDF(z)))
}

// ProbabilityOfImprovement returns P(f > best + xi) = Φ((μ − best − ξ)/σ)
// for f ~ N(mean, std²), elementwise.
func ProbabilityOfImprovement(mean, std *graph.Node, best, xi float64) *graph.Node {
	_, z, _ := improvementZ(mean, std, best, xi)
	return normCDF(z)
}

// UpperConfidenceBound returns μ + βσ elementwise.
func UpperConfidenceBound(mean, std *graph.Node, beta float64) *graph.Node {
	return graph.Add(mean, graph.MulScalar(std, beta))
}

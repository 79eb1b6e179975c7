// Package probabilistic provides probability distributions, closed-form
// Kullback–Leibler divergences, bijectors onto constrained spaces and a
// stochastic layer, all written as differentiable graph computations on
// *graph.Node, so log-densities, entropies, KLs and reparameterised samples
// can be differentiated with package autodiff with respect to the parameters.
//
//	g := graph.New()
//	mu := g.Var(tensor.FromFloat64s([]float64{0, 1}, 2))
//	sigma := g.Var(tensor.FromFloat64s([]float64{1, 2}, 2))
//	p := probabilistic.NewNormal(mu, sigma)           // batch shape (2)
//	x := p.RSample(tensor.NewRNG(1), 100)              // (100, 2), x = μ + σ·ε
//	q := probabilistic.NewNormal(g.Scalar(tensor.Float64, 0), g.Scalar(tensor.Float64, 1))
//	kl, err := probabilistic.KL(p, q)                  // closed form, shape (2); err: no closed form
//	elbo := graph.Sub(graph.Mean(p.LogProb(x), nil, false), graph.Sum(kl, nil, false))
//	grads := autodiff.Grad(elbo, mu, sigma)
//
// # Shapes
//
// Parameters broadcast with NumPy rules; the broadcast shape of the
// parameters, without the event axes, is the batch shape. The event shape
// is () for scalar distributions, (d) for MultivariateNormal and (K) for
// Dirichlet; Categorical has event shape () and its logits' last axis holds
// the K classes. Sample(rng, n) and RSample(rng, n) return shape
// (n, batch..., event...) for n > 0 and (batch..., event...) for n == 0 (one
// draw without the sample axis). LogProb(x) takes x of shape
// (sample..., batch..., event...) — any leading axes, broadcasting with the
// batch shape — and returns its shape without the event axes.
//
// # Sampling
//
// Sample draws values with no gradient from an explicitly seeded
// *tensor.RNG. Distributions with a reparameterisation (Normal,
// MultivariateNormal, LowRankMVN, Laplace, Uniform, HalfNormal, HalfCauchy,
// Cauchy, LogNormal, Exponential, GaussianRandomWalk and the relaxed
// Bernoulli and one-hot categorical of the Gumbel-softmax trick) also
// implement RSampler: RSample
// returns a node x = f(params, ε) with the noise ε a constant, so gradients
// flow from x to the parameters. Gamma, Beta and Dirichlet are sampled with
// Marsaglia and Tsang's method and are not reparameterised; Bernoulli and
// Categorical are discrete. The RSample function reports the difference as
// an error.
//
// # KL divergences
//
// KL(p, q) looks the pair of concrete types up in a registry of closed forms
// (Normal, MultivariateNormal, Bernoulli, Categorical, Beta, Gamma,
// Dirichlet, Exponential, LogNormal, HalfNormal, InverseGamma, Laplace,
// Cauchy, Geometric and Uniform against their own kind) and returns an
// error naming both types for a pair without one: it never falls back to a
// Monte Carlo estimate silently. RegisterKL adds pairs.
//
// # Supports, CDFs and wrappers
//
// Continuous distributions implement Supported: Support returns the
// bijector from unconstrained space onto their support (Identity, Exp,
// Sigmoid, Interval, StickBreaking), for samplers that move in ℝⁿ.
// Scalar distributions with a closed-form CDF (Normal, Laplace, Uniform,
// HalfNormal, LogNormal, Exponential) implement CDFer, which Censored
// needs; ZeroInflated adds a point mass at zero to a count distribution.
//
// # Bijectors
//
// Exp, Softplus, Sigmoid, StickBreaking and CholeskyFactor map unconstrained
// values onto positive numbers, the unit interval, the simplex and Cholesky
// factors, with their inverses and log-Jacobian determinants, so constrained
// parameters can be optimised in an unconstrained space as TensorFlow
// Probability and Stan do.
//
// # Errors
//
// Misuse panics with a *tensor.Error naming the distribution and the shapes
// (see package graph): parameters that do not broadcast, values whose shape
// does not fit, class labels out of range, and parameters given as constants
// outside their domain (a negative scale). Values of variables are not
// checked, since they change during training; a density at an invalid
// parameter is NaN. Data-dependent failures, such as a covariance that is not
// positive definite, are returned as errors.
package probabilistic

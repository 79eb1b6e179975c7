// Package logreg fits binary and multiclass (softmax) logistic regression and
// binary probit regression in float64, by maximum likelihood, maximum a
// posteriori, or Bayesian inference with the Laplace approximation. Every
// derivative, the Newton/IRLS Hessian included, comes from package autodiff
// applied to one graph of the objective; nothing is derived by hand.
//
// # Objective
//
// With parameters θ = (w, b) (one weight vector and intercept per class for
// softmax, one of each for the binary links), FitRegression minimises
//
//	E(θ) = Σᵢ ℓ(yᵢ, ηᵢ) + (λ/2)·‖w‖²,   ηᵢ = w·xᵢ + b,
//
// where ℓ is the log-loss: softplus(η) − y·η for the logit link,
// −log Φ((2y−1)·η) for the probit link and logsumexp(ηᵢ) − ηᵢ,yᵢ for
// softmax. The intercept is not penalised. λ = 0 is maximum likelihood and
// fails with ErrSeparable when the classes are separable (the ML weights are
// then infinite); λ > 0 is MAP with the prior w ~ N(0, λ⁻¹I).
//
//	m, err := logreg.FitRegression(ctx, x, labels, logreg.RegressionOptions{L2: 1, Solver: logreg.Newton})
//	p := m.PredictProba(xTest) // (n, classes) tensor
//	pred := m.Predict(xTest)   // []int
//
// # Solvers
//
// "lbfgs" runs optim.Minimize with the autodiff gradient. "newton" takes
// steps θ ← θ − H⁻¹g with H = autodiff.Hessian of the graph (forward over
// reverse). "irls" is the same update in its weighted-least-squares form:
// the working weights sᵢ = ∂²ℓ/∂ηᵢ² and scores uᵢ = ∂ℓ/∂ηᵢ come from autodiff
// with respect to the linear predictor, and θ solves
// (X̃ᵀSX̃ + Λ)·θ = X̃ᵀ(Sη − u). For the logit link sᵢ = pᵢ(1−pᵢ) and this is
// the textbook IRLS; for probit it uses the observed rather than the expected
// information, so it stays equal to Newton. Both halve a step that does not
// lower E.
//
// # Bayesian logistic regression
//
// FitLaplace puts the prior θ ~ N(0, α⁻¹I) on every parameter, intercept
// included (so the evidence is finite; features are meant to be
// standardised), finds the MAP θ*, and approximates the posterior by
// N(θ*, H⁻¹) with H the autodiff Hessian of E at θ*. It reports the Laplace
// log-evidence
//
//	log p(y|X) ≈ log p(y|θ*) + log p(θ*) + (d/2)·log 2π − ½·log det H,
//
// predictive probabilities by the probit approximation (MacKay 1992:
// σ(κ(s²)·μ), κ = (1 + πs²/8)^(−1/2), with μ and s² the mean and variance of
// the linear predictor; exactly Φ(μ/√(1+s²)) for the probit link) or by Monte
// Carlo, and chooses α by maximising the evidence when LaplaceOptions.Alpha
// is zero.
package logreg

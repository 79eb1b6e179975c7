// Package gp implements Gaussian processes as differentiable graphs, on
// the covariance kernels of package kernel: exact
// regression with the log marginal likelihood through a Cholesky
// factorisation, predictions and posterior samples, and hyperparameter
// fitting by L-BFGS or Adam with restarts.
//
//	k := kernel.NewScale(kernel.NewRBF(1), 1)
//	m, err := gp.FitExact(ctx, x, y, gp.ExactOptions{Kernel: k, Restarts: 2}) // x (n, d), y (n)
//	if err != nil { ... }
//	pred, err := m.Predict(xs) // pred.Mean, pred.Var, pred.NoisyVar
//	fmt.Println(m.FitResult().LML, m.Hyperparam("rbf.lengthscale").Value())
//
// # Estimators
//
// Every model is fitted by one call that takes ctx first and one options
// struct: FitExact, FitSparse (Titsias 2009), FitClassifier and
// FitMultiClassifier (the Laplace approximation; Rasmussen and Williams
// 2006, Gaussian Processes for Machine Learning, chapter 3). NewExact,
// NewSparse and NewClassifier condition at the kernel's current
// hyperparameters without fitting them, for hyperparameters set by hand
// or found elsewhere and for evaluating the marginal likelihood and its
// gradient at given values. Prediction returns an error because it can
// fail on data: a covariance that stays not positive definite after
// jitter escalation.
//
// # Stochastic variational GPs
//
// FitSVGP and FitSVGPClassifier train the SVGP of Hensman, Fusi and
// Lawrence (2013) on minibatches: inducing inputs (drawn from the data or
// given, learned or fixed), q(u) = N(m, LLᵀ) whitened or not, any
// Likelihood (Gaussian, Poisson and heteroscedastic Gaussian in closed
// form; Bernoulli with a logit or probit link and Student-t by
// Gauss–Hermite quadrature; softmax over K classes by reparameterised
// Monte Carlo, with one latent GP per class; any one-latent likelihood by
// Monte Carlo through NewMonteCarloLikelihood), and Adam over everything or natural
// gradients for q(u) (Salimbeni et al. 2018). With a Gaussian likelihood
// its optimum is Titsias' bound, and the exact log marginal likelihood
// when the inducing inputs are the data.
//
// # Large n
//
// ExactOptions{Inference: CG} replaces the Cholesky factor by blackbox
// matrix-matrix inference (Gardner et al. 2018): matrix-free kernel
// products in tiles, batched preconditioned conjugate gradients (MBCG),
// a pivoted-Cholesky preconditioner, and stochastic estimates of log det
// and of the gradient's traces, for 10⁴-10⁵ points in O(n) memory. FitExact
// and Predict are the same calls.
//
// # Multitask GPs, LOVE, mean functions, deep kernels
//
// FitMultitask fits the intrinsic and linear models of coregionalisation
// (Bonilla, Chai and Williams 2008), through Kronecker eigendecompositions
// when every task is observed at every input and in the dense Hadamard
// form otherwise. Exact.LOVE caches one Lanczos decomposition for fast
// predictive variances and samples (Pleiss et al. 2018). SamplePrior draws
// from a prior; ExactOptions.MeanFunc takes a LinearMean or a ModuleMean
// (any nn layer). A kernel.Deep (Wilson et al. 2016) puts a network under
// any kernel, trained by any fit; FitDirichletClassifier (Milios et al.
// 2018) classifies with it by exact GP regression. See docs/gp.md.
//
// # Errors
//
// Misuse (inputs that are not matrices, dimensions that do not match an
// ARD lengthscale) panics with a *tensor.Error as everywhere in Gradus.
// Covariance matrices that are not positive definite are retried with
// growing jitter and, when that fails, reported as a *CholeskyError.
package gp

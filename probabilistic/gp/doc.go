// Package gp implements Gaussian processes as differentiable graphs, on
// the covariance kernels of package kernel: exact
// regression with the log marginal likelihood through a Cholesky
// factorisation, predictions and posterior samples, and hyperparameter
// fitting by L-BFGS or Adam with restarts.
//
//	k := kernel.NewSum(kernel.NewScale(kernel.NewRBF(1), 1), kernel.NewWhite(0.1))
//	m, err := gp.NewExact(k, x, y) // x (n, d), y (n)
//	if err != nil { ... }
//	res, err := m.Fit(ctx, gp.FitOptions{Restarts: 2})
//	pred, err := m.Predict(xs)     // pred.Mean, pred.Var, pred.NoisyVar
//	fmt.Println(res.LML, m.Hyperparam("rbf.lengthscale").Value())
//
// # Large n
//
// ExactOptions{Inference: CG} replaces the Cholesky factor by blackbox
// matrix-matrix inference (Gardner et al. 2018): matrix-free kernel
// products in tiles, batched preconditioned conjugate gradients (MBCG),
// a pivoted-Cholesky preconditioner, and stochastic estimates of log det
// and of the gradient's traces, for 10⁴-10⁵ points in O(n) memory. Fit and
// Predict are the same calls.
//
// # Errors
//
// Misuse (inputs that are not matrices, dimensions that do not match an
// ARD lengthscale) panics with a *tensor.Error as everywhere in Gradus.
// Covariance matrices that are not positive definite are retried with
// growing jitter and, when that fails, reported as a *CholeskyError.
package gp

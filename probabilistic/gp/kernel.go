// Package gp implements Gaussian processes as differentiable graphs:
// covariance kernels with hyperparameters in an unconstrained space, exact
// regression with the log marginal likelihood through a Cholesky
// factorisation, predictions and posterior samples, and hyperparameter
// fitting by L-BFGS or Adam with restarts.
//
//	k := gp.NewSum(gp.NewScale(gp.NewRBF(1), 1), gp.NewWhite(0.1))
//	m, err := gp.NewExact(k, x, y) // x (n, d), y (n)
//	if err != nil { ... }
//	res, err := m.Fit(ctx, gp.FitOptions{Restarts: 2})
//	pred, err := m.Predict(xs)     // pred.Mean, pred.Var, pred.NoisyVar
//	fmt.Println(res.LML, m.Hyperparam("rbf.lengthscale").Value())
//
// # Kernels
//
// A Kernel builds its covariance matrix K(x1, x2) from graph nodes, so
// the matrix is differentiable with respect to both the inputs and the
// hyperparameters. Inputs are (n, d) matrices. Hyperparameters are Params:
// stored unconstrained (softplus by default) with optional priors, and
// named by dotted paths ("rbf.lengthscale"); combining kernels makes
// repeated names unique ("rbf_2.lengthscale"). Kernels whose value at equal
// inputs matters (White, and the exact zero distance of stationary kernels)
// recognise K(x, x) by the two arguments being the same node.
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

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Kernel is a covariance function.
type Kernel interface {
	// K returns the covariance matrix between the rows of x1 (n, d) and
	// x2 (m, d), shaped (n, m). Passing the same node twice means K(x, x),
	// whose diagonal holds the variances at equal inputs.
	K(x1, x2 *graph.Node) *graph.Node
	// Diag returns the diagonal of K(x, x), shaped (n), without building
	// the matrix.
	Diag(x *graph.Node) *graph.Node
	// Params returns the hyperparameters, in a stable order, each once.
	Hyperparams() []*Hyperparam
}

// Named renames the hyperparameters of k so that their names start with
// name (e.g. "trend.lengthscale"), and returns k.
func Named(name string, k Kernel) Kernel {
	ps := k.Hyperparams()
	for _, p := range ps {
		p.kernel = name
	}
	uniqueParams(ps)
	return k
}

// checkInputs panics unless x1 and x2 are matrices with the same number of
// columns, and returns that number.
func checkInputs(op string, x1, x2 *graph.Node) int {
	if x1 == nil || x2 == nil {
		tensor.Fail(op, "nil input")
	}
	if x1.Dim() != 2 || x2.Dim() != 2 {
		tensor.Fail(op, "inputs must be (n, d) matrices, got %v and %v", x1.Shape(), x2.Shape())
	}
	if x1.Shape()[1] != x2.Shape()[1] {
		tensor.Fail(op, "inputs have %d and %d columns (shapes %v and %v)", x1.Shape()[1], x2.Shape()[1], x1.Shape(), x2.Shape())
	}
	if x1.DType() != x2.DType() {
		tensor.Fail(op, "inputs have dtypes %v and %v", x1.DType(), x2.DType())
	}
	return x1.Shape()[1]
}

// checkDiagInput panics unless x is a matrix.
func checkDiagInput(op string, x *graph.Node) {
	if x == nil {
		tensor.Fail(op, "nil input")
	}
	if x.Dim() != 2 {
		tensor.Fail(op, "input must be an (n, d) matrix, got %v", x.Shape())
	}
}

// fullConst returns a constant tensor of the given shape filled with v.
func fullConst(g *graph.Graph, dt tensor.DType, v float64, shape ...int) *graph.Node {
	t := g.AllocUninit(dt, shape...)
	t.Fill(v)
	return g.Const(t)
}

// safeSqrt returns √r2 for r2 ≥ 0 with a finite derivative at r2 = 0: the
// square root is taken of r2 where it is positive and of 1 elsewhere, and
// the result there replaced by 0, so no infinite derivative of √ at 0
// enters the chain rule (the "double where" trick).
func safeSqrt(r2 *graph.Node) *graph.Node {
	g := r2.Graph()
	zero := g.Scalar(r2.DType(), 0)
	pos := graph.Greater(r2, zero)
	safe := graph.Where(pos, r2, g.Scalar(r2.DType(), 1))
	return graph.Where(pos, graph.Sqrt(safe), zero)
}

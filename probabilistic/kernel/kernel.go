// Package kernel holds the covariance kernels shared by Gaussian
// processes (probabilistic/gp), support vector machines (learn/svm),
// kernel PCA (learn/pca) and the kernel two-sample and independence tests
// (learn/kerneltest), with their hyperparameters.
//
//	k := kernel.NewSum(kernel.NewScale(kernel.NewRBF(1), 1), kernel.NewWhite(0.1))
//	g := graph.New()
//	kxx := k.K(g.Const(x), g.Const(x)) // (n, n), differentiable in x and the hyperparameters
//	k.Hyperparams()[1].Value()         // the RBF's lengthscale
//
// A Kernel builds its covariance matrix K(x1, x2) from graph nodes, so the
// matrix is differentiable with respect to both the inputs and the
// hyperparameters. Inputs are (n, d) matrices. The stationary kernels (RBF,
// Matérn, rational quadratic) and the periodic kernel follow Rasmussen and
// Williams (2006), Gaussian Processes for Machine Learning, chapter 4.
//
// Hyperparameters are Hyperparams: stored unconstrained (softplus by
// default, as in GPyTorch) with optional priors, and named by dotted paths
// ("rbf.lengthscale"); combining kernels makes repeated names unique
// ("rbf_2.lengthscale"). Kernels whose value at equal inputs matters
// (White, and the exact zero distance of stationary kernels) recognise
// K(x, x) by the two arguments being the same node.
//
// NewDeep puts a neural network under any kernel (deep kernel learning,
// Wilson et al. 2016); the network's parameters become hyperparameters, so
// the models that fit a kernel train the network too.
//
// Misuse (inputs that are not matrices, dimensions that do not match an
// ARD lengthscale) panics with a *tensor.Error as everywhere in Gradus.
package kernel

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
	// Hyperparams returns the hyperparameters, in a stable order, each once.
	Hyperparams() []*Hyperparam
}

// Named renames the hyperparameters of k so that their names start with
// name (e.g. "trend.lengthscale"), and returns k.
func Named(name string, k Kernel) Kernel {
	ps := k.Hyperparams()
	for _, p := range ps {
		p.kernel = name
	}
	UniqueHyperparams(ps)
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

package svm

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// SVCOptions configures FitSVC. The zero value means the defaults stated
// on each field (LIBSVM's and scikit-learn's).
type SVCOptions struct {
	// Kernel is the covariance function; nil means an RBF kernel with
	// scikit-learn's γ = "scale" (ScaleGamma of the training rows).
	Kernel kernel.Kernel
	// C is the box constraint; zero means 1. It must not be negative.
	C float64
	// ClassWeights scales C per class: class c's box is C·ClassWeights[c]
	// (a missing class has weight 1; a weight must be positive and
	// finite). Nil means every weight is 1.
	ClassWeights map[int]float64
	// OneVsRest trains one machine per class against all the others and
	// predicts the class of the largest decision value, instead of
	// LIBSVM's one-vs-one vote (more than two classes only).
	OneVsRest bool
	// Tol stops SMO when the maximal KKT violation is below it; zero
	// means 1e-3.
	Tol float64
	// MaxIter bounds the SMO steps per machine; zero means 10⁷.
	MaxIter int
	// CacheBytes bounds the kernel-column cache; zero means 100 MB.
	CacheBytes int
	// NoShrinking turns off LIBSVM's shrinking heuristic; the solution is
	// the same to the tolerance, only the path differs.
	NoShrinking bool
	// Probability fits a Platt sigmoid per machine after training, so
	// that PredictProba works.
	Probability bool

	float32Q bool // tests: round Q to float32 as LIBSVM stores it
}

// NuSVCOptions configures FitNuSVC. The zero value means the defaults
// stated on each field.
type NuSVCOptions struct {
	// Kernel is the covariance function; nil means an RBF kernel with
	// γ = "scale" (ScaleGamma).
	Kernel kernel.Kernel
	// Nu is ν in (0, 1]: an upper bound on the fraction of margin errors
	// and a lower bound on the fraction of support vectors; zero means 0.5.
	Nu float64
	// OneVsRest trains one machine per class against the rest (more than
	// two classes only), as in SVCOptions.
	OneVsRest bool
	// Tol stops SMO when the maximal KKT violation is below it; zero
	// means 1e-3.
	Tol float64
	// MaxIter bounds the SMO steps per machine; zero means 10⁷.
	MaxIter int
	// CacheBytes bounds the kernel-column cache; zero means 100 MB.
	CacheBytes int
	// NoShrinking turns off LIBSVM's shrinking heuristic.
	NoShrinking bool
	// Probability fits a Platt sigmoid per machine after training, so
	// that PredictProba works.
	Probability bool

	float32Q bool
}

// SVROptions configures FitSVR. The zero value means the defaults stated
// on each field.
type SVROptions struct {
	// Kernel is the covariance function; nil means an RBF kernel with
	// γ = "scale" (ScaleGamma).
	Kernel kernel.Kernel
	// C is the box constraint; zero means 1.
	C float64
	// Epsilon is the half-width of the insensitive tube; zero means 0.1.
	Epsilon float64
	// Tol stops SMO when the maximal KKT violation is below it; zero
	// means 1e-3.
	Tol float64
	// MaxIter bounds the SMO steps; zero means 10⁷.
	MaxIter int
	// CacheBytes bounds the kernel-column cache; zero means 100 MB.
	CacheBytes int
	// NoShrinking turns off LIBSVM's shrinking heuristic.
	NoShrinking bool

	float32Q bool
}

// NuSVROptions configures FitNuSVR. The zero value means the defaults
// stated on each field.
type NuSVROptions struct {
	// Kernel is the covariance function; nil means an RBF kernel with
	// γ = "scale" (ScaleGamma).
	Kernel kernel.Kernel
	// C is the box constraint; zero means 1.
	C float64
	// Nu is ν in (0, 1]: an upper bound on the fraction of points outside
	// the tube and a lower bound on the fraction of support vectors; zero
	// means 0.5.
	Nu float64
	// Tol stops SMO when the maximal KKT violation is below it; zero
	// means 1e-3.
	Tol float64
	// MaxIter bounds the SMO steps; zero means 10⁷.
	MaxIter int
	// CacheBytes bounds the kernel-column cache; zero means 100 MB.
	CacheBytes int
	// NoShrinking turns off LIBSVM's shrinking heuristic.
	NoShrinking bool

	float32Q bool
}

// CrammerSingerOptions configures FitCrammerSinger. The zero value means
// the defaults stated on each field.
type CrammerSingerOptions struct {
	// Kernel is the covariance function; nil means an RBF kernel with
	// γ = "scale" (ScaleGamma).
	Kernel kernel.Kernel
	// C bounds each example's coefficients; zero means 1.
	C float64
	// Tol stops when the maximal violation of the optimality conditions is
	// below it; zero means 1e-3.
	Tol float64
	// MaxIter bounds the subproblem steps; zero means 10⁷.
	MaxIter int
	// CacheBytes bounds the kernel-column cache; zero means 100 MB.
	CacheBytes int
}

// KernelRidgeOptions configures FitKernelRidge. The zero value means the
// defaults stated on each field.
type KernelRidgeOptions struct {
	// Kernel is the covariance function; nil means an RBF kernel with
	// γ = "scale" (ScaleGamma).
	Kernel kernel.Kernel
	// Lambda is the ridge penalty λ > 0 (the GP's noise variance); zero
	// means 1, as scikit-learn's alpha.
	Lambda float64
}

// LinearSVMOptions configures FitLinearSVM. The zero value means the
// defaults stated on each field.
type LinearSVMOptions struct {
	// C weighs the summed loss against ½‖w‖²; zero means 1.
	C float64
	// Loss is the margin loss (Hinge by default).
	Loss Loss
	// MaxIter is the number of L-BFGS iterations (squared hinge) or Adam
	// steps (hinge); zero means 2000.
	MaxIter int
}

// PlattOptions configures FitPlatt. The zero value means the defaults
// stated on each field.
type PlattOptions struct {
	// MaxIter bounds the L-BFGS iterations; zero means 200.
	MaxIter int
	// Tol stops L-BFGS when the gradient's norm is below it; zero means
	// 1e-10.
	Tol float64
}

// defaultKernel returns k, or for nil the RBF with scikit-learn's
// γ = "scale" on x.
func defaultKernel(k kernel.Kernel, x *tensor.Tensor) kernel.Kernel {
	if k != nil {
		return k
	}
	g := ScaleGamma(x)
	if !(g > 0) || math.IsInf(g, 0) {
		g = 1 // constant data: any lengthscale gives the same machine
	}
	return kernel.NewRBF(math.Sqrt(1 / (2 * g)))
}

// notConverged is the error of a solver that ran out of iterations.
func notConverged(op string, iterations int, violation, tol float64) error {
	return &tensor.NotConvergedError{Op: op, Iterations: iterations, Change: violation, Tol: tol}
}

// cancelled wraps ctx's error for a fit that stopped early.
func cancelled(op string, iterations int, err error) error {
	return fmt.Errorf("%s: stopped after %d iterations: %w", op, iterations, err)
}

// orBackground returns ctx, or context.Background for nil.
func orBackground(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}

package svm

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// KernelRidge is kernel ridge regression, the squared-loss kernel machine:
// f(x) = Σᵢ αᵢ K(xᵢ, x) with α = (K + λI)⁻¹z minimising
// Σᵢ (zᵢ − f(xᵢ))² + λ‖f‖²_H. Its prediction is the posterior mean of a
// zero-mean Gaussian process with the same kernel and noise variance
// σ² = λ (Rasmussen and Williams 2006, Gaussian Processes for Machine
// Learning, §6.2).
type KernelRidge struct {
	Kernel kernel.Kernel
	X      *tensor.Tensor // training rows (n, d), float64
	Alpha  []float64      // the dual coefficients
	Lambda float64
}

// FitKernelRidge solves (K + λI)α = y for the rows of x (n, d) and the
// targets y (n) by a Cholesky factorisation (closed form: no context). It
// returns an error for bad data (NaN or ±Inf, zero rows or columns), a λ
// that is negative or not finite, or a matrix that is not positive definite
// (which a positive λ prevents for a valid kernel).
// It is closed-form, with no iterations to run out of: it never returns a
// *tensor.NotConvergedError.
func FitKernelRidge(x, y *tensor.Tensor, opts KernelRidgeOptions) (*KernelRidge, error) {
	const op = "svm.FitKernelRidge"
	x64, z, err := checkRegression(op, x, y)
	if err != nil {
		return nil, err
	}
	k := defaultKernel(opts.Kernel, x64)
	lambda := opts.Lambda
	if lambda == 0 {
		lambda = 1
	}
	if !(lambda > 0) || math.IsInf(lambda, 0) {
		return nil, fmt.Errorf("%s: λ = %v must be positive and finite", op, lambda)
	}
	n := len(z)
	kv, err := kernelRows(k, x64, x64)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	km := tensor.AddDiag(tensor.FromFloat64s(kv, n, n), tensor.Scalar(tensor.Float64, lambda))
	l, err := tensor.Cholesky(km)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	zt := tensor.FromFloat64s(append([]float64(nil), z...), n, 1)
	v := tensor.TriSolve(l, zt, true, false)
	alpha := tensor.TriSolve(l, v, true, true)
	return &KernelRidge{Kernel: k, X: x64, Alpha: alpha.Values(), Lambda: lambda}, nil
}

// Predict returns f(x) for the rows of x (m, d), shaped (m). It panics with
// a *tensor.Error unless x is a matrix with the training columns.
func (r *KernelRidge) Predict(x *tensor.Tensor) *tensor.Tensor {
	checkRows("svm.KernelRidge.Predict", x, r.X)
	kv, err := kernelRows(r.Kernel, x.Cast(tensor.Float64), r.X)
	if err != nil {
		tensor.Fail("svm.KernelRidge.Predict", "%v", err)
	}
	n := len(r.Alpha)
	out := make([]float64, x.Shape()[0])
	for i := range out {
		for j, a := range r.Alpha {
			out[i] += a * kv[i*n+j]
		}
	}
	return tensor.FromFloat64s(out, len(out))
}

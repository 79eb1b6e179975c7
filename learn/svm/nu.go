package svm

import (
	"context"
	"fmt"

	"github.com/gradus-ml/gradus/tensor"
)

// FitNuSVC trains a ν-SVC (Schölkopf, Smola, Williamson and Bartlett 2000,
// New support vector algorithms) on the rows of x (n, d) with
// integer labels, as LIBSVM does: the dual min ½αᵀQα subject to yᵀα = 0,
// eᵀα = νn and 0 ≤ αᵢ ≤ 1 (the textbook's box 1/n and Σα = ν, scaled by
// n), solved by SMO that moves two variables of the same class at a time,
// then divided by the margin r, which makes it the C-SVC solution with
// C = 1/r (Binary.C). ν bounds the fraction of margin errors from above
// and of support vectors from below. It returns an error for ν outside
// (0, 1] or a ν that the smaller class cannot reach, ν > 2·min(n₊, n₋)/n
// for a pair of classes, and otherwise behaves as FitSVC (errors,
// non-convergence, ctx).
// SMO out of MaxIter returns the model with a *tensor.NotConvergedError.
func FitNuSVC(ctx context.Context, x *tensor.Tensor, labels []int, opts NuSVCOptions) (*SVC, error) {
	return fitSVC(orBackground(ctx), "svm.FitNuSVC", x, labels, opts.Kernel, solverOptions{
		Nu: opts.Nu, OneVsRest: opts.OneVsRest, Tol: opts.Tol, MaxIter: opts.MaxIter,
		CacheBytes: opts.CacheBytes, NoShrinking: opts.NoShrinking, Probability: opts.Probability, float32Q: opts.float32Q}, true)
}

// FitNuSVR trains ν-SVR (Schölkopf et al. 2000, New support vector
// algorithms) on the rows of x (n, d) with targets y (n), as LIBSVM does:
// ε is a variable, and the dual over α⁺, α⁻ adds Σ(α⁺ + α⁻) = Cνn to
// ε-SVR's constraints (box [0, C]). The tube width it finds is
// SVR.Epsilon; ν bounds the fraction of points outside the tube from above
// and of support vectors from below. It returns an error for ν outside
// (0, 1], and otherwise behaves as FitSVR.
// SMO out of MaxIter returns the model with a *tensor.NotConvergedError.
func FitNuSVR(ctx context.Context, x, y *tensor.Tensor, opts NuSVROptions) (*SVR, error) {
	return fitSVR(orBackground(ctx), "svm.FitNuSVR", x, y, opts.Kernel, solverOptions{
		C: opts.C, Nu: opts.Nu, Tol: opts.Tol, MaxIter: opts.MaxIter,
		CacheBytes: opts.CacheBytes, NoShrinking: opts.NoShrinking, float32Q: opts.float32Q}, true)
}

func checkNu(op string, nu float64) error {
	if !(nu > 0 && nu <= 1) {
		return fmt.Errorf("%s: ν = %v must be in (0, 1]", op, nu)
	}
	return nil
}

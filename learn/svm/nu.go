package svm

import (
	"fmt"

	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// FitNuSVC trains a ν-SVC (seed 000 §3.2.3) on the rows of x (n, d) with
// integer labels, as LIBSVM does: the dual min ½αᵀQα subject to yᵀα = 0,
// eᵀα = νn and 0 ≤ αᵢ ≤ 1 (the textbook's box 1/n and Σα = ν, scaled by
// n), solved by SMO that moves two variables of the same class at a time,
// then divided by the margin r, which makes it the C-SVC solution with
// C = 1/r (Binary.C). ν (Options.Nu, default 0.5) bounds the fraction of
// margin errors from above and of support vectors from below. Class
// weights are ignored, as in LIBSVM. It returns an error for ν outside
// (0, 1] or a ν that the smaller class cannot reach, ν > 2·min(n₊, n₋)/n
// for a pair of classes.
func FitNuSVC(x *tensor.Tensor, labels []int, k kernel.Kernel, opts Options) (*SVC, error) {
	opts.ClassWeights = nil
	return fitSVC("svm.FitNuSVC", x, labels, k, opts, true)
}

// FitNuSVR trains ν-SVR (seed 001 §6.1.3) on the rows of x (n, d) with
// targets z, as LIBSVM does: ε is a variable, and the dual over α⁺, α⁻
// adds Σ(α⁺ + α⁻) = Cνn to ε-SVR's constraints (box [0, C]). The tube
// width it finds is SVR.Epsilon; ν (Options.Nu, default 0.5) bounds the
// fraction of points outside the tube from above and of support vectors
// from below. It returns an error for ν outside (0, 1].
func FitNuSVR(x *tensor.Tensor, z []float64, k kernel.Kernel, opts Options) (*SVR, error) {
	return fitSVR("svm.FitNuSVR", x, z, k, opts, true)
}

func checkNu(op string, nu float64) error {
	if !(nu > 0 && nu <= 1) {
		return fmt.Errorf("%s: ν = %v must be in (0, 1]", op, nu)
	}
	return nil
}

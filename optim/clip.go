package optim

import (
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// ClipByValue clamps every gradient element to [−limit, limit] in place
// (torch.nn.utils.clip_grad_value_). NaN elements stay NaN. It panics with
// a *tensor.Error if limit is negative or NaN or a gradient is not a
// contiguous float32/float64 tensor. It does not allocate.
func ClipByValue(grads []*tensor.Tensor, limit float64) {
	if !(limit >= 0) {
		tensor.Fail("ClipByValue", "limit %g must be >= 0", limit)
	}
	checkGrads("ClipByValue", grads)
	for _, g := range grads {
		if g.DType() == tensor.Float32 {
			clampAll(g.Float32s(), float32(limit))
		} else {
			clampAll(g.Float64s(), limit)
		}
	}
}

func clampAll[T tensor.Float](xs []T, limit T) {
	for i, x := range xs {
		if x > limit {
			xs[i] = limit
		} else if x < -limit {
			xs[i] = -limit
		}
	}
}

// ClipByGlobalNorm rescales the gradients in place so that their global
// L2 norm (over all elements of all tensors) is at most maxNorm, with the
// semantics of torch.nn.utils.clip_grad_norm_: when the coefficient
// maxNorm/(norm + 1e-6) is below 1, every element is multiplied by it. It
// returns the norm before clipping, accumulated in float64. A non-finite
// norm leaves the gradients unchanged (Step will refuse them). It panics
// with a *tensor.Error if maxNorm is negative or NaN or a gradient is not a
// contiguous float32/float64 tensor. It does not allocate.
func ClipByGlobalNorm(grads []*tensor.Tensor, maxNorm float64) float64 {
	if !(maxNorm >= 0) {
		tensor.Fail("ClipByGlobalNorm", "maxNorm %g must be >= 0", maxNorm)
	}
	checkGrads("ClipByGlobalNorm", grads)
	var ss float64
	for _, g := range grads {
		if g.DType() == tensor.Float32 {
			ss += sumSquares(g.Float32s())
		} else {
			ss += sumSquares(g.Float64s())
		}
	}
	norm := math.Sqrt(ss)
	if math.IsInf(norm, 0) || math.IsNaN(norm) {
		return norm
	}
	coef := maxNorm / (norm + 1e-6)
	if coef < 1 {
		for _, g := range grads {
			if g.DType() == tensor.Float32 {
				scaleAll(g.Float32s(), float32(coef))
			} else {
				scaleAll(g.Float64s(), coef)
			}
		}
	}
	return norm
}

func sumSquares[T tensor.Float](xs []T) float64 {
	var s float64
	for _, x := range xs {
		s += float64(x) * float64(x)
	}
	return s
}

func scaleAll[T tensor.Float](xs []T, c T) {
	for i := range xs {
		xs[i] *= c
	}
}

func checkGrads(op string, grads []*tensor.Tensor) {
	for i, g := range grads {
		if g == nil {
			tensor.Fail(op, "gradient %d is nil", i)
		}
		if g.DType() != tensor.Float32 && g.DType() != tensor.Float64 {
			tensor.Fail(op, "gradient %d has unsupported dtype %v", i, g.DType())
		}
		if !g.IsContiguous() {
			tensor.Fail(op, "gradient %d of shape %s is not contiguous", i, tensor.FormatShape(g.Shape()))
		}
	}
}

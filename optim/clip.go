package optim

import (
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// ClipByValue clamps every gradient element to [−limit, limit] in place
// (torch.nn.utils.clip_grad_value_). NaN elements stay NaN. It panics with
// a *tensor.Error if limit is negative or NaN or a gradient is not a
// contiguous float32/float64 tensor. It does not allocate. Gradients on a
// GPU are clamped there.
func ClipByValue(grads []*tensor.Tensor, limit float64) {
	if !(limit >= 0) {
		tensor.Fail("ClipByValue", "limit %g must be >= 0", limit)
	}
	checkGrads("ClipByValue", grads)
	for _, g := range grads {
		if g.Device() != tensor.CPU {
			tensor.ClampTo(g, g, -limit, limit)
			continue
		}
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
// contiguous float32/float64 tensor. It does not allocate on the CPU;
// gradients on a GPU are measured and scaled there, with one wait per
// gradient for its sum of squares.
func ClipByGlobalNorm(grads []*tensor.Tensor, maxNorm float64) float64 {
	if !(maxNorm >= 0) {
		tensor.Fail("ClipByGlobalNorm", "maxNorm %g must be >= 0", maxNorm)
	}
	checkGrads("ClipByGlobalNorm", grads)
	var ss float64
	for _, g := range grads {
		if g.Device() != tensor.CPU {
			// Squares summed in float64 on the device, as on the CPU (in
			// another order); the sum comes back with one wait.
			ss += tensor.Sum(tensor.Square(g.Cast(tensor.Float64)), nil, false).Item()
			continue
		}
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
			if g.Device() != tensor.CPU {
				tensor.MulScalarTo(g, g, float64(scaleOf(g.DType(), coef)))
				continue
			}
			if g.DType() == tensor.Float32 {
				scaleAll(g.Float32s(), float32(coef))
			} else {
				scaleAll(g.Float64s(), coef)
			}
		}
	}
	return norm
}

// scaleOf is coef as the CPU loop multiplies by it: rounded to float32
// for float32 gradients.
func scaleOf(dt tensor.DType, coef float64) float64 {
	if dt == tensor.Float32 {
		return float64(float32(coef))
	}
	return coef
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

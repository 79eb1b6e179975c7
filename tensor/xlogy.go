package tensor

import (
	"math"

	"github.com/chewxy/math32"
)

var xlogyOp = &binaryOp{name: "Xlogy",
	f32: binaryKernel[float32]{elem: func(x, y float32) float32 {
		if x == 0 && !math32.IsNaN(y) {
			return 0
		}
		return x * math32.Log(y)
	}},
	f64: binaryKernel[float64]{elem: func(x, y float64) float64 {
		if x == 0 && !math.IsNaN(y) {
			return 0
		}
		return x * math.Log(y)
	}},
}

// Xlogy returns x·log y elementwise with broadcasting, and 0 where x = 0
// whatever y is (0·log 0 = 0, the convention of entropies and KL
// divergences), unless y is NaN. It panics with a *Error when the dtypes
// differ or the shapes do not broadcast.
func Xlogy(x, y *Tensor) *Tensor { return xlogyOp.apply(nil, x, y) }

// XlogyTo stores Xlogy(x, y) in dst (nil allocates) and returns it.
func XlogyTo(dst, x, y *Tensor) *Tensor { return xlogyOp.apply(dst, x, y) }

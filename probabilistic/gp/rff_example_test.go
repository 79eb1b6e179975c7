package gp_test

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/probabilistic/gp"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// Random Fourier features approximate the RBF kernel: k(0, 1) = e^{−1/2}
// ≈ 0.607, to about 1/√D.
func ExampleNewRFF() {
	r, err := gp.NewRFF(kernel.NewRBF(1), 1, 20000, tensor.NewRNG(3))
	if err != nil {
		panic(err)
	}
	x := tensor.FromFloat64s([]float64{0, 1}, 2, 1)
	fmt.Printf("%.1f (exact %.1f)\n", r.Kernel(x, nil).At(0, 1), math.Exp(-0.5))
	// Output: 0.6 (exact 0.6)
}

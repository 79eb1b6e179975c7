package gp_test

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/probabilistic/gp"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// Fit 200 noisy samples of sin(x) with 8 inducing points, whose locations
// are learnt with the hyperparameters.
func ExampleFitSparse() {
	rng := tensor.NewRNG(1)
	x := tensor.Linspace(tensor.Float64, -3, 3, 200)
	y := tensor.Add(tensor.Sin(x), rng.Normal(tensor.Float64, 0, 0.1, 200))
	z := tensor.Linspace(tensor.Float64, -1, 1, 8)
	s, err := gp.FitSparse(context.Background(), tensor.Reshape(x, 200, 1), y,
		gp.SparseOptions{Kernel: kernel.NewScale(kernel.NewRBF(1), 1), Inducing: tensor.Reshape(z, 8, 1)})
	if err != nil {
		panic(err)
	}
	pred, err := s.Predict(tensor.FromFloat64s([]float64{math.Pi / 2}, 1, 1))
	if err != nil {
		panic(err)
	}
	fmt.Printf("f(π/2) ≈ %.1f, noise variance ≈ %.2f\n", pred.Mean.At(0), s.Noise().Value())
	// Output: f(π/2) ≈ 1.0, noise variance ≈ 0.01
}

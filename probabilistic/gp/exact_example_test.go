package gp_test

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/probabilistic/gp"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// Fit a GP to noisy samples of sin(x) and predict between them.
func ExampleFitExact() {
	rng := tensor.NewRNG(1)
	x := tensor.Linspace(tensor.Float64, 0, 2*math.Pi, 20)
	y := tensor.Add(tensor.Sin(x), rng.Normal(tensor.Float64, 0, 0.05, 20))
	k := kernel.NewScale(kernel.NewRBF(1), 1)
	m, err := gp.FitExact(context.Background(), tensor.Reshape(x, 20, 1), y, gp.ExactOptions{Kernel: k, Noise: 0.01})
	if err != nil {
		panic(err)
	}
	pred, err := m.Predict(tensor.FromFloat64s([]float64{math.Pi / 2}, 1, 1))
	if err != nil {
		panic(err)
	}
	fmt.Printf("f(π/2) ≈ %.1f ± %.1f\n", pred.Mean.At(0), 2*math.Sqrt(pred.Var.At(0)))
	// Output: f(π/2) ≈ 1.0 ± 0.1
}

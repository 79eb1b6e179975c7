package gp_test

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/probabilistic/gp"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// Two series that move together, observed at the same inputs: the
// intrinsic coregionalisation model learns their task covariance through
// the Kronecker path and finds them strongly correlated.
func ExampleFitMultitask() {
	rng := tensor.NewRNG(1)
	const n = 40
	x := tensor.Reshape(tensor.Linspace(tensor.Float64, 0, 8, n), n, 1)
	y := make([]float64, 0, 2*n)
	for i := range n {
		f := math.Sin(x.At(i, 0))
		y = append(y, f+0.05*rng.NormFloat64(), 2*f+0.05*rng.NormFloat64()) // row i: both tasks
	}
	m, err := gp.FitMultitask(context.Background(), x, tensor.FromFloat64s(y, n, 2), nil,
		gp.MultitaskOptions{Kernels: []kernel.Kernel{kernel.NewRBF(1)}, Seed: 2})
	if err != nil {
		panic(err)
	}
	b := m.TaskCovariance(0)
	fmt.Printf("Kronecker path: %v\n", m.Kronecker())
	fmt.Printf("correlation %.2f, scale ratio %.1f\n", b.At(0, 1)/math.Sqrt(b.At(0, 0)*b.At(1, 1)), math.Sqrt(b.At(1, 1)/b.At(0, 0)))
	// Output:
	// Kronecker path: true
	// correlation 1.00, scale ratio 2.0
}

// LOVE caches one Lanczos decomposition; its variances then match the
// exact ones.
func ExampleExact_LOVE() {
	x := tensor.Reshape(tensor.Linspace(tensor.Float64, -3, 3, 500), 500, 1)
	y := tensor.Sin(tensor.Reshape(x, 500))
	m, err := gp.NewExact(x, y, gp.ExactOptions{Kernel: kernel.NewRBF(1), Noise: 0.01})
	if err != nil {
		panic(err)
	}
	cache, err := m.LOVE(gp.LOVEOptions{Rank: 50})
	if err != nil {
		panic(err)
	}
	xs := tensor.FromFloat64s([]float64{0.25, 3.5}, 2, 1)
	fast, _ := cache.Predict(xs)
	exact, _ := m.Predict(xs)
	for i := range 2 {
		fmt.Printf("var %.3e (exact %.3e)\n", fast.Var.At(i), exact.Var.At(i))
	}
	// Output:
	// var 1.714e-04 (exact 1.714e-04)
	// var 4.206e-02 (exact 4.206e-02)
}

// Deep kernel learning for classification: a network's features under an
// RBF kernel, trained with the GP on Dirichlet-transformed labels.
func ExampleFitDirichletClassifier() {
	rng := tensor.NewRNG(3)
	const n = 60
	xv := make([]float64, 0, 2*n)
	labels := make([]int, n)
	for i := range labels {
		labels[i] = i % 2
		r := 1 + 2*float64(labels[i]) // two rings
		a := rng.Float64() * 2 * math.Pi
		xv = append(xv, r*math.Cos(a)+0.1*rng.NormFloat64(), r*math.Sin(a)+0.1*rng.NormFloat64())
	}
	x := tensor.FromFloat64s(xv, n, 2)
	net := nn.NewSequential(nn.NewLinear(rng, 2, 8, true, tensor.Float64), nn.Tanh{}, nn.NewLinear(rng, 8, 2, true, tensor.Float64))
	k := kernel.NewScale(kernel.NewDeep(net, kernel.NewRBF(1)), 1)
	m, err := gp.FitDirichletClassifier(context.Background(), x, labels, gp.DirichletOptions{Kernel: k, MaxIter: 50, LR: 0.05})
	if err != nil {
		panic(err)
	}
	p, _ := m.PredictProba(tensor.FromFloat64s([]float64{0, 1, 3, 0}, 2, 2))
	fmt.Printf("P(outer ring) at (0, 1): %.2f, at (3, 0): %.2f\n", p.At(0, 1), p.At(1, 1))
	// Output: P(outer ring) at (0, 1): 0.00, at (3, 0): 1.00
}

// Draws from a GP prior with a linear mean.
func ExampleSamplePrior() {
	mean := gp.NewLinearMean(1)
	_ = mean.Weight().Set(2)
	xs := tensor.FromFloat64s([]float64{0, 1, 2}, 3, 1)
	s, err := gp.SamplePrior(kernel.NewScale(kernel.NewRBF(1), 0.01), mean, xs, 1000, tensor.NewRNG(4))
	if err != nil {
		panic(err)
	}
	avg := graph.New().Const(s)
	fmt.Printf("%.1f\n", graph.Mean(avg, []int{0}, false).Value().Values())
	// Output: [0.0 2.0 4.0]
}

package gp_test

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/probabilistic/gp"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// Fit 2,000 noisy samples of sin(x) with 15 inducing points and
// minibatches of 100; the hyperparameters, the inducing inputs and q(u)
// are trained together by Adam.
func ExampleFitSVGP() {
	rng := tensor.NewRNG(1)
	x := tensor.Linspace(tensor.Float64, -3, 3, 2000)
	y := tensor.Add(tensor.Sin(x), rng.Normal(tensor.Float64, 0, 0.1, 2000))
	s, err := gp.FitSVGP(context.Background(), tensor.Reshape(x, 2000, 1), y, gp.SVGPOptions{
		Kernel: kernel.NewScale(kernel.NewRBF(1), 1), NumInducing: 15, BatchSize: 100, Steps: 600, LR: 0.02})
	if err != nil {
		panic(err)
	}
	pred, err := s.Predict(tensor.FromFloat64s([]float64{math.Pi / 2}, 1, 1))
	if err != nil {
		panic(err)
	}
	fmt.Printf("f(π/2) ≈ %.1f, noise variance ≈ %.2f\n", pred.Mean.At(0), s.Hyperparam("noise").Value())
	// Output: f(π/2) ≈ 1.0, noise variance ≈ 0.01
}

// Classify points by the sign of x₁x₂ with a logit Bernoulli likelihood and
// natural-gradient steps for q(u).
func ExampleFitSVGPClassifier() {
	rng := tensor.NewRNG(2)
	n := 300
	x := rng.Uniform(tensor.Float64, -2, 2, n, 2)
	labels := make([]int, n)
	for i := range labels {
		if x.At(i, 0)*x.At(i, 1) > 0 {
			labels[i] = 1
		}
	}
	c, err := gp.FitSVGPClassifier(context.Background(), x, labels, gp.SVGPOptions{
		Kernel: kernel.NewScale(kernel.NewRBF(1), 1), NumInducing: 30, BatchSize: 100, Steps: 300, LR: 0.02, NaturalGradient: 0.1})
	if err != nil {
		panic(err)
	}
	p, err := c.PredictProba(tensor.FromFloat64s([]float64{1, 1, -1, 1}, 2, 2))
	if err != nil {
		panic(err)
	}
	fmt.Printf("p(y=1 | (1, 1)) > 0.8: %v, p(y=1 | (−1, 1)) < 0.2: %v\n", p.At(0, 1) > 0.8, p.At(1, 1) < 0.2)
	// Output: p(y=1 | (1, 1)) > 0.8: true, p(y=1 | (−1, 1)) < 0.2: true
}

// Three classes along a line, one latent GP per class under a softmax
// likelihood whose expectation is estimated by Monte Carlo.
func ExampleNewSoftmaxLikelihood() {
	rng := tensor.NewRNG(3)
	n := 150
	x := rng.Uniform(tensor.Float64, -3, 3, n, 1)
	labels := make([]int, n)
	for i := range labels {
		labels[i] = int(math.Min(2, math.Floor((x.At(i, 0)+3)/2))) // [−3, −1) → 0, [−1, 1) → 1, [1, 3] → 2
	}
	c, err := gp.FitSVGPClassifier(context.Background(), x, labels, gp.SVGPOptions{
		Kernel: kernel.NewScale(kernel.NewRBF(1), 2), Likelihood: gp.NewSoftmaxLikelihood(3, 8, 1),
		NumInducing: 10, Steps: 200, LR: 0.05})
	if err != nil {
		panic(err)
	}
	pred, err := c.Predict(tensor.FromFloat64s([]float64{-2, 0, 2}, 3, 1))
	if err != nil {
		panic(err)
	}
	fmt.Println("classes at −2, 0, 2:", pred)
	// Output: classes at −2, 0, 2: [0 1 2]
}

// Counts whose log rate is sin x, fitted with a Poisson likelihood and
// natural-gradient steps; the predictive mean rate is e^(μ + v/2).
func ExampleNewPoissonLikelihood() {
	rng := tensor.NewRNG(4)
	n := 500
	x := rng.Uniform(tensor.Float64, 0, 6, n, 1)
	y := make([]float64, n)
	for i := range y { // a Poisson draw by inversion
		rate := math.Exp(math.Sin(x.At(i, 0)))
		u, p := rng.Float64(), math.Exp(-rate)
		for c := p; u > c; c += p {
			y[i]++
			p *= rate / y[i]
		}
	}
	lik := gp.NewPoissonLikelihood(0)
	s, err := gp.FitSVGP(context.Background(), x, tensor.FromFloat64s(y, n), gp.SVGPOptions{
		Kernel: kernel.NewScale(kernel.NewRBF(1), 1), Likelihood: lik, NumInducing: 12,
		Steps: 200, LR: 0.02, NaturalGradient: 0.2})
	if err != nil {
		panic(err)
	}
	pred, err := s.Predict(tensor.FromFloat64s([]float64{math.Pi / 2, 3 * math.Pi / 2}, 2, 1))
	if err != nil {
		panic(err)
	}
	rate, _ := lik.PredictY(pred.Mean.Values(), pred.Var.Values())
	fmt.Printf("rate at π/2 ≈ %.1f (e ≈ 2.7), at 3π/2 ≈ %.1f (1/e ≈ 0.4)\n", rate[0], rate[1])
	// Output: rate at π/2 ≈ 2.8 (e ≈ 2.7), at 3π/2 ≈ 0.4 (1/e ≈ 0.4)
}

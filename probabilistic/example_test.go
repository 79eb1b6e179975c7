package probabilistic_test

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/tensor"
)

// The package example: a reparameterised Monte Carlo ELBO-like objective
// and its gradients.
func Example() {
	g := graph.New()
	mu := g.Var(tensor.FromFloat64s([]float64{0, 1}, 2))
	sigma := g.Var(tensor.FromFloat64s([]float64{1, 2}, 2))
	p := probabilistic.NewNormal(mu, sigma)
	x := p.RSample(tensor.NewRNG(1), 100) // (100, 2)
	q := probabilistic.NewNormal(g.Scalar(tensor.Float64, 0), g.Scalar(tensor.Float64, 1))
	kl, err := probabilistic.KL(p, q) // (2)
	if err != nil {
		panic(err)
	}
	elbo := graph.Sub(graph.Mean(p.LogProb(x), nil, false), graph.Sum(kl, nil, false))
	grads := autodiff.Grad(elbo, mu, sigma)
	fmt.Println(x.Shape(), kl.Shape(), grads[0].Shape())
	fmt.Printf("KL = %.4f\n", kl.Value().Values())
	// Output:
	// [100 2] [2] [2]
	// KL = [0.0000 1.3069]
}

func ExampleNormal_LogProb() {
	g := graph.New()
	d := probabilistic.NewNormal(g.Scalar(tensor.Float64, 0), g.Scalar(tensor.Float64, 1))
	x := g.Const(tensor.FromFloat64s([]float64{0, 1, 2}, 3))
	fmt.Printf("%.6f\n", d.LogProb(x).Value().Values())
	// Output: [-0.918939 -1.418939 -2.918939]
}

func ExampleKL() {
	g := graph.New()
	f := func(v float64) *graph.Node { return g.Scalar(tensor.Float64, v) }
	p := probabilistic.NewGamma(f(1), f(1)) // Exponential(1)
	q := probabilistic.NewGamma(f(1), f(2)) // Exponential(2)
	kl, _ := probabilistic.KL(p, q)
	fmt.Printf("KL = %.6f, 1 − log 2 = %.6f\n", kl.Item(), 1-math.Ln2)

	_, err := probabilistic.KL(p, probabilistic.NewLaplace(f(0), f(1)))
	fmt.Println(err)
	// Output:
	// KL = 0.306853, 1 − log 2 = 0.306853
	// probabilistic.KL: no closed form registered for KL(*probabilistic.Gamma ‖ *probabilistic.Laplace); register one with RegisterKL or estimate it by sampling
}

func ExampleNewMVNFromCovariance() {
	g := graph.New()
	loc := g.Const(tensor.FromFloat64s([]float64{0, 0}, 2))
	cov := g.Var(tensor.FromFloat64s([]float64{2, 1, 1, 2}, 2, 2))
	d, err := probabilistic.NewMVNFromCovariance(loc, cov)
	if err != nil {
		panic(err)
	}
	lp := d.LogProb(g.Const(tensor.FromFloat64s([]float64{1, 0}, 2)))
	fmt.Printf("log p = %.6f\n", lp.Item()) // −log 2π − ½ log 3 − 1/3
	// ½(Σ⁻¹xxᵀΣ⁻¹ − Σ⁻¹) = (−1/9, 1/18; 1/18, −5/18)
	fmt.Printf("d log p/dΣ = %.4f\n", autodiff.Grad(lp, cov)[0].Value().Values())

	_, err = probabilistic.NewMVNFromCovariance(loc, g.Const(tensor.FromFloat64s([]float64{1, 2, 2, 1}, 2, 2)))
	fmt.Println(err != nil)
	// Output:
	// log p = -2.720517
	// d log p/dΣ = [-0.1111 0.0556 0.0556 -0.2778]
	// true
}

func ExampleStickBreaking() {
	g := graph.New()
	var b probabilistic.Bijector = probabilistic.StickBreaking{}
	x := g.Var(tensor.FromFloat64s([]float64{0, 0, 0}, 3))
	y := b.Forward(x) // the centre of the 4-simplex
	fmt.Printf("%.2f\n", y.Value().Values())
	fmt.Printf("%.2f\n", b.Inverse(y).Value().Values())
	// Output:
	// [0.25 0.25 0.25 0.25]
	// [0.00 0.00 0.00]
}

func ExampleCholeskyFactor() {
	g := graph.New()
	b := probabilistic.NewCholeskyFactor(2, false)
	x := g.Var(tensor.FromFloat64s([]float64{0, 0.5, math.Log(3)}, 3))
	fmt.Println(b.Forward(x).Value())
	fmt.Printf("log|det J| = %.4f\n", b.LogDetJacobian(x).Item()) // 0 + log 3
	// Output:
	// [[1, 0], [0.5, 3]]
	// log|det J| = 1.0986
}

func ExampleRSample() {
	g := graph.New()
	mu := g.Var(tensor.Scalar(tensor.Float64, 2))
	d := probabilistic.NewLaplace(mu, g.Scalar(tensor.Float64, 1))
	x, err := probabilistic.RSample(d, tensor.NewRNG(1), 1000)
	if err != nil {
		panic(err)
	}
	// d/dμ of the sample mean is exactly 1: x = μ + b·ε.
	fmt.Printf("%.6f\n", autodiff.Grad(graph.Mean(x, nil, false), mu)[0].Item())

	_, err = probabilistic.RSample(probabilistic.NewPoisson(mu), tensor.NewRNG(1), 10)
	fmt.Println(err)
	// Output:
	// 1.000000
	// probabilistic.RSample: *probabilistic.Poisson has no reparameterised sampler; use Sample (no gradient) or a score-function estimator
}

func ExampleReparameterise() {
	g := graph.New()
	mu := g.Var(tensor.FromFloat64s([]float64{0, 1}, 2))
	logvar := g.Var(tensor.FromFloat64s([]float64{0, math.Log(4)}, 2))
	eps := g.Const(tensor.FromFloat64s([]float64{1, -0.5}, 2))
	z := probabilistic.Reparameterise(mu, logvar, eps) // μ + σ·ε
	fmt.Println(z.Value())
	// Output: [1, 0]
}

func ExampleGaussianHead() {
	rng := tensor.NewRNG(1)
	head := probabilistic.NewGaussianHead(rng, 4, 2, probabilistic.LogVariance, tensor.Float64)
	g := graph.New()
	x := g.Const(rng.Normal(tensor.Float64, 0, 1, 8, 4)) // a batch of 8 feature vectors
	q := head.Distribution(x)                            // diagonal Normal, batch shape (8, 2)
	z := q.RSample(rng, 0)                               // one reparameterised draw per row
	prior := probabilistic.NewNormal(g.Scalar(tensor.Float64, 0), g.Scalar(tensor.Float64, 1))
	kl, _ := probabilistic.KL(q, prior)
	loss := graph.Add(graph.Mean(graph.Square(z), nil, false), graph.Mean(kl, nil, false))
	grads := nn.Gradients(loss, head.Params())
	fmt.Println(z.Shape(), len(grads), grads[0].Shape())
	for _, p := range head.Params() {
		fmt.Print(p.Name, " ")
	}
	fmt.Println()
	// Output:
	// [8 2] 4 [2 4]
	// mean.weight mean.bias scale.weight scale.bias
}

// A Normal-inverse-Wishart prior in one dimension is the Normal-inverse-gamma:
// σ² ~ InvGamma(1, 1) and μ | σ² ~ N(0, σ²), so log p(0, 1) = −1 − ½log 2π.
func ExampleNewNormalInverseWishart() {
	g := graph.New()
	d := probabilistic.NewNormalInverseWishart(g.Const(tensor.FromFloat64s([]float64{0}, 1)), 1,
		g.Scalar(tensor.Float64, 2), g.Const(tensor.FromFloat64s([]float64{math.Sqrt2}, 1, 1)))
	lp := d.LogProb(g.Const(tensor.FromFloat64s([]float64{0}, 1)), g.Const(tensor.FromFloat64s([]float64{1}, 1, 1)))
	fmt.Printf("%.4f\n", lp.Value().Item())
	// Output: -1.9189
}

// RealNVP's logit transform of dequantised pixels y ∈ [0, 1) is
// ScaledSigmoid's inverse; its log-det enters an image flow's likelihood.
func ExampleScaledSigmoid() {
	b := probabilistic.ScaledSigmoid{Alpha: 0.05}
	g := graph.New()
	y := g.Const(tensor.FromFloat64s([]float64{0.5 / 256, 128.5 / 256, 255.5 / 256}, 3))
	x := b.Inverse(y)
	fmt.Printf("logit %.4f\n", x.Value().Values())
	fmt.Printf("log|dy/dx| %.4f\n", b.LogDetJacobian(x).Value().Values())
	fmt.Printf("back %.6f\n", b.Forward(x).Value().Values())
	// Output:
	// logit [-2.9080 0.0070 2.9080]
	// log|dy/dx| [-2.9090 -1.2809 -2.9090]
	// back [0.001953 0.501953 0.998047]
}

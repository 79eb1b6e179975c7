package diffusion_test

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/probabilistic/diffusion"
	"github.com/gradus-ml/gradus/tensor"
)

// The schedule of Ho et al. (2020) leaves almost no signal at t = T, and
// a sampler driven by the exact noise model of data that always equal
// one point returns that point.
func Example() {
	s, err := diffusion.Linear(1000, 1e-4, 0.02)
	if err != nil {
		panic(err)
	}
	fmt.Printf("ᾱ_1 = %.4f, ᾱ_500 = %.4f, ᾱ_1000 = %.2e\n", s.AlphaBar(1), s.AlphaBar(500), s.AlphaBar(1000))
	point := []float64{0.5, -0.25}
	exact := func(xt *graph.Node, t []int) *graph.Node {
		v := xt.Value().Values()
		for i := range v {
			ab := s.AlphaBar(t[i/2])
			v[i] = (v[i] - math.Sqrt(ab)*point[i%2]) / math.Sqrt(1-ab)
		}
		return xt.Graph().Const(tensor.FromValues(tensor.Float64, v, xt.Shape()...))
	}
	rng := tensor.NewRNG(1)
	for _, opts := range []diffusion.SampleOptions{{}, {Sampler: diffusion.DDIM, Steps: 50}} {
		x, err := s.Sample(context.Background(), exact, rng, tensor.Float64, opts, 2, 2)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%v: %.4f\n", opts.Sampler, x.Values())
	}
	// Output:
	// ᾱ_1 = 0.9999, ᾱ_500 = 0.0786, ᾱ_1000 = 4.04e-05
	// ancestral: [0.5000 -0.2500 0.5000 -0.2500]
	// ddim: [0.5000 -0.2500 0.5000 -0.2500]
}

// Training steps of a small UNet on the ε-prediction loss: an untrained
// model predicts 0, so the loss starts at the mean of ε², about 1.
func ExampleSchedule_Loss() {
	rng := tensor.NewRNG(1)
	s, _ := diffusion.Linear(100, 1e-4, 0.02)
	u := diffusion.NewUNet(rng, diffusion.UNetOptions{Base: 8, MaxT: 100}, tensor.Float32)
	x0 := tensor.MulScalar(tensor.Sign(diffusion.Noise(rng, tensor.Float32, 8, 1, 8, 8)), 0.9) // a batch of 8×8 images
	opt := optim.NewAdam(nn.Values(u.Params()), optim.AdamOptions{LR: 3e-3})
	g := graph.New()
	// A held-out draw of the noise and time steps to compare before and after.
	eps, ts := diffusion.Noise(rng, tensor.Float32, 8, 1, 8, 8), []int{1, 10, 20, 40, 60, 80, 90, 100}
	fmt.Printf("before: %.2f\n", s.LossAt(g, u.Forward, x0, eps, ts).Item())
	for range 40 {
		g.Reset()
		loss := s.Loss(g, u.Forward, x0, rng)
		if err := opt.Step(nn.Gradients(loss, u.Params())); err != nil {
			panic(err)
		}
	}
	g.Reset()
	fmt.Printf("after 40 steps: %.2f\n", s.LossAt(g, u.Forward, x0, eps, ts).Item())
	// Output:
	// before: 1.04
	// after 40 steps: 0.72
}

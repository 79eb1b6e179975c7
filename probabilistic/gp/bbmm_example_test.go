package gp_test

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/gp"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// Switch an exact GP to CG (BBMM) inference with one option: the marginal
// likelihood is estimated by conjugate gradients and stochastic Lanczos
// quadrature, FitExact runs unchanged on it, and Predict solves by CG.
func ExampleCG() {
	rng := tensor.NewRNG(1)
	n := 400
	x := rng.Uniform(tensor.Float64, -3, 3, n, 2)
	y := make([]float64, n)
	for i := range y {
		y[i] = math.Sin(x.At(i, 0))*math.Cos(x.At(i, 1)) + 0.1*rng.NormFloat64()
	}
	yt := tensor.FromFloat64s(y, n)
	lml := map[gp.Inference]float64{}
	for _, inf := range []gp.Inference{gp.Cholesky, gp.CG} {
		opts := gp.ExactOptions{Kernel: kernel.NewScale(kernel.NewRBF(1), 1), Noise: 0.05,
			Inference: inf, CG: gp.CGOptions{Probes: 32, Seed: 1}}
		m, err := gp.NewExact(x, yt, opts)
		if err != nil {
			panic(err)
		}
		l, err := m.LogMarginalLikelihood(graph.New())
		if err != nil {
			panic(err)
		}
		lml[inf] = l.Item()
		if inf == gp.CG {
			opts.Optimizer, opts.MaxIter, opts.LR = "adam", 40, 0.1
			m, err := gp.FitExact(context.Background(), x, yt, opts)
			if err != nil {
				panic(err)
			}
			fmt.Printf("fitted noise variance %.2f (true 0.01)\n", m.Noise().Value())
		}
	}
	fmt.Printf("LML exact %.1f, CG %.1f\n", lml[gp.Cholesky], lml[gp.CG])
	// Output:
	// fitted noise variance 0.01 (true 0.01)
	// LML exact 91.5, CG 90.8
}

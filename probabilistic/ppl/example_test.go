package ppl_test

import (
	"context"
	"fmt"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/probabilistic/inference"
	"github.com/gradus-ml/gradus/probabilistic/ppl"
	"github.com/gradus-ml/gradus/tensor"
)

// A normal model with unknown mean and scale, written once as a story.
func model(c *ppl.Ctx) {
	y := tensor.FromValues(tensor.Float64, []float64{2.1, 3.4, 1.9, 2.8, 3.0, 2.4}, 6)
	mu := ppl.Sample(c, "mu", probabilistic.NewNormal(c.Scalar(0), c.Scalar(10)))
	sigma := ppl.Sample(c, "sigma", probabilistic.NewGamma(c.Scalar(2), c.Scalar(2)))
	ppl.Plate(c, "data", 6, ppl.PlateOptions{}, func([]int) {
		ppl.Observe(c, "y", probabilistic.NewNormal(mu, sigma), y)
	})
}

// NUTS runs on the model function; sigma > 0 is handled by the layer.
func ExampleNUTS() {
	post, err := ppl.NUTS(context.Background(), model, inference.NUTSOptions{Chains: 2, Warmup: 200, Draws: 200, Seed: 1})
	if err != nil {
		panic(err)
	}
	fmt.Printf("E[mu] ≈ %.1f, E[sigma] ≈ %.1f, R̂ < 1.05: %v\n", post.Mean("mu").Item(), post.Mean("sigma").Item(), post.Rhat("mu").Item() < 1.05)
	// Output: E[mu] ≈ 2.6, E[sigma] ≈ 0.7, R̂ < 1.05: true
}

// SVI with the automatic mean-field guide, then posterior predictive draws
// and the log-likelihood of each observation under each draw.
func ExampleFitSVI() {
	guide := ppl.AutoNormal(model, ppl.AutoGuideOptions{})
	fit, err := ppl.FitSVI(context.Background(), model, guide, ppl.SVIOptions{Steps: 1000, LR: 0.02, StickTheLanding: true, Seed: 1})
	if err != nil {
		panic(err)
	}
	draws, err := fit.Sample(500, 2)
	if err != nil {
		panic(err)
	}
	pred, err := ppl.Predictive(model, draws, ppl.PredictiveOptions{Seed: 3})
	if err != nil {
		panic(err)
	}
	ll, err := ppl.LogLikelihood(model, draws)
	if err != nil {
		panic(err)
	}
	fmt.Printf("q(mu) mean ≈ %.1f; predictive y %v; log-likelihood %v\n",
		fit.Params.Value("mu_auto_loc").Item(), pred["y"].Shape(), ll["y"].Shape())
	// Output: q(mu) mean ≈ 2.6; predictive y [500 6]; log-likelihood [500 6]
}

// Handlers are values that wrap a model: here the model runs with mu
// fixed, under a seed, and its trace is recorded.
func ExampleRecord() {
	g := graph.New()
	tr := &ppl.Trace{}
	fixed := ppl.Substitute(model, map[string]*graph.Node{"mu": g.Scalar(tensor.Float64, 2.5)})
	ppl.Run(g, ppl.Record(ppl.Seed(fixed, 1), tr))
	for _, s := range tr.Sites {
		fmt.Println(s.Name, s.Kind == ppl.SampleSite, s.Observed)
	}
	fmt.Println("mu =", tr.Site("mu").Value.Item())
	// Output:
	// mu true false
	// sigma true false
	// data false false
	// y true true
	// mu = 2.5
}

// A two-component Gaussian mixture whose assignments are summed out by
// enumeration: NUTS moves the component means only, and InferDiscrete
// recovers each point's assignment afterwards.
func ExampleEnumerated() {
	y := []float64{-2.3, -1.6, -2.9, 1.8, 2.6, 2.2}
	mixture := func(c *ppl.Ctx) {
		locs := ppl.Sample(c, "locs", probabilistic.NewNormal(c.Const(tensor.FromValues(tensor.Float64, []float64{-2, 2}, 2)), c.Scalar(1)))
		ppl.Plate(c, "data", len(y), ppl.PlateOptions{}, func([]int) {
			z := ppl.Enumerated(c, "z", probabilistic.NewCategoricalProbs(c.Const(tensor.FromValues(tensor.Float64, []float64{0.5, 0.5}, 2))))
			ppl.Observe(c, "y", probabilistic.NewNormal(ppl.Index(locs, z), c.Scalar(1)), tensor.FromValues(tensor.Float64, y, len(y)))
		})
	}
	post, err := ppl.NUTS(context.Background(), mixture, inference.NUTSOptions{Chains: 2, Warmup: 200, Draws: 200, Seed: 1})
	if err != nil {
		panic(err)
	}
	m := post.Mean("locs").Values()
	fmt.Printf("E[locs] ≈ (%.1f, %.1f)\n", m[0], m[1])
	pz, err := ppl.InferDiscrete(mixture, post.Samples())
	if err != nil {
		panic(err)
	}
	z := pz["z"] // (draws, 6, 2): p(zᵢ = k | draw, y)
	fmt.Println(z.Shape())
	p, n := z.Values(), z.Shape()[0]
	avg := make([]float64, len(y)) // p(zᵢ = 1 | y), averaged over the draws
	for d := range n {
		for i := range y {
			avg[i] += p[(d*len(y)+i)*2+1] / float64(n)
		}
	}
	fmt.Printf("p(zᵢ = 1 | y) ≈ %.2f\n", avg)
	// Output:
	// E[locs] ≈ (-2.2, 2.1)
	// [400 6 2]
	// p(zᵢ = 1 | y) ≈ [0.00 0.00 0.00 1.00 1.00 1.00]
}

package autodiff_test

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/probabilistic/logreg"
	"github.com/gradus-ml/gradus/tensor"
)

// Gradient-check cases for the ops that packages above graph register:
// logreg's log Φ, losses' fused Bernoulli loss and probabilistic's
// Bessel functions (both sides of the series/asymptotic switch at 30).
func init() {
	addCase("logreg.log_ndtr", opCase{
		name:   "wide",
		inputs: ewUniform(-12, 6, []int{3, 4}),
		f:      func(xs []*graph.Node) *graph.Node { return logreg.LogNdtr(xs[0]) },
	})
	addCase("losses.bce_with_logits_sum", opCase{
		inputs: func(rng *tensor.RNG) []*tensor.Tensor {
			return []*tensor.Tensor{rng.Normal(ewF64, 0, 2, 4, 5), rng.Uniform(ewF64, 0, 1, 4, 5)}
		},
		f: func(xs []*graph.Node) *graph.Node { return losses.BCEWithLogits(xs[0], xs[1], losses.Sum) },
	})
	addCase("probabilistic.log_i0", opCase{
		name:   "wide",
		inputs: ewUniform(-40, 40, []int{3, 4}),
		f:      func(xs []*graph.Node) *graph.Node { return probabilistic.LogBesselI0(xs[0]) },
	})
	addCase("probabilistic.i1_over_i0", opCase{
		name:   "wide",
		inputs: ewUniform(-40, 40, []int{3, 4}),
		f:      func(xs []*graph.Node) *graph.Node { return probabilistic.BesselI1OverI0(xs[0]) },
	})
	// The gamma quantile's slope −(∂P/∂α)/p is a graph of gamma_p_deriv
	// nodes, so its second derivatives are checked too, at fixed levels (a
	// sampler's draws would change their rejection path under the
	// perturbations).
	addCase("probabilistic.implicit_gamma", opCase{
		inputs: ewUniform(0.5, 4, []int{2, 3}),
		f: func(xs []*graph.Node) *graph.Node {
			return probabilistic.GammaQuantile(xs[0], []float64{0.05, 0.3, 0.5, 0.62, 0.9, 0.99})
		},
	})
	// P(α, x) on both sides of the series/continued-fraction switch at
	// x = α + 1.
	addCase("probabilistic.gamma_p_deriv", opCase{
		inputs: func(rng *tensor.RNG) []*tensor.Tensor {
			return []*tensor.Tensor{rng.Uniform(ewF64, 0.5, 4, 2, 3), rng.Uniform(ewF64, 0.1, 8, 2, 3)}
		},
		f: func(xs []*graph.Node) *graph.Node { return probabilistic.GammaP(xs[0], xs[1]) },
	})
}

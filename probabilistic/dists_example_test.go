package probabilistic_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/tensor"
)

// A Tobit likelihood: observations at the bounds carry the mass beyond
// them, and the gradient in the location flows through all three terms
// (by hand: log Φ(−0.5) + log φ(0.7) + log(1 − Φ(1.5)) = −5.0458, and
// −φ(0.5)/Φ(−0.5) + 0.7 + φ(1.5)/(1 − Φ(1.5)) = 1.4976).
func ExampleNewCensored() {
	g := graph.New()
	mu := g.Var(tensor.Scalar(tensor.Float64, 0.5))
	base := probabilistic.NewNormal(mu, g.Scalar(tensor.Float64, 1))
	d := probabilistic.NewCensored(base, g.Scalar(tensor.Float64, 0), g.Scalar(tensor.Float64, 2))
	y := g.Const(tensor.FromFloat64s([]float64{0, 1.2, 2}, 3)) // below, inside, above
	ll := graph.Sum(d.LogProb(y), nil, false)
	grad := autodiff.Grad(ll, mu)[0]
	fmt.Printf("log-likelihood %.4f, d/dμ %.4f\n", ll.Item(), grad.Item())
	// Output: log-likelihood -5.0458, d/dμ 1.4976
}

// The Gumbel-softmax trick: a relaxed one-hot draw is differentiable in
// the logits, and its argmax follows the categorical law.
func ExampleNewRelaxedOneHotCategorical() {
	g := graph.New()
	logits := g.Var(tensor.FromFloat64s([]float64{1, 0, -1}, 3))
	d := probabilistic.NewRelaxedOneHotCategorical(g.Scalar(tensor.Float64, 0.5), logits)
	y := d.RSample(tensor.NewRNG(1), 0) // (3), on the simplex
	score := graph.Sum(graph.Mul(y, g.Const(tensor.FromFloat64s([]float64{1, 2, 3}, 3))), nil, false)
	grad := autodiff.Grad(score, logits)[0]
	fmt.Println(y.Value().Shape(), grad.Value().Shape())
	// Output: [3] [3]
}

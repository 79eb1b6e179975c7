package inference_test

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/probabilistic/inference"
)

// A coin with a Beta(2, 2) prior shows 7 heads in 10 tosses: the posterior
// is Beta(9, 5), mean 9/14 ≈ 0.643. The probability is sampled on the
// unconstrained scale through the sigmoid bijector.
func ExampleNUTS() {
	m := inference.Model{
		Params: []inference.Param{{Name: "p", Bijector: probabilistic.Sigmoid{}}},
		LogDensity: func(g *graph.Graph, ps map[string]*graph.Node) *graph.Node {
			p := ps["p"]
			return graph.Add(graph.MulScalar(graph.Log(p), 8), graph.MulScalar(graph.Log1p(graph.Neg(p)), 4))
		},
	}
	res, err := inference.NUTS(m, inference.NUTSOptions{Chains: 4, Warmup: 300, Draws: 500, Seed: 1})
	if err != nil {
		panic(err)
	}
	draws := res.Column("p")
	sum, n := 0.0, 0
	for _, ch := range draws {
		for _, v := range ch {
			sum += v
			n++
		}
	}
	fmt.Printf("posterior mean within 0.02 of 9/14: %v, R̂ < 1.01: %v\n", math.Abs(sum/float64(n)-9.0/14) < 0.02, inference.Rhat(draws) < 1.01)
	fmt.Println("bulk ESS above 500:", inference.BulkESS(draws) > 500)
	// Output:
	// posterior mean within 0.02 of 9/14: true, R̂ < 1.01: true
	// bulk ESS above 500: true
}

package graph_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Batch normalisation without its learned scale and shift, by hand: the
// per-channel statistics in one op, then one affine pass with scale 1/σ and
// shift −mean/σ. Channel 0 of x holds 1, 2, 5, 6 (mean 3.5, variance 4.25),
// so its first pixel becomes (1 − 3.5)/√4.25 ≈ −1.2127.
func ExampleChannelMoments() {
	g := graph.New()
	x := g.Var(tensor.FromFloat64s([]float64{1, 2, 3, 4, 5, 6, 7, 8}, 2, 2, 1, 2)) // (N, C, H, W)
	mean, variance := graph.ChannelMoments(x)
	scale := graph.Reciprocal(graph.Sqrt(variance))
	y := graph.ChannelAffine(x, scale, graph.Neg(graph.Mul(mean, scale)))
	fmt.Println(mean.Value(), variance.Value())
	fmt.Printf("%.4f\n", y.Value().Values()[:4])
	// Output:
	// [3.5, 5.5] [4.25, 4.25]
	// [-1.2127 -0.7276 -1.2127 -0.7276]
}

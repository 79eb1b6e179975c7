package autodiff_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

func ExampleVmap() {
	g := graph.New()
	w := g.Var(tensor.FromFloat64s([]float64{1, 10}, 2))
	x := g.Const(tensor.FromFloat64s([]float64{1, 2, 3, 4, 5, 6}, 3, 2)) // 3 examples
	// score is written for one example x (2).
	score := func(xs []*graph.Node) []*graph.Node { return []*graph.Node{graph.Dot(w, xs[0])} }
	y := autodiff.Vmap(score, autodiff.VmapOptions{})([]*graph.Node{x})[0]
	fmt.Println(y.Value().Values())
	// Output: [21 43 65]
}

func ExamplePerExampleGrads() {
	g := graph.New()
	w := g.Var(tensor.FromFloat64s([]float64{1, 1}, 2))
	x := g.Const(tensor.FromFloat64s([]float64{1, 2, 3, 4}, 2, 2)) // 2 examples
	t := g.Const(tensor.FromFloat64s([]float64{0, 1}, 2))          // their targets
	// The squared error of one example: (w·x − t)², whose gradient is 2(w·x − t)x.
	loss := func(params, ex []*graph.Node) *graph.Node {
		return graph.Square(graph.Sub(graph.Dot(params[0], ex[0]), ex[1]))
	}
	grads := autodiff.PerExampleGrads(loss, []*graph.Node{w}, []*graph.Node{x, t})
	fmt.Println(grads[0].Shape(), grads[0].Value().Values())
	// Output: [2 2] [6 12 36 48]
}

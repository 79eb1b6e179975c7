package graph_test

// These examples show the three
// things a user does with it: build a graph define-by-run, plug in an op of
// their own, and rebuild a step after Reset.

import (
	"fmt"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

func Example() {
	g := graph.New()
	w := g.Var(tensor.FromFloat64s([]float64{0.5, -1}, 2))
	x := g.Const(tensor.FromFloat64s([]float64{2, 3}, 2))
	y := graph.Sum(graph.Mul(w, x), nil, false) // computed now: 0.5·2 − 1·3
	fmt.Println(y.Value())
	fmt.Println(autodiff.Grad(y, w)[0].Value()) // ∂y/∂w = x
	// Output:
	// -2
	// [2, 3]
}

// cube is a user-defined op y = x³. Its rules are written with graph ops,
// so they can be differentiated again.
type cube struct{}

func (cube) Name() string { return "example_cube" }

func (cube) Arity() int { return 1 }

func (cube) Forward(g *graph.Graph, in []*tensor.Tensor) *tensor.Tensor {
	out := g.AllocUninit(in[0].DType(), in[0].Shape()...)
	return tensor.PowScalarTo(out, in[0], 3)
}

// threeXSquared is dy/dx = 3x².
func threeXSquared(out *graph.Node) *graph.Node {
	return graph.MulScalar(graph.Square(out.Inputs()[0]), 3)
}

func (cube) VJP(out, ct *graph.Node, needs []bool) []*graph.Node {
	return []*graph.Node{graph.Mul(ct, threeXSquared(out))}
}

func (cube) JVP(out *graph.Node, t []*graph.Node) *graph.Node {
	return graph.Mul(t[0], threeXSquared(out))
}

func ExampleApply() {
	g := graph.New()
	x := g.Var(tensor.FromFloat64s([]float64{1, 2}, 2))
	y := graph.Apply(cube{}, x)
	s := graph.Sum(y, nil, false)
	dx := autodiff.Grad(s, x)[0]                          // 3x²
	d2x := autodiff.Grad(graph.Sum(dx, nil, false), x)[0] // 6x
	fmt.Println(y.Value(), dx.Value(), d2x.Value())
	// Output:
	// [1, 8] [3, 12] [6, 12]
}

func ExampleGraph_Reset() {
	g := graph.New()
	w := tensor.FromFloat64s([]float64{1, 2}, 2)
	for step := 0; step < 3; step++ {
		g.Reset() // recycles last step's nodes and buffers
		x := g.Var(w)
		loss := graph.Sum(graph.Square(x), nil, false)
		grad := autodiff.Grad(loss, x)[0].Value()
		fmt.Println(step, loss.Item(), grad)
		// Update the parameter in place; the graph never owns w.
		tensor.AddTo(w, w, tensor.MulScalar(grad, -0.25))
	}
	// Output:
	// 0 5 [2, 4]
	// 1 1.25 [1, 2]
	// 2 0.3125 [0.5, 1]
}

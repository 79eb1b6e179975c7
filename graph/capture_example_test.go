package graph_test

import (
	"fmt"
	"strings"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Capture a least-squares step (loss and gradient) once, then replay it on
// new data while the parameter changes in place, as an optimiser would.
func ExampleCapture() {
	w := tensor.FromFloat64s([]float64{0.5, -1}, 2)
	x := tensor.FromFloat64s([]float64{1, 2, 3, 4}, 2, 2)
	y := tensor.FromFloat64s([]float64{1, 0}, 2)
	step := func(g *graph.Graph, in []*graph.Node) []*graph.Node {
		r := graph.Sub(graph.MatMul(in[0], graph.Reshape(in[2], 2, 1)), graph.Reshape(in[1], 2, 1))
		loss := graph.Sum(graph.Mul(r, r), nil, false)
		return append([]*graph.Node{loss}, autodiff.Grad(loss, in[2])...)
	}
	p, err := graph.Capture(step, []*tensor.Tensor{x, y, w}, graph.CaptureOptions{})
	if err != nil {
		panic(err)
	}
	var ops []string
	for _, s := range p.Steps() {
		ops = append(ops, s.Op)
	}
	// The two products of r's gradient are one (merged), and that product
	// and the sum of the two paths run as one fused step.
	fmt.Println(strings.Join(ops, " "))
	for range 3 {
		out, err := p.Run([]*tensor.Tensor{x, y, w})
		if err != nil {
			panic(err)
		}
		fmt.Printf("loss %.4f grad %.4f\n", out[0].Item(), out[1].Values())
		tensor.CopyInto(w, tensor.Sub(w, tensor.MulScalar(out[1], 0.02))) // gradient descent
	}
	_, err = p.Run([]*tensor.Tensor{tensor.New(tensor.Float64, 3, 2), y, w})
	fmt.Println(err)
	// Output:
	// reshape matmul reshape sub mul sum fused(mul,add) matmul reshape
	// loss 12.5000 grad [-20.0000 -30.0000]
	// loss 2.0200 grad [4.8000 5.2000]
	// loss 1.6064 grad [-0.0320 -1.6480]
	// graph.Program.Run: input shape or dtype differs from the captured program's: input 0 is (3, 2) float64, captured as (2, 2) float64
}

// Build applies a captured program's ops to a graph again, its fused
// steps as the ops they fused: what an exporter reads.
func ExampleProgram_Build() {
	step := func(g *graph.Graph, in []*graph.Node) []*graph.Node {
		return []*graph.Node{graph.AddScalar(graph.MulScalar(graph.Exp(in[0]), 2), 1)}
	}
	x := tensor.FromFloat64s([]float64{0, 1}, 2)
	p, err := graph.Capture(step, []*tensor.Tensor{x}, graph.CaptureOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Steps()[0].Op)
	g := graph.New()
	out := p.Build(g, []*graph.Node{g.Const(x)})
	var ops []string
	for _, n := range g.Nodes() {
		if n.Op() != nil {
			ops = append(ops, n.Op().Name())
		}
	}
	fmt.Println(strings.Join(ops, " "))
	fmt.Printf("%.4f\n", out[0].Value().Values())
	// Output:
	// fused(exp,mul_scalar,add_scalar)
	// exp mul_scalar add_scalar
	// [3.0000 6.4366]
}

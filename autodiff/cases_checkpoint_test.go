package autodiff_test

import (
	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Gradient-check cases for rematerialisation (autodiff/checkpoint.go):
// checkpoint is a segment recomputed in the reverse sweep, and
// checkpoint_vjp the op that sweep builds, reached here through a VJP of
// a checkpoint along a cotangent that is itself an input.

// segmentF is a small nonlinear segment of two inputs, the second
// broadcast into the first: tanh(x·w) + sin(x).
func segmentF(xs []*graph.Node) *graph.Node {
	return graph.Add(graph.Tanh(graph.Mul(xs[0], xs[1])), graph.Sin(xs[0]))
}

func init() {
	addCase("checkpoint", opCase{inputs: ewNormal(1, []int{3, 4}, []int{3, 4}),
		f: func(xs []*graph.Node) *graph.Node { return autodiff.Checkpoint(segmentF, xs...) }})
	addCase("checkpoint", opCase{name: "broadcast operand, nested", inputs: func(rng *tensor.RNG) []*tensor.Tensor {
		return []*tensor.Tensor{rng.Normal(tensor.Float64, 0, 1, 3, 4), rng.Normal(tensor.Float64, 0, 1, 4)}
	}, f: func(xs []*graph.Node) *graph.Node {
		inner := func(ys []*graph.Node) *graph.Node { return graph.Exp(graph.MulScalar(segmentF(ys), 0.5)) }
		return autodiff.Checkpoint(func(ys []*graph.Node) *graph.Node {
			return graph.Mul(autodiff.Checkpoint(inner, ys...), ys[1])
		}, xs...)
	}})
	addCase("checkpoint_vjp", opCase{inputs: ewNormal(1, []int{3, 4}, []int{3, 4}, []int{3, 4}),
		f: func(xs []*graph.Node) *graph.Node {
			y := autodiff.Checkpoint(segmentF, xs[0], xs[1])
			cts := autodiff.VJP(y, xs[2], xs[0], xs[1])
			return graph.Add(cts[0], graph.Square(cts[1]))
		}})
}

package main

import (
	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// perExampleGrads returns the gradient of each example's cross-entropy
// with respect to every parameter of the MLP, one tensor per parameter in
// m.params() order, each with a leading batch axis: (B, hidden, 784),
// (B, hidden), (B, 10, hidden), (B, 10). Row b is the gradient of example
// b's loss alone (not divided by B).
//
// The loss is written for one example, a digit and its one-hot label, and
// autodiff.PerExampleGrads (vmap of grad) turns it into all B gradients in
// one pass over the batch, instead of B backward passes.
func perExampleGrads(m *mlp, x *tensor.Tensor, labels []int) []*tensor.Tensor {
	g := graph.New()
	params := []*graph.Node{m.fc1.Weight.Node(g), m.fc1.Bias.Node(g), m.fc2.Weight.Node(g), m.fc2.Bias.Node(g)}
	batch := []*graph.Node{g.Const(x), g.Const(tensor.OneHot(x.DType(), labels, 10))}
	grads := autodiff.PerExampleGrads(func(_, ex []*graph.Node) *graph.Node {
		logits := m.fc2.Forward(graph.Tanh(m.fc1.Forward(ex[0]))) // (10)
		return graph.Neg(graph.Sum(graph.Mul(ex[1], graph.LogSoftmax(logits, 0)), nil, false))
	}, params, batch)
	out := make([]*tensor.Tensor, len(grads))
	for i, gr := range grads {
		out[i] = gr.Value()
	}
	return out
}

package train

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Forward maps a batch of inputs to logits (batch, classes) on the graph g.
type Forward func(g *graph.Graph, xb *tensor.Tensor) *graph.Node

// Predict returns the predicted class (the arg-max of the logits) of every
// row of x, evaluated in batches of size batch on one recycled graph. It
// panics with a *tensor.Error if batch < 1.
func Predict(x *tensor.Tensor, batch int, forward Forward) []int {
	if batch < 1 {
		tensor.Fail("train.Predict", "batch size %d", batch)
	}
	n := x.Shape()[0]
	preds := make([]int, 0, n)
	g := graph.New()
	for lo := 0; lo < n; lo += batch {
		g.Reset()
		logits := forward(g, tensor.Slice(x, 0, lo, min(lo+batch, n), 1))
		preds = append(preds, tensor.ArgMax(logits.Value(), 1)...)
	}
	g.Reset()
	return preds
}

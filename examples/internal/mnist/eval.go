package mnist

import (
	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Forward maps a batch of inputs to logits (batch, classes) on the graph g.
type Forward func(g *graph.Graph, xb *tensor.Tensor) *graph.Node

// Predict returns the predicted class (the arg-max of the logits) of every
// row of x, evaluated in batches of size batch on one recycled graph.
func Predict(x *tensor.Tensor, batch int, forward Forward) []int {
	n := x.Shape()[0]
	preds := make([]int, 0, n)
	rows := data.NewGatherer(x)
	b := data.NewBatcher(n, batch, data.BatchOptions{NoShuffle: true})
	g := graph.New()
	for idx := range b.Epoch() {
		g.Reset()
		logits := forward(g, rows.Gather(idx))
		preds = append(preds, tensor.ArgMax(logits.Value(), 1)...)
	}
	g.Reset()
	return preds
}

// Accuracy returns the fraction of predictions equal to the labels (0 for
// none). It panics if the lengths differ.
func Accuracy(preds, labels []int) float64 {
	if len(preds) != len(labels) {
		tensor.Fail("train.Accuracy", "%d predictions for %d labels", len(preds), len(labels))
	}
	if len(preds) == 0 {
		return 0
	}
	right := 0
	for i, p := range preds {
		if p == labels[i] {
			right++
		}
	}
	return float64(right) / float64(len(preds))
}

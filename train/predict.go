package train

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Forward maps a batch of inputs to logits (batch, classes) on the graph g.
type Forward func(g *graph.Graph, xb *tensor.Tensor) *graph.Node

// Predict evaluates a classifier on every row of x, in batches of size
// batch on one recycled graph, and returns the predicted classes (the
// arg-max of the logits, ready for package metrics) and the class
// probabilities proba, the softmax of the logits, an (n, classes) tensor
// of the logits' dtype on the CPU (a model on a GPU runs there, its
// logits copied back batch by batch). It panics with a *tensor.Error if batch < 1,
// forward is nil or does not return (batch, classes) logits.
func Predict(x *tensor.Tensor, batch int, forward Forward) (classes []int, proba *tensor.Tensor) {
	const op = "train.Predict"
	if batch < 1 {
		tensor.Fail(op, "batch size %d: it must be at least 1", batch)
	}
	if forward == nil {
		tensor.Fail(op, "forward is nil")
	}
	if x == nil || x.Dim() == 0 {
		tensor.Fail(op, "x must have a row axis")
	}
	n := x.Shape()[0]
	classes = make([]int, 0, n)
	g := graph.New()
	for lo := 0; lo < n; lo += batch {
		hi := min(lo+batch, n)
		g.Reset()
		out := forward(g, tensor.Slice(x, 0, lo, hi, 1))
		if out == nil {
			tensor.Fail(op, "forward returned nil for rows %d…%d", lo, hi-1)
		}
		// Classes and probabilities are for the host: logits computed on
		// a GPU come back once per batch.
		logits := out.Value().To(tensor.CPU)
		if s := logits.Shape(); len(s) != 2 || s[0] != hi-lo {
			tensor.Fail(op, "forward returned logits of shape %s for %d rows, want (%d, classes)", tensor.FormatShape(s), hi-lo, hi-lo)
		}
		if proba == nil {
			proba = tensor.New(logits.DType(), n, logits.Shape()[1])
		} else if logits.Shape()[1] != proba.Shape()[1] || logits.DType() != proba.DType() {
			tensor.Fail(op, "forward returned %s %v logits for rows %d…, %v with %d classes before", tensor.FormatShape(logits.Shape()), logits.DType(), lo, proba.DType(), proba.Shape()[1])
		}
		classes = append(classes, tensor.ArgMax(logits, 1)...)
		tensor.SoftmaxInto(tensor.Slice(proba, 0, lo, hi, 1), logits, 1)
	}
	g.Reset()
	if proba == nil { // no rows
		proba = tensor.New(x.DType(), 0, 0)
	}
	return classes, proba
}

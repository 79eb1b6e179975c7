package losses

import (
	"fmt"
	"slices"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Reduction says how a loss combines its per-element (or per-sample)
// values.
type Reduction int

const (
	// Mean averages the losses. It is the zero value, so the default.
	Mean Reduction = iota
	// Sum adds the losses up.
	Sum
	// None returns the unreduced losses.
	None
)

// String returns "mean", "sum" or "none".
func (r Reduction) String() string {
	switch r {
	case Mean:
		return "mean"
	case Sum:
		return "sum"
	case None:
		return "none"
	}
	return fmt.Sprintf("Reduction(%d)", int(r))
}

// checkReduction panics naming op unless r is one of the three reductions.
func checkReduction(op string, r Reduction) {
	if r != Mean && r != Sum && r != None {
		tensor.Fail(op, "unknown reduction %v", r)
	}
}

// reduce applies r to the losses x.
func reduce(x *graph.Node, r Reduction) *graph.Node {
	switch r {
	case Sum:
		return graph.Sum(x, nil, false)
	case None:
		return x
	}
	return graph.Mean(x, nil, false)
}

// checkNodes panics naming op if a node is nil or the nodes do not share a
// graph and a dtype.
func checkNodes(op string, ns ...*graph.Node) {
	for i, n := range ns {
		if n == nil {
			tensor.Fail(op, "operand %d is nil (operands %s)", i, graph.Describe(ns...))
		}
	}
	for _, n := range ns[1:] {
		if n.Graph() != ns[0].Graph() {
			tensor.Fail(op, "operands %s belong to different graphs", graph.Describe(ns...))
		}
		if n.DType() != ns[0].DType() {
			tensor.Fail(op, "mixed dtypes: %s", graph.Describe(ns...))
		}
	}
}

// checkSameShape is checkNodes plus equal shapes, which elementwise losses
// require (PyTorch only warns when prediction and target broadcast; a
// silently broadcast target is almost always a bug).
func checkSameShape(op string, ns ...*graph.Node) {
	checkNodes(op, ns...)
	for _, n := range ns[1:] {
		if !slices.Equal(n.Shape(), ns[0].Shape()) {
			tensor.Fail(op, "shapes differ: %s", graph.Describe(ns...))
		}
	}
}

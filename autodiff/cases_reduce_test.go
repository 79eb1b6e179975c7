package autodiff_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Gradient-check cases for the reductions and the softmax family
// (graph/reduce.go).

// redDistinct samples values that are distinct with gaps of at least 0.2
// (a shuffled 0.3·k plus small noise), so max/min have a unique argmax
// that finite differences do not change.
func redDistinct(shape ...int) func(*tensor.RNG) []*tensor.Tensor {
	return func(rng *tensor.RNG) []*tensor.Tensor {
		n := 1
		for _, d := range shape {
			n *= d
		}
		vals := make([]float64, n)
		for i, p := range rng.Perm(n) {
			vals[i] = 0.3*float64(p-n/2) + 0.05*rng.Float64()
		}
		return []*tensor.Tensor{tensor.FromValues(ewF64, vals, shape...)}
	}
}

func init() {
	type axesCase struct {
		axes []int
		keep bool
	}
	axesCases := []axesCase{{nil, false}, {[]int{1}, false}, {[]int{0, 2}, true}, {[]int{-1}, true}}
	reds := []struct {
		name   string
		op     func(x *graph.Node, axes []int, keep bool) *graph.Node
		inputs func(*tensor.RNG) []*tensor.Tensor
	}{
		{"sum", graph.Sum, ewNormal(1, ewS234)},
		{"mean", graph.Mean, ewNormal(1, ewS234)},
		{"max", graph.Max, redDistinct(2, 3, 4)},
		{"min", graph.Min, redDistinct(2, 3, 4)},
		{"prod", graph.Prod, ewAwayInputs(0.5, 1.5, ewS234)},
		{"logsumexp", graph.LogSumExp, ewNormal(2, ewS234)},
	}
	for _, r := range reds {
		for _, ac := range axesCases {
			addCase(r.name, opCase{name: fmt.Sprintf("axes %v keepdims %v", ac.axes, ac.keep), inputs: r.inputs,
				f: func(xs []*graph.Node) *graph.Node { return r.op(xs[0], ac.axes, ac.keep) }})
		}
	}
	for _, ac := range axesCases {
		for _, ddof := range []int{0, 1} {
			addCase("variance", opCase{name: fmt.Sprintf("axes %v keepdims %v ddof %d", ac.axes, ac.keep, ddof),
				inputs: ewNormal(1, ewS234),
				f:      func(xs []*graph.Node) *graph.Node { return graph.Variance(xs[0], ac.axes, ac.keep, ddof) }})
		}
	}
	addCase("sum", opCase{name: "0-d", inputs: ewNormal(1, ewS0), f: func(xs []*graph.Node) *graph.Node { return graph.Sum(xs[0], nil, false) }})
	// The maximum appears twice (x[0] and its copy): each copy gets half
	// of the cotangent and the halves add up to the true derivative.
	addCase("max", opCase{name: "tied maximum", inputs: func(*tensor.RNG) []*tensor.Tensor {
		return []*tensor.Tensor{tensor.FromValues(ewF64, []float64{2, 0.5, -1}, 3)}
	}, f: func(xs []*graph.Node) *graph.Node {
		x := xs[0]
		return graph.Max(graph.Concat(0, x, graph.Slice(x, 0, 0, 1, 1)), nil, false)
	}})

	for _, axis := range []int{-1, 0, 1} {
		addCase("softmax", opCase{name: fmt.Sprint("axis ", axis), inputs: ewNormal(2, ewS234),
			f: func(xs []*graph.Node) *graph.Node { return graph.Softmax(xs[0], axis) }})
		addCase("log_softmax", opCase{name: fmt.Sprint("axis ", axis), inputs: ewNormal(2, ewS234),
			f: func(xs []*graph.Node) *graph.Node { return graph.LogSoftmax(xs[0], axis) }})
		// Any y will do for the rule's own derivatives (it is quadratic in y
		// and linear in v); the last axis runs the contiguous-row kernel.
		addCase("softmax_grad", opCase{name: fmt.Sprint("axis ", axis), inputs: ewNormal(2, ewS234, ewS234),
			f: func(xs []*graph.Node) *graph.Node { return graph.SoftmaxGrad(xs[0], xs[1], axis) }})
	}
}

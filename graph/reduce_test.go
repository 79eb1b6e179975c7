package graph_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
)

func TestReduceValues(t *testing.T) {
	x := [][]float64{{1, 2, 3, 4, 5, 6}}
	s23 := [][]int{{2, 3}}
	red := func(op func(*graph.Node, []int, bool) *graph.Node, axes []int, keep bool) func([]*graph.Node) *graph.Node {
		return func(xs []*graph.Node) *graph.Node { return op(xs[0], axes, keep) }
	}
	ln3 := math.Log(3)
	vtRun(t, []vtCase{
		{"sum all", x, s23, red(graph.Sum, nil, false), []float64{21}, []int{}},
		{"sum axis 0", x, s23, red(graph.Sum, []int{0}, false), []float64{5, 7, 9}, []int{3}},
		{"sum axis -1 keepdims", x, s23, red(graph.Sum, []int{-1}, true), []float64{6, 15}, []int{2, 1}},
		{"mean axis 1", x, s23, red(graph.Mean, []int{1}, false), []float64{2, 5}, []int{2}},
		{"max axis 0", x, s23, red(graph.Max, []int{0}, false), []float64{4, 5, 6}, []int{3}},
		{"min axis 1", x, s23, red(graph.Min, []int{1}, false), []float64{1, 4}, []int{2}},
		{"prod axis 1", x, s23, red(graph.Prod, []int{1}, false), []float64{6, 120}, []int{2}},
		// log(1 + 3) = log 4.
		{"logsumexp", [][]float64{{0, ln3}}, [][]int{{2}}, red(graph.LogSumExp, nil, false), []float64{2 * math.Ln2}, []int{}},
		// Rows (1,2,3), (4,5,6): squared deviations 1+0+1 = 2.
		{"variance ddof 0", x, s23, func(xs []*graph.Node) *graph.Node { return graph.Variance(xs[0], []int{1}, false, 0) },
			[]float64{2.0 / 3, 2.0 / 3}, []int{2}},
		{"variance ddof 1", x, s23, func(xs []*graph.Node) *graph.Node { return graph.Variance(xs[0], []int{1}, true, 1) },
			[]float64{1, 1}, []int{2, 1}},
		{"softmax", [][]float64{{0, ln3}}, [][]int{{2}}, func(xs []*graph.Node) *graph.Node { return graph.Softmax(xs[0], 0) },
			[]float64{0.25, 0.75}, []int{2}},
		{"log_softmax", [][]float64{{0, ln3}}, [][]int{{1, 2}}, func(xs []*graph.Node) *graph.Node { return graph.LogSoftmax(xs[0], -1) },
			[]float64{math.Log(0.25), math.Log(0.75)}, []int{1, 2}},
	})
}

func TestReduceVJP(t *testing.T) {
	ln3 := math.Log(3)
	vjpRun(t, []vjpCase{
		// Sum broadcasts the cotangent back along the reduced axis.
		{"sum axis 1", [][]float64{{1, 2, 3, 4}}, [][]int{{2, 2}}, func(xs []*graph.Node) *graph.Node { return graph.Sum(xs[0], []int{1}, false) },
			[]float64{5, 7}, [][]float64{{5, 5, 7, 7}}},
		{"mean", [][]float64{{1, 2, 3, 4}}, [][]int{{4}}, func(xs []*graph.Node) *graph.Node { return graph.Mean(xs[0], nil, false) },
			[]float64{2}, [][]float64{{0.5, 0.5, 0.5, 0.5}}},
		// The two tied maxima share the derivative.
		{"max ties", [][]float64{{3, 1, 3}}, [][]int{{3}}, func(xs []*graph.Node) *graph.Node { return graph.Max(xs[0], nil, false) },
			[]float64{1}, [][]float64{{0.5, 0, 0.5}}},
		{"min", [][]float64{{3, 1, 2}}, [][]int{{3}}, func(xs []*graph.Node) *graph.Node { return graph.Min(xs[0], nil, false) },
			[]float64{2}, [][]float64{{0, 2, 0}}},
		// ∂(abc)/∂a = bc at (2, 3, 4).
		{"prod", [][]float64{{2, 3, 4}}, [][]int{{3}}, func(xs []*graph.Node) *graph.Node { return graph.Prod(xs[0], nil, false) },
			[]float64{1}, [][]float64{{12, 8, 6}}},
		// ∂ lse = softmax = (¼, ¾).
		{"logsumexp", [][]float64{{0, ln3}}, [][]int{{2}}, func(xs []*graph.Node) *graph.Node { return graph.LogSumExp(xs[0], nil, false) },
			[]float64{1}, [][]float64{{0.25, 0.75}}},
		// ∂ var = 2(x − mean)/n at (1, 2, 3): (−2/3, 0, 2/3).
		{"variance", [][]float64{{1, 2, 3}}, [][]int{{3}}, func(xs []*graph.Node) *graph.Node { return graph.Variance(xs[0], nil, false, 0) },
			[]float64{1}, [][]float64{{-2.0 / 3, 0, 2.0 / 3}}},
		// ct − softmax·Σct with softmax (¼, ¾) and ct (1, 0).
		{"log_softmax", [][]float64{{0, ln3}}, [][]int{{2}}, func(xs []*graph.Node) *graph.Node { return graph.LogSoftmax(xs[0], 0) },
			[]float64{1, 0}, [][]float64{{0.75, -0.75}}},
		// s ⊙ (ct − Σ ct s) with s = (¼, ¾), ct = (1, 0): Σ = ¼, so (¼·¾, ¾·(−¼)).
		{"softmax", [][]float64{{0, ln3}}, [][]int{{2}}, func(xs []*graph.Node) *graph.Node { return graph.Softmax(xs[0], 0) },
			[]float64{1, 0}, [][]float64{{0.1875, -0.1875}}},
	})
}

func TestReduceMisuse(t *testing.T) {
	g := graph.New()
	x := g.Var(vtTensor(2, 3))
	for _, f := range []func(){
		func() { graph.Sum(x, []int{2}, false) },
		func() { graph.Mean(x, []int{0, -2}, false) },
		func() { graph.Softmax(x, 5) },
	} {
		err := vtCatch(f)
		require.Error(t, err)
		require.Contains(t, err.Error(), "(2, 3) float64")
	}
}

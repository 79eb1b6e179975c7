package graph_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// By hand: rows (3, 1, 2) and (5, 5, 4).
func TestSortTopKCumSumByHand(t *testing.T) {
	g := graph.New()
	x := g.Var(tensor.FromFloat64s([]float64{3, 1, 2, 5, 5, 4}, 2, 3))
	s, idx := graph.Sort(x, false)
	assert.Equal(t, []float64{1, 2, 3, 4, 5, 5}, s.Value().Values())
	assert.Equal(t, [][]int{{1, 2, 0}, {2, 0, 1}}, idx, "ties keep their order")
	top, tidx := graph.TopK(x, 2)
	assert.Equal(t, []float64{3, 2, 5, 5}, top.Value().Values())
	assert.Equal(t, [][]int{{0, 2}, {0, 1}}, tidx)
	// The gradient of the top-2 sum reaches exactly the chosen inputs.
	gr := autodiff.Grad(graph.Sum(top, nil, false), x)[0]
	assert.Equal(t, []float64{1, 0, 1, 1, 1, 0}, gr.Value().Values())
	assert.Equal(t, []float64{3, 4, 6, 5, 10, 14}, graph.CumSum(x, 1).Value().Values())
	assert.Equal(t, []float64{3, 1, 2, 8, 6, 6}, graph.CumSum(x, 0).Value().Values())
}

// Sort and CumSum derivatives to second order (inputs with distinct values,
// so the permutation is constant under the finite-difference steps).
func TestSortCumSumGradCheck(t *testing.T) {
	rng := tensor.NewRNG(4)
	x := rng.Normal(tensor.Float64, 0, 1, 3, 4)
	w := rng.Normal(tensor.Float64, 0, 1, 3, 4)
	for name, f := range map[string]func([]*graph.Node) *graph.Node{
		"sort": func(xs []*graph.Node) *graph.Node {
			s, _ := graph.Sort(xs[0], true)
			return graph.Mul(graph.Square(s), xs[1])
		},
		"cumsum": func(xs []*graph.Node) *graph.Node { return graph.Mul(graph.CumSum(graph.Square(xs[0]), 0), xs[1]) },
		"topk":   func(xs []*graph.Node) *graph.Node { v, _ := graph.TopK(graph.Exp(xs[0]), 2); return v },
	} {
		_, err := autodiff.GradCheck(f, []*tensor.Tensor{x, w}, autodiff.GradCheckOptions{Name: name, Order: 2})
		require.NoError(t, err, name)
	}
}

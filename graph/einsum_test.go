package graph_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

// Each spec against the same contraction written with plain ops.
func TestEinsumAgainstPlainOps(t *testing.T) {
	rng := tensor.NewRNG(6)
	g := graph.New()
	n := func(shape ...int) *graph.Node { return g.Var(rng.Normal(tensor.Float64, 0, 1, shape...)) }
	a, b := n(3, 4), n(4, 5)
	numtest.Close(t, graph.MatMul(a, b).Value().Values(), graph.Einsum("ij,jk->ik", a, b).Value(), 1e-12, "matmul")
	numtest.Close(t, graph.Transpose(graph.MatMul(a, b)).Value().Values(), graph.Einsum("ij,jk->ki", a, b).Value(), 1e-12, "transposed output")
	c := n(5, 4)
	numtest.Close(t, graph.MatMulT(a, c, false, true).Value().Values(), graph.Einsum("ij,kj->ik", a, c).Value(), 1e-12, "A·Cᵀ")
	x, y := n(2, 3, 4), n(2, 4, 5)
	numtest.Close(t, graph.MatMul(x, y).Value().Values(), graph.Einsum("bij,bjk->bik", x, y).Value(), 1e-12, "batched")
	u, v := n(4), n(4)
	numtest.Close(t, graph.Sum(graph.Mul(u, v), nil, false).Value().Values(), graph.Einsum("i,i->", u, v).Value(), 1e-12, "dot")
	numtest.Close(t, graph.Mul(graph.Unsqueeze(u, 1), graph.Unsqueeze(v, 0)).Value().Values(), graph.Einsum("i,j->ij", u, v).Value(), 1e-12, "outer")
	// An axis only in one operand and not in the output is summed first.
	numtest.Close(t, graph.MatMul(graph.Sum(x, []int{2}, true), graph.Sum(y, []int{1}, true)).Value().Values(),
		graph.Einsum("bij,bkl->bil", x, y).Value(), 1e-12, "summed free axes")
}

func TestEinsumGradCheck(t *testing.T) {
	rng := tensor.NewRNG(7)
	_, err := autodiff.GradCheck(func(xs []*graph.Node) *graph.Node { return graph.Einsum("bij,bkj->bki", xs[0], xs[1]) },
		[]*tensor.Tensor{rng.Normal(tensor.Float64, 0, 1, 2, 3, 4), rng.Normal(tensor.Float64, 0, 1, 2, 5, 4)},
		autodiff.GradCheckOptions{Name: "einsum", Order: 2})
	require.NoError(t, err)
	g := graph.New()
	m := g.Var(tensor.Zeros(tensor.Float64, 2, 2))
	require.Panics(t, func() { graph.Einsum("ii,ij->j", m, m) })
	require.Panics(t, func() { graph.Einsum("ij,jk", m, m) })
}

package autodiff_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// GradEach returns Grad's gradients and reports each x once, the later
// created x first: y = sum(tanh(W₂·tanh(W₁·x))) reports W₂ before W₁, and
// an unused x (created last) first, with zeros.
func TestGradEachReportsInSweepOrder(t *testing.T) {
	g := graph.New()
	rng := tensor.NewRNG(1)
	x := g.Const(rng.Normal(tensor.Float64, 0, 1, 3, 2))
	w1 := g.Var(rng.Normal(tensor.Float64, 0, 1, 2, 4))
	h := graph.Tanh(graph.MatMul(x, w1))
	w2 := g.Var(rng.Normal(tensor.Float64, 0, 1, 4, 1))
	unused := g.Var(rng.Normal(tensor.Float64, 0, 1, 2))
	y := graph.Sum(graph.Tanh(graph.MatMul(h, w2)), nil, false)
	want := autodiff.Grad(y, w1, w2, unused)
	var order []int
	got := autodiff.GradEach(y, []*graph.Node{w1, w2, unused}, func(k int, gr *graph.Node) {
		order = append(order, k)
		assert.Equal(t, want[k].Value().Values(), gr.Value().Values(), "x %d", k)
	})
	assert.Equal(t, []int{2, 1, 0}, order)
	for k := range want {
		assert.Equal(t, want[k].Value().Values(), got[k].Value().Values())
	}
	assert.Equal(t, []float64{0, 0}, got[2].Value().Values())
}

package graph_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// By hand, as NumPy's take_along_axis and np.add.at give them for
// x = [[10, 11, 12], [20, 21, 22]].
func TestTakeAlongAxisScatterAddByHand(t *testing.T) {
	g := graph.New()
	x := g.Var(tensor.FromFloat64s([]float64{10, 11, 12, 20, 21, 22}, 2, 3))
	// Axis 1, two picks per row: rows pick (2, 0) and (1, 1).
	y := graph.TakeAlongAxis(x, 1, []int{2, 0, 1, 1})
	assert.Equal(t, []int{2, 2}, y.Shape())
	assert.Equal(t, []float64{12, 10, 21, 21}, y.Value().Values())
	// Axis 0, one pick per column: rows (1, 0, 1).
	z := graph.TakeAlongAxis(x, 0, []int{1, 0, 1})
	assert.Equal(t, []int{1, 3}, z.Shape())
	assert.Equal(t, []float64{20, 11, 22}, z.Value().Values())
	// The gradient of sum(y) counts how often each entry was picked.
	gr := autodiff.Grad(graph.Sum(y, nil, false), x)[0]
	assert.Equal(t, []float64{1, 0, 1, 0, 2, 0}, gr.Value().Values())
	// Scatter: np.add.at(zeros((2, 4)), (rows, idx), src) with repeats.
	src := g.Const(tensor.FromFloat64s([]float64{1, 2, 3, 4, 5, 6}, 2, 3))
	s := graph.ScatterAddAlongAxis(src, 1, []int{3, 3, 0, 1, 2, 1}, 4)
	assert.Equal(t, []int{2, 4}, s.Shape())
	assert.Equal(t, []float64{3, 0, 0, 3, 0, 10, 5, 0}, s.Value().Values())
	s0 := graph.ScatterAddAlongAxis(src, 0, []int{1, 1, 0, 1, 0, 0}, 2)
	assert.Equal(t, []float64{0, 5, 9, 5, 2, 0}, s0.Value().Values())
}

func TestTakeAlongAxisMisuse(t *testing.T) {
	g := graph.New()
	x := g.Var(tensor.FromFloat64s([]float64{1, 2, 3, 4, 5, 6}, 2, 3))
	for want, f := range map[string]func(){
		"take_along_axis: 3 indices do not fit operand (2, 3) float64 along axis 1: want a multiple of 2": func() { graph.TakeAlongAxis(x, 1, []int{0, 1, 2}) },
		"take_along_axis: index 3 at position 1 is outside [0, 3)":                                        func() { graph.TakeAlongAxis(x, 1, []int{0, 3}) },
		"scatter_add_along_axis: 2 indices for operand (2, 3) float64: want one per element":              func() { graph.ScatterAddAlongAxis(x, 1, []int{0, 1}, 3) },
		"scatter_add_along_axis: index 2 at position 2 is outside [0, 2)":                                 func() { graph.ScatterAddAlongAxis(x, 0, []int{0, 1, 2, 0, 1, 0}, 2) },
	} {
		err := func() (err error) {
			defer tensor.Recover(&err)
			f()
			return nil
		}()
		assert.ErrorContains(t, err, want)
	}
}

// Derivatives to second order, on a 3-D operand along its middle axis.
func TestTakeAlongAxisScatterAddGradCheck(t *testing.T) {
	rng := tensor.NewRNG(8)
	x := rng.Normal(tensor.Float64, 0, 1, 2, 3, 2)
	w := rng.Normal(tensor.Float64, 0, 1, 2, 4, 2)
	idx := []int{0, 2, 1, 1, 2, 2, 0, 0, 1, 0, 2, 1, 0, 1, 1, 2}
	for name, f := range map[string]func([]*graph.Node) *graph.Node{
		"take": func(xs []*graph.Node) *graph.Node {
			return graph.Mul(graph.Square(graph.TakeAlongAxis(xs[0], 1, idx)), xs[1])
		},
		"scatter": func(xs []*graph.Node) *graph.Node {
			return graph.Mul(graph.ScatterAddAlongAxis(graph.Square(xs[1]), 1, idx, 3), xs[0])
		},
	} {
		_, err := autodiff.GradCheck(f, []*tensor.Tensor{x, w}, autodiff.GradCheckOptions{Name: name, Order: 2})
		require.NoError(t, err, name)
	}
}

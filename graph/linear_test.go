package graph_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

// By hand: x = [[1, 2], [3, 4]], w = [[1, 0], [0, 1], [1, 1]], b = (10, 20, 30)
// give x·wᵀ + b = [[11, 22, 33], [13, 24, 37]]; a vector x gives one row.
// The gradients of Σ y: dx = Σ_rows w = (2, 2) per row, dw = column sums
// of x per output (4, 6), db = 2 (two rows).
func TestLinearHand(t *testing.T) {
	for _, dt := range numtest.DTypes {
		g := graph.New()
		x := g.Var(tensor.FromValues(dt, []float64{1, 2, 3, 4}, 2, 2))
		w := g.Var(tensor.FromValues(dt, []float64{1, 0, 0, 1, 1, 1}, 3, 2))
		b := g.Var(tensor.FromValues(dt, []float64{10, 20, 30}, 3))
		y := graph.Linear(x, w, b)
		require.Equal(t, []int{2, 3}, y.Shape())
		assert.Equal(t, []float64{11, 22, 33, 13, 24, 37}, y.Value().Values())
		grads := autodiff.Grad(graph.Sum(y, nil, false), x, w, b)
		assert.Equal(t, []float64{2, 2, 2, 2}, grads[0].Value().Values())
		assert.Equal(t, []float64{4, 6, 4, 6, 4, 6}, grads[1].Value().Values())
		assert.Equal(t, []float64{2, 2, 2}, grads[2].Value().Values())

		v := graph.Linear(g.Const(tensor.FromValues(dt, []float64{3, 4}, 2)), w, b)
		require.Equal(t, []int{3}, v.Shape())
		assert.Equal(t, []float64{13, 24, 37}, v.Value().Values())

		// A tangent in b alone is broadcast over the rows.
		tb := g.Const(tensor.FromValues(dt, []float64{1, -1, 2}, 3))
		jvp := autodiff.JVP([]*graph.Node{y}, []*graph.Node{b}, []*graph.Node{tb})[0]
		assert.Equal(t, []float64{1, -1, 2, 1, -1, 2}, jvp.Value().Values())
	}
}

func TestLinearMisuse(t *testing.T) {
	g := graph.New()
	x := g.Const(tensor.New(tensor.Float64, 4, 3))
	w := g.Const(tensor.New(tensor.Float64, 2, 3))
	b := g.Const(tensor.New(tensor.Float64, 2))
	for name, c := range map[string]struct {
		f    func()
		want string
	}{
		"inner":  {func() { graph.Linear(x, g.Const(tensor.New(tensor.Float64, 2, 4)), b) }, "(4, 3) float64, (2, 4) float64, (2,) float64 do not fit"},
		"bias":   {func() { graph.Linear(x, w, g.Const(tensor.New(tensor.Float64, 3))) }, "(2, 3) float64, (3,) float64 do not fit"},
		"dtype":  {func() { graph.Linear(x, w, g.Const(tensor.New(tensor.Float32, 2))) }, "mixed dtypes"},
		"scalar": {func() { graph.Linear(g.Scalar(tensor.Float64, 1), w, b) }, "scalar input"},
	} {
		e := graphError(t, c.f)
		require.NotNil(t, e, name)
		assert.Equal(t, "linear", e.Op, name)
		assert.Contains(t, e.Msg, c.want, name)
	}
	require.NotPanics(t, func() { graph.Linear(x, w, b) })
}

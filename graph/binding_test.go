package graph_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// VarOf gives one node per tensor per step, so two uses of a parameter
// share a gradient: d/dw (w·x + w·y) = x + y.
func TestVarOfSharesOneNodePerStep(t *testing.T) {
	w := tensor.FromFloat64s([]float64{2}, 1)
	g := graph.New()
	assert.Nil(t, g.Bound(w))
	a, b := g.VarOf(w), g.VarOf(w)
	require.Same(t, a, b)
	require.Same(t, a, g.Bound(w))
	x, y := g.Const(tensor.FromFloat64s([]float64{3}, 1)), g.Const(tensor.FromFloat64s([]float64{5}, 1))
	loss := graph.Sum(graph.Add(graph.Mul(a, x), graph.Mul(b, y)), nil, false)
	assert.Equal(t, []float64{8}, autodiff.Grad(loss, a)[0].Value().Values())

	g.Reset()
	assert.Nil(t, g.Bound(w), "Reset forgets the bindings")
	c := g.VarOf(w)
	assert.True(t, c.IsVar())
	assert.Same(t, w, c.Value())
}

// Bind makes VarOf return a computed node, so code reading a parameter
// through VarOf differentiates through it; Bind(t, nil) undoes it.
func TestBindOverridesVarOf(t *testing.T) {
	w := tensor.FromFloat64s([]float64{2, 3}, 2)
	g := graph.New()
	u := g.Var(tensor.FromFloat64s([]float64{1, 4}, 2))
	sq := graph.Square(u)
	g.Bind(w, sq)
	require.Same(t, sq, g.VarOf(w))
	loss := graph.Sum(g.VarOf(w), nil, false) // Σ u²
	assert.Equal(t, []float64{2, 8}, autodiff.Grad(loss, u)[0].Value().Values())
	g.Bind(w, nil)
	assert.Nil(t, g.Bound(w))
	assert.NotSame(t, sq, g.VarOf(w))
}

func TestBindRejectsMismatches(t *testing.T) {
	w := tensor.FromFloat64s([]float64{2, 3}, 2)
	g, other := graph.New(), graph.New()
	e := graphError(t, func() { g.Bind(w, g.Var(tensor.FromFloat64s([]float64{1, 2, 3}, 3))) })
	assert.Contains(t, e.Error(), "(3,) float64")
	e = graphError(t, func() { g.Bind(w, g.Var(w.Cast(tensor.Float32))) })
	assert.Contains(t, e.Error(), "float32")
	e = graphError(t, func() { g.Bind(w, other.Var(w)) })
	assert.Contains(t, e.Error(), "another graph")
	e = graphError(t, func() { g.Bind(nil, g.Var(w)) })
	assert.Contains(t, e.Error(), "nil tensor")
}

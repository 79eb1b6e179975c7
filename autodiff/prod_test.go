package autodiff_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// The derivative of Π x is ∂/∂xᵢ = Π_{j≠i} xⱼ and the Hessian is
// ∂²/∂xᵢ∂xⱼ = Π_{l≠i,j} xₗ (i ≠ j, 0 on the diagonal), worked out by hand
// below; dividing by xᵢ used to make both NaN at zeros.
func TestProdDerivativesAtZeros(t *testing.T) {
	cases := []struct {
		x, grad, hess []float64
	}{
		{[]float64{1, 2, 3}, []float64{6, 3, 2}, []float64{0, 3, 2, 3, 0, 1, 2, 1, 0}},
		{[]float64{0, 2, 3}, []float64{6, 0, 0}, []float64{0, 3, 2, 3, 0, 0, 2, 0, 0}},
		{[]float64{2, 0, 3}, []float64{0, 6, 0}, []float64{0, 3, 0, 3, 0, 2, 0, 2, 0}},
		{[]float64{0, 0, 3}, []float64{0, 0, 0}, []float64{0, 3, 0, 3, 0, 0, 0, 0, 0}},
		{[]float64{0, 0, 0}, []float64{0, 0, 0}, []float64{0, 0, 0, 0, 0, 0, 0, 0, 0}},
		{[]float64{-1, 0, 0.5}, []float64{0, -0.5, 0}, []float64{0, 0.5, 0, 0.5, 0, -1, 0, -1, 0}},
	}
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		for _, c := range cases {
			g := graph.New()
			x := g.Var(tensor.FromValues(dt, c.x, 3))
			p := graph.Prod(x, nil, false)
			assert.Equal(t, c.grad, autodiff.Grad(p, x)[0].Value().Values(), "%v grad at %v", dt, c.x)
			assert.Equal(t, c.hess, autodiff.Hessian(p, x).Values(), "%v hessian at %v", dt, c.x)
			// Forward mode: ṗ = Σ gradᵢ·ẋᵢ with ẋ = (1, 10, 100).
			tan := g.Const(tensor.FromValues(dt, []float64{1, 10, 100}, 3))
			want := c.grad[0] + 10*c.grad[1] + 100*c.grad[2]
			got := autodiff.JVP([]*graph.Node{p}, []*graph.Node{x}, []*graph.Node{tan})[0].Item()
			assert.Equal(t, want, got, "%v jvp at %v", dt, c.x)
		}
	}
}

// Zeros are counted per reduced group: along axis 1 of [[0 2 3] [4 0 0]]
// the first row has one zero and the second two.
func TestProdGradPerAxis(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		for _, keep := range []bool{false, true} {
			g := graph.New()
			x := g.Var(tensor.FromValues(dt, []float64{0, 2, 3, 4, 0, 0}, 2, 3))
			w := g.Const(tensor.FromValues(dt, []float64{1, 10}, 2))
			p := graph.Prod(x, []int{1}, keep)
			y := graph.Sum(graph.Mul(graph.Reshape(p, 2), w), nil, false)
			assert.Equal(t, []float64{6, 0, 0, 0, 0, 0}, autodiff.Grad(y, x)[0].Value().Values(), "%v keepdims %v", dt, keep)
		}
	}
}

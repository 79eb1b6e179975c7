package autodiff_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Cast between dtypes, checked against hand-worked values. The inputs are
// exactly representable in float32, so every value below is exact.
func TestCastValuesAndDerivatives(t *testing.T) {
	xs := []float64{1.5, -2, 0.25}
	for _, c := range []struct{ from, to tensor.DType }{
		{tensor.Float64, tensor.Float32},
		{tensor.Float32, tensor.Float64},
		{tensor.Float64, tensor.Float64},
		{tensor.Float32, tensor.Float32},
	} {
		t.Run(c.from.String()+"->"+c.to.String(), func(t *testing.T) {
			g := graph.New()
			x := g.Var(tensor.FromValues(c.from, xs, 3))
			y := graph.Cast(x, c.to)
			require.Equal(t, c.to, y.DType())
			assert.Equal(t, []int{3}, y.Shape())
			assert.Equal(t, xs, y.Value().Values())

			// f(x) = Σ cast(x)³ in the target dtype: ∂f/∂x = 3x², in x's dtype.
			f := graph.Sum(graph.PowScalar(y, 3), nil, false)
			gr := autodiff.Grad(f, x)[0]
			require.Equal(t, c.from, gr.DType())
			assert.Equal(t, []float64{6.75, 12, 0.1875}, gr.Value().Values())

			// Forward mode: ḟ = Σ 3x²·ẋ with ẋ = (1, 2, 4): 6.75 + 24 + 0.75.
			tan := g.Const(tensor.FromValues(c.from, []float64{1, 2, 4}, 3))
			jv := autodiff.JVP([]*graph.Node{f}, []*graph.Node{x}, []*graph.Node{tan})[0]
			require.Equal(t, c.to, jv.DType())
			assert.Equal(t, 31.5, jv.Item())
		})
	}
}

// float64 → float32 → float64 rounds the value once; the gradient of the
// round trip is the identity (the rounding is treated as exact, as in
// PyTorch and JAX).
func TestCastRoundTrip(t *testing.T) {
	g := graph.New()
	x := g.Var(tensor.FromFloat64s([]float64{0.1, 1 << 30, 3}, 3))
	y := graph.Cast(graph.Cast(x, tensor.Float32), tensor.Float64)
	want := []float64{float64(float32(0.1)), 1 << 30, 3}
	assert.Equal(t, want, y.Value().Values())
	assert.NotEqual(t, 0.1, y.Value().Values()[0], "0.1 is not a float32")
	w := g.Const(tensor.FromFloat64s([]float64{2, -1, 0.5}, 3))
	gr := autodiff.Grad(graph.Sum(graph.Mul(y, w), nil, false), x)[0]
	assert.Equal(t, tensor.Float64, gr.DType())
	assert.Equal(t, []float64{2, -1, 0.5}, gr.Value().Values())
}

// A strided (transposed) operand is converted in its logical order.
func TestCastStrided(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		other := tensor.Float64
		if dt == tensor.Float64 {
			other = tensor.Float32
		}
		g := graph.New()
		x := g.Var(tensor.FromValues(dt, []float64{1, 2, 3, 4, 5, 6}, 2, 3))
		y := graph.Cast(graph.Transpose(x), other)
		assert.Equal(t, []int{3, 2}, y.Shape())
		assert.Equal(t, []float64{1, 4, 2, 5, 3, 6}, y.Value().Values())
	}
}

package tensor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/tensor"
)

// The masks on two 2×3 matrices and on a tall transposed view, worked by
// hand: each element times lower, diag or upper by its position.
func TestTriMaskByHand(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		x := tensor.FromValues(dt, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 2, 2, 3)
		assert.Equal(t, []float64{1, 0, 0, 4, 5, 0, 7, 0, 0, 10, 11, 0}, tensor.TriMask(x, 1, 1, 0).Values())
		assert.Equal(t, []float64{1, 2, 3, 0, 5, 6, 7, 8, 9, 0, 11, 12}, tensor.TriMask(x, 0, 1, 1).Values())
		assert.Equal(t, []float64{2, 20, 30, 4, 10, 60, 14, 80, 90, 10, 22, 120}, tensor.TriMask(x, 1, 2, 10).Values())
		// [[1 4] [2 5] [3 6]] is a strided view.
		xt := tensor.Transpose(tensor.FromValues(dt, []float64{1, 2, 3, 4, 5, 6}, 2, 3))
		assert.Equal(t, []float64{0.5, 0, 2, 2.5, 3, 6}, tensor.TriMask(xt, 1, 0.5, 0).Values())
		// In place.
		y := x.Clone()
		tensor.TriMaskTo(y, y, 0, 1, 1)
		assert.Equal(t, []float64{1, 2, 3, 0, 5, 6, 7, 8, 9, 0, 11, 12}, y.Values())
	}
	assert.Panics(t, func() { tensor.TriMask(tensor.Zeros(tensor.Float64, 3), 1, 1, 0) })
}

package tensor_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/tensor"
)

// By hand: A = [[3, 1], [4, 2]] has first column of norm 5, so
// q₁ = (0.6, 0.8), r₁₁ = 5, r₁₂ = q₁·(1, 2) = 2.2; the remainder
// (1, 2) − 2.2·q₁ = (−0.32, 0.24) has norm 0.4: r₂₂ = 0.4, q₂ = (−0.8, 0.6).
func TestQRByHand(t *testing.T) {
	q, r, err := tensor.QR(tensor.FromFloat64s([]float64{3, 1, 4, 2}, 2, 2))
	require.NoError(t, err)
	assert.InDeltaSlice(t, []float64{0.6, -0.8, 0.8, 0.6}, q.Values(), 1e-15)
	assert.InDeltaSlice(t, []float64{5, 2.2, 0, 0.4}, r.Values(), 1e-15)
}

func TestQRReconstructs(t *testing.T) {
	rng := tensor.NewRNG(2)
	for _, shape := range [][]int{{6, 3}, {4, 4}, {2, 5, 2}} {
		a := rng.Normal(tensor.Float64, 0, 1, shape...)
		q, r, err := tensor.QR(a)
		require.NoError(t, err)
		assert.InDeltaSlice(t, a.Values(), tensor.MatMul(q, r).Values(), 1e-13, "shape %v", shape)
		n := shape[len(shape)-1]
		qtq := tensor.MatMulT(q, q, true, false).Values()
		eye := tensor.Eye(tensor.Float64, n).Values()
		for i, v := range qtq {
			assert.InDelta(t, eye[i%len(eye)], v, 1e-13)
		}
		rv := r.Values()
		for b := 0; b < len(rv); b += n * n {
			for i := range n {
				assert.GreaterOrEqual(t, rv[b+i*n+i], 0.0)
				for j := 0; j < i; j++ {
					assert.Equal(t, 0.0, rv[b+i*n+j])
				}
			}
		}
	}
	// A wide matrix: q is square, r is k×n upper triangular.
	// By hand: A = [[3, 1, 2], [4, 0, 1]] has q's first column (3, 4)/5 and
	// r = [[5, 3/5, 2], [0, 4/5, 1]] (q = [[3/5, 4/5], [4/5, −3/5]]).
	wq, wr, err := tensor.QR(tensor.FromFloat64s([]float64{3, 1, 2, 4, 0, 1}, 2, 3))
	require.NoError(t, err)
	assert.Equal(t, []int{2, 2}, wq.Shape())
	assert.InDeltaSlice(t, []float64{5, 0.6, 2, 0, 0.8, 1}, wr.Values(), 1e-12)
	assert.InDeltaSlice(t, []float64{0.6, 0.8, 0.8, -0.6}, wq.Values(), 1e-12)
	assert.Panics(t, func() { tensor.QR(tensor.Zeros(tensor.Float64, 3)) })
	_, _, err = tensor.QR(tensor.FromFloat64s([]float64{math.Inf(1), 0}, 2, 1))
	assert.ErrorIs(t, err, tensor.ErrNotFinite)
}

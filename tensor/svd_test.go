package tensor_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/tensor"
)

// By hand: A = [[3, 0], [4, 5]] has AᵀA = [[25, 20], [20, 25]] with
// eigenvalues 45 and 5, so s = (3√5, √5); the right singular vectors are
// (1, 1)/√2 and (1, −1)/√2 up to sign (the convention makes the largest
// entry positive: the first is (1, 1)/√2, the second (1, −1)/√2).
func TestSVDByHand(t *testing.T) {
	u, s, v, err := tensor.SVD(tensor.FromFloat64s([]float64{3, 0, 4, 5}, 2, 2))
	require.NoError(t, err)
	assert.InDeltaSlice(t, []float64{3 * math.Sqrt(5), math.Sqrt(5)}, s.Values(), 1e-14)
	r := 1 / math.Sqrt2
	assert.InDeltaSlice(t, []float64{r, r, r, -r}, v.Values(), 1e-14)
	// u = A v / s: first column (3, 9)/(√2·3√5) = (1, 3)/√10.
	assert.InDelta(t, 1/math.Sqrt(10), u.At(0, 0), 1e-14)
	assert.InDelta(t, 3/math.Sqrt(10), u.At(1, 0), 1e-14)
}

// Random tall, wide and batched matrices: U·diag(s)·Vᵀ rebuilds A, the
// columns of U and V are orthonormal, s decreases.
func TestSVDReconstructs(t *testing.T) {
	rng := tensor.NewRNG(1)
	for _, shape := range [][]int{{7, 4}, {4, 7}, {3, 5, 5}, {1, 1}} {
		a := rng.Normal(tensor.Float64, 0, 1, shape...)
		u, s, v, err := tensor.SVD(a)
		require.NoError(t, err)
		rebuilt := tensor.MatMulT(tensor.Mul(u, tensor.Unsqueeze(s, -2)), v, false, true)
		assert.InDeltaSlice(t, a.Values(), rebuilt.Values(), 1e-12, "shape %v", shape)
		k := s.Shape()[len(s.Shape())-1]
		eye := tensor.Eye(tensor.Float64, k)
		for _, q := range []*tensor.Tensor{u, v} {
			g := tensor.MatMulT(q, q, true, false)
			gv, ev := g.Values(), eye.Values()
			for i := range gv {
				assert.InDelta(t, ev[i%len(ev)], gv[i], 1e-12)
			}
		}
		sv := s.Values()
		for i := 1; i < len(sv); i++ {
			if i%k != 0 {
				assert.GreaterOrEqual(t, sv[i-1], sv[i])
			}
		}
	}
	_, _, _, err := tensor.SVD(tensor.FromFloat64s([]float64{1, math.NaN(), 0, 1}, 2, 2))
	assert.ErrorIs(t, err, tensor.ErrNotFinite)
}

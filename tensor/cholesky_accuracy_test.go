package tensor

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rbfMatrix is the ill-conditioned kind of matrix Gaussian processes
// factor: exp(−(xᵢ − xⱼ)²/(2ℓ²)) on x_i = 10i/n, plus jitter on the
// diagonal, computed in float64 and stored in dt.
func rbfMatrix(dt DType, n int, ell, jitter float64) *Tensor {
	v := make([]float64, n*n)
	for i := range n {
		for j := range n {
			d := 10 * float64(i-j) / float64(n)
			v[i*n+j] = math.Exp(-d * d / (2 * ell * ell))
		}
		v[i*n+i] += jitter
	}
	return FromValues(dt, v, n, n)
}

// The factorisation is backward stable on such matrices: ‖LLᵀ − A‖/‖A‖
// stays at the rounding level (the panel solves substitute; an explicit
// inverse of the diagonal blocks raised it to 1e-14).
func TestCholeskyBackwardErrorIllConditioned(t *testing.T) {
	for _, n := range []int{200, 400} {
		a := rbfMatrix(Float64, n, 0.5, 1e-9)
		l, err := Cholesky(a)
		require.NoError(t, err)
		am, lm := laMatOf(a), laMatOf(l)
		r := laMul(lm, laT(lm))
		num, den := 0.0, 0.0
		for i := range am.v {
			d := r.v[i] - am.v[i]
			num += d * d
			den += am.v[i] * am.v[i]
		}
		assert.Less(t, math.Sqrt(num/den), 1e-15, "n = %d", n)
	}
	// In float32 this matrix factors with jitter 1e-6.
	_, err := Cholesky(rbfMatrix(Float32, 200, 0.5, 1e-6))
	assert.NoError(t, err)
}

// The reverse sweep is as accurate as the factorisation allows: in float32
// it stays close to the float64 result on an ill-conditioned matrix.
func TestCholeskyGradIllConditionedFloat32(t *testing.T) {
	const n = 150
	a := rbfMatrix(Float64, n, 0.5, 1e-4)
	lbar := laRandom(Float64, 5, n, n)
	l64, err := Cholesky(a)
	require.NoError(t, err)
	l32, err := Cholesky(a.Cast(Float32))
	require.NoError(t, err)
	want := laMatOf(CholeskyGrad(l64, lbar))
	got := laMatOf(CholeskyGrad(l32, lbar.Cast(Float32)))
	num, den := 0.0, 0.0
	for i := range want.v {
		d := got.v[i] - want.v[i]
		num += d * d
		den += want.v[i] * want.v[i]
	}
	assert.Less(t, math.Sqrt(num/den), 4e-3)
}

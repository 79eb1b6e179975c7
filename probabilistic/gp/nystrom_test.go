package gp

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// apxKernelByHand is the RBF kernel matrix σ²exp(−‖a−b‖²/(2ℓ²)) of rows.
func apxKernelByHand(x []float64, n, d int, variance, ls float64) []float64 {
	k := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			r2 := 0.0
			for c := 0; c < d; c++ {
				diff := x[i*d+c] - x[j*d+c]
				r2 += diff * diff
			}
			k[i*n+j] = variance * math.Exp(-r2/(2*ls*ls))
		}
	}
	return k
}

// With every data point a landmark, Knn Knn⁻¹ Knn = Knn exactly.
func TestNystromExactWhenMEqualsN(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		const n, d = 8, 2
		xv := tensor.NewRNG(11).Uniform(tensor.Float64, -2, 2, n, d).Values()
		k := kernel.NewScale(kernel.NewRBF(0.7), 1.4)
		for _, p := range k.Hyperparams() {
			p.SetDType(dt)
		}
		x := tensor.FromValues(dt, xv, n, d)
		ny, err := NewNystrom(k, x)
		require.NoError(t, err)
		tol := 1e-8
		if dt == tensor.Float32 {
			tol = 2e-3
			assert.LessOrEqual(t, ny.Jitter(), 1e-5)
		} else {
			assert.Zero(t, ny.Jitter())
		}
		assert.InDeltaSlice(t, apxKernelByHand(xv, n, d, 1.4, 0.7), ny.Approx(x, nil).Values(), tol, "%v", dt)
	}
}

// For nested landmark sets the trace error tr(K − K̃) (the sum of the
// Schur complement's eigenvalues, never negative) shrinks as m grows, and
// the Frobenius error goes to zero.
func TestNystromErrorDecreasesWithM(t *testing.T) {
	const n, d = 40, 2
	rng := tensor.NewRNG(5)
	xv := rng.Uniform(tensor.Float64, -2, 2, n, d).Values()
	x := tensor.FromFloat64s(xv, n, d)
	exact := apxKernelByHand(xv, n, d, 1, 0.8)
	perm := rng.Perm(n)
	prevTrace, prevFrob := math.Inf(1), math.Inf(1)
	for _, m := range []int{2, 5, 10, 20, 40} {
		z := tensor.IndexSelect(x, 0, perm[:m])
		ny, err := NewNystrom(kernel.NewRBF(0.8), z)
		require.NoError(t, err)
		approx := ny.Approx(x, nil).Values()
		trace, frob := 0.0, 0.0
		for i := 0; i < n; i++ {
			trace += exact[i*n+i] - approx[i*n+i]
		}
		for i := range exact {
			frob += (exact[i] - approx[i]) * (exact[i] - approx[i])
		}
		frob = math.Sqrt(frob)
		assert.GreaterOrEqual(t, trace, -1e-6, "m=%d", m)
		assert.Less(t, trace, prevTrace, "m=%d", m)
		assert.Less(t, frob, prevFrob+1e-9, "m=%d", m)
		prevTrace, prevFrob = trace, frob
	}
	assert.Less(t, prevFrob, 1e-5, "m = n recovers K")
}

// Coincident landmarks make K(z, z) singular: the jitter escalates.
func TestNystromJitterOnDuplicates(t *testing.T) {
	z := tensor.FromFloat64s([]float64{0, 0, 1}, 3, 1)
	ny, err := NewNystrom(kernel.NewRBF(1), z)
	require.NoError(t, err)
	assert.Greater(t, ny.Jitter(), 0.0)
	assert.Equal(t, []int{2, 3}, ny.Features(tensor.FromFloat64s([]float64{0.5, 2}, 2, 1)).Shape())
}

package autodiff_test

// Review test: the closed-form eigenvalue derivative ∂λ_k/∂A = v_k·v_kᵀ
// (and its forward form λ̇_k = v_kᵀ·Ȧ·v_k) for a symmetric matrix with
// distinct eigenvalues, in both dtypes. The matrix is built by hand from an
// exact rotation (cos θ = 0.6, sin θ = 0.8), so its eigenvectors are known.

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// A = 1·q1q1ᵀ + 2·q2q2ᵀ + 4·q3q3ᵀ with q1 = (0.6, 0.8, 0),
// q2 = (−0.8, 0.6, 0), q3 = (0, 0, 1).
var (
	reviewEighA = []float64{
		1.64, -0.48, 0,
		-0.48, 1.36, 0,
		0, 0, 4,
	}
	reviewEighQ = [3][3]float64{{0.6, 0.8, 0}, {-0.8, 0.6, 0}, {0, 0, 1}}
)

func reviewOuter(q [3]float64) []float64 {
	out := make([]float64, 9)
	for i := range 3 {
		for j := range 3 {
			out[i*3+j] = q[i] * q[j]
		}
	}
	return out
}

func reviewAssertClose(t *testing.T, want []float64, got *tensor.Tensor, tol float64, msg string) {
	t.Helper()
	g := got.Values()
	require.Len(t, g, len(want), msg)
	for i := range want {
		assert.InDelta(t, want[i], g[i], tol*math.Max(1, math.Abs(want[i])), "%s: element %d", msg, i)
	}
}

func TestReviewEigenvalueGradientIsOuterProduct(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		tol := 1e-10
		if dt == tensor.Float32 {
			tol = 1e-5
		}
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			a := g.Var(tensor.FromValues(dt, reviewEighA, 3, 3))
			w, _ := graph.Eigh(a)
			reviewAssertClose(t, []float64{1, 2, 4}, w.Value(), tol, "eigenvalues")
			for k := range 3 {
				lk := graph.Sum(graph.Slice(w, -1, k, k+1, 1), nil, false)
				grad := autodiff.Grad(lk, a)[0]
				reviewAssertClose(t, reviewOuter(reviewEighQ[k]), grad.Value(), tol, "∂λ/∂A = vvᵀ")
			}
			// Forward mode along a symmetric direction E: λ̇_k = q_kᵀ·E·q_k.
			e := g.Const(tensor.FromValues(dt, []float64{1, 2, 0, 2, 0, 1, 0, 1, 3}, 3, 3))
			wdot := autodiff.JVP([]*graph.Node{w}, []*graph.Node{a}, []*graph.Node{e})[0]
			reviewAssertClose(t, []float64{2.28, -1.28, 3}, wdot.Value(), tol, "λ̇ = vᵀ·E·v")
		})
	}
}

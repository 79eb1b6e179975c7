package tensor

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// For A = [[4, 2], [2, 5]]: L11 = √a11, L21 = a21/√a11 and
// L22 = √(a22 − a21²/a11), so L = [[2, 0], [1, 2]]. By hand:
//
//	∂L11/∂a11 = 1/(2√a11) = 1/4
//	∂L21/∂a11 = −a21/(2 a11^{3/2}) = −1/8,  ∂L21/∂a21 = 1/√a11 = 1/2
//	∂L22/∂a22 = 1/(2 L22) = 1/4,  ∂L22/∂a21 = −a21/(a11 L22) = −1/4,
//	∂L22/∂a11 = a21²/(2 a11² L22) = 1/16
//
// With L̄ = [[1, 0], [1, 1]] the cotangent of the lower triangle is
// (a11, a21, a22) = (1/4 − 1/8 + 1/16, 1/2 − 1/4, 1/4); the symmetric
// cotangent splits a21's between the two off-diagonal entries.
func TestCholeskyGradHandWorked(t *testing.T) {
	for _, dt := range laDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			l, err := Cholesky(FromValues(dt, []float64{4, 2, 2, 5}, 2, 2))
			require.NoError(t, err)
			laAssertClose(t, []float64{2, 0, 1, 2}, l, laTol(dt, 2))
			lbar := laBadUpper(FromValues(dt, []float64{1, 0, 1, 1}, 2, 2))
			got := CholeskyGrad(laBadUpper(l), lbar)
			laAssertClose(t, []float64{3.0 / 16, 1.0 / 8, 1.0 / 8, 1.0 / 4}, got, laTol(dt, 2))
		})
	}
}

// cholGradSymbolic is the textbook form Ā = ½·L⁻ᵀ·S·L⁻¹ with
// S = Φ(LᵀL̄) + Φ(LᵀL̄)ᵀ (Φ: the lower triangle with the diagonal halved),
// from naive products and the triangular solves.
func cholGradSymbolic(l, lbar *Tensor) laMat {
	n := l.Shape()[0]
	p := laMul(laT(laMatOf(l)), laMatOf(laLower(lbar)))
	s := laMat{n, n, make([]float64, n*n)}
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			v := p.at(i, j)
			if i == j {
				v /= 2
			}
			s.v[i*n+j] += v
			s.v[j*n+i] += v
		}
	}
	st := FromValues(Float64, s.v, n, n)
	w := TriSolve(l, st, true, true) // L⁻ᵀS
	x := TriSolve(l, Transpose(w).Clone(), true, true)
	out := laMatOf(x)
	for i := range out.v {
		out.v[i] /= 2
	}
	return out
}

func TestCholeskyGradAgainstSymbolic(t *testing.T) {
	for _, n := range []int{1, 3, 31, 33, 70, 161, 300} {
		for _, dt := range laDTypes {
			t.Run(fmt.Sprint(dt, "/n", n), func(t *testing.T) {
				l, err := Cholesky(laSPD(dt, uint64(n), n))
				require.NoError(t, err)
				lbar := laRandom(dt, uint64(n)+7, n, n)
				got := CholeskyGrad(l, laBadUpper(lbar))
				// The reference works in float64 on the same (rounded) inputs.
				want := cholGradSymbolic(l.Cast(Float64), lbar.Cast(Float64))
				scale := 0.0
				for _, v := range want.v {
					scale = math.Max(scale, math.Abs(v))
				}
				tol := 1e-12 * float64(n+4)
				if dt == Float32 {
					tol = 1e-5 * float64(n+4)
				}
				assert.Less(t, laMaxDiff(laMatOf(got), want)/scale, tol)
				gm := laMatOf(got)
				for i := 0; i < n; i++ {
					for j := 0; j < i; j++ {
						require.Equal(t, gm.at(i, j), gm.at(j, i), "not symmetric at (%d, %d)", i, j)
					}
				}
			})
		}
	}
}

// ⟨Ā, E⟩ must be the directional derivative of ⟨L̄, chol(A)⟩ along a
// symmetric E, estimated by central differences of the factorisation.
func TestCholeskyGradFiniteDifferences(t *testing.T) {
	for _, n := range []int{2, 40, 97} {
		t.Run(fmt.Sprint("n", n), func(t *testing.T) {
			a := laSPD(Float64, uint64(n)+1, n)
			l, err := Cholesky(a)
			require.NoError(t, err)
			lbar := laLower(laRandom(Float64, uint64(n)+2, n, n))
			abar := CholeskyGrad(l, lbar)
			e := laRandom(Float64, uint64(n)+3, n, n)
			e = Add(e, Transpose(e))
			const eps = 1e-4
			f := func(s float64) float64 {
				ls, err := Cholesky(Add(a, MulScalar(e, s)))
				require.NoError(t, err)
				return Sum(Mul(ls, lbar), nil, false).Item()
			}
			fd := (f(eps) - f(-eps)) / (2 * eps)
			ad := Sum(Mul(abar, e), nil, false).Item()
			assert.InDelta(t, fd, ad, 1e-7*math.Max(1, math.Abs(fd)))
		})
	}
}

func TestCholeskyGradBatchDTypesAndTo(t *testing.T) {
	const n = 45
	l0, err := Cholesky(laSPD(Float64, 1, n))
	require.NoError(t, err)
	l1, err := Cholesky(laSPD(Float64, 2, n))
	require.NoError(t, err)
	ls := Stack(0, l0, l1)
	lbar := laRandom(Float64, 3, n, n)
	got := CholeskyGrad(ls, lbar) // lbar broadcasts over the batch
	require.Equal(t, []int{2, n, n}, got.Shape())
	for i, l := range []*Tensor{l0, l1} {
		want := CholeskyGrad(l, lbar)
		assert.Equal(t, want.Values(), got.Values()[i*n*n:(i+1)*n*n], "matrix %d of the batch", i)
	}
	// A transposed view of the factor is read like the factor.
	assert.Equal(t, CholeskyGrad(l0, lbar).Values(), CholeskyGrad(Transpose(Transpose(l0).Clone()), lbar).Values())

	// float32 agrees with float64 to float32 accuracy.
	g32 := CholeskyGrad(l0.Cast(Float32), lbar.Cast(Float32))
	want := CholeskyGrad(l0, lbar)
	laAssertClose(t, want.Values(), g32, 1e-4)

	// In place on the cotangent.
	dst := lbar.Clone()
	CholeskyGradTo(dst, l0, dst)
	assert.Equal(t, want.Values(), dst.Values())
}

func TestCholeskyGradPanics(t *testing.T) {
	l := Eye(Float64, 3)
	requirePanics(t, func() { CholeskyGrad(l, Zeros(Float64, 3, 2)) }, "CholeskyGrad")
	requirePanics(t, func() { CholeskyGrad(l, Zeros(Float64, 4, 4)) }, "CholeskyGrad")
	requirePanics(t, func() { CholeskyGrad(l, Zeros(Float32, 3, 3)) }, "CholeskyGrad")
	requirePanics(t, func() { CholeskyGrad(Zeros(Float64, 3, 2), Zeros(Float64, 3, 3)) }, "CholeskyGrad")
	requirePanics(t, func() { CholeskyGradTo(l, l, Eye(Float64, 3)) }, "CholeskyGradTo")
}

// A batch of many small matrices is split over goroutines; every matrix
// must still get its own cotangent.
func TestCholeskyGradManySmall(t *testing.T) {
	const n, batch = 8, 200
	ls := make([]*Tensor, batch)
	for i := range ls {
		l, err := Cholesky(laSPD(Float64, uint64(i+1), n))
		require.NoError(t, err)
		ls[i] = l
	}
	lbar := laRandom(Float64, 9, batch, n, n)
	got := CholeskyGrad(Stack(0, ls...), lbar).Values()
	for i, l := range ls {
		lb := FromValues(Float64, lbar.Values()[i*n*n:(i+1)*n*n], n, n)
		want := cholGradSymbolic(l, lb)
		for k, w := range want.v {
			require.InDelta(t, w, got[i*n*n+k], 1e-12*math.Max(1, math.Abs(w)), "matrix %d entry %d", i, k)
		}
	}
}

// The factorisation and its reverse sweep split their updates by rows
// over the goroutines (factor_split.go); each entry is computed the same
// way in any block, so the factor and the cotangent are bit for bit those
// of one goroutine, at orders whose updates split (and a ragged one).
func TestCholeskySplitMatchesSerial(t *testing.T) {
	for _, dt := range laDTypes {
		for _, n := range []int{300, 531} {
			a := laSPD(dt, 5, n)
			lbar := laRandom(dt, 6, n, n)
			assertSameBitsAnyProcs(t, func() []*Tensor {
				l, err := Cholesky(a)
				require.NoError(t, err)
				return []*Tensor{l, CholeskyGrad(l, lbar)}
			})
		}
	}
}

package tensor

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// svdCheck verifies U·diag(s)·Vᵀ = A, UᵀU = I, VᵀV = I and descending
// non-negative s for one m×n matrix, relative to max(s).
func svdCheck(t *testing.T, dt DType, a laMat, u laMat, s []float64, v laMat) {
	t.Helper()
	k := min(a.r, a.c)
	require.Equal(t, []int{a.r, k, a.c, k, k}, []int{u.r, u.c, v.r, v.c, len(s)})
	for i := range s {
		require.GreaterOrEqual(t, s[i], 0.0, "singular value %d negative", i)
		if i > 0 {
			require.LessOrEqual(t, s[i], s[i-1], "singular values not descending")
		}
	}
	us := laMat{u.r, u.c, append([]float64{}, u.v...)}
	for i := 0; i < u.r; i++ {
		for j := 0; j < k; j++ {
			us.v[i*k+j] *= s[j]
		}
	}
	scale := 1.0
	if k > 0 && s[0] > 0 {
		scale = s[0]
	}
	n := max(a.r, a.c)
	assert.Less(t, laMaxDiff(laMul(us, laT(v)), a)/scale, laRelTol(dt, n), "reconstruction")
	assert.Less(t, laMaxDiff(laMul(laT(u), u), laMatOf(Eye(Float64, k))), laRelTol(dt, n), "UᵀU = I")
	assert.Less(t, laMaxDiff(laMul(laT(v), v), laMatOf(Eye(Float64, k))), laRelTol(dt, n), "VᵀV = I")
}

// svdOuter returns sᵢ·uᵢ·vᵢᵀ, which does not depend on the sign choice.
func svdOuter(u, v laMat, s []float64, i int) []float64 {
	out := make([]float64, u.r*v.r)
	for p := 0; p < u.r; p++ {
		for q := 0; q < v.r; q++ {
			out[p*v.r+q] = s[i] * u.at(p, i) * v.at(q, i)
		}
	}
	return out
}

func TestSVDHandWorked(t *testing.T) {
	for _, dt := range laDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			tol := laTol(dt, 4)
			// AAᵀ = [[17, 8], [8, 17]] has eigenvalues 25 and 9, with
			// eigenvectors (1, ±1)/√2; vᵢ = Aᵀuᵢ/σᵢ.
			a := FromValues(dt, []float64{3, 2, 2, 2, 3, -2}, 2, 3)
			u, s, v, err := SVD(a)
			require.NoError(t, err)
			laAssertClose(t, []float64{5, 3}, s, tol)
			svdCheck(t, dt, laMatOf(a), laMatOf(u), s.Values(), laMatOf(v))
			um, vm, sv := laMatOf(u), laMatOf(v), s.Values()
			// s₁u₁v₁ᵀ = 5·(1,1)/√2·(1,1,0)/√2 and s₂u₂v₂ᵀ = 3·(1,−1)/√2·(1,−1,4)/(3√2).
			assert.InDeltaSlice(t, []float64{2.5, 2.5, 0, 2.5, 2.5, 0}, svdOuter(um, vm, sv, 0), tol)
			assert.InDeltaSlice(t, []float64{0.5, -0.5, 2, -0.5, 0.5, -2}, svdOuter(um, vm, sv, 1), tol)

			// Diagonal with a sign, a zero and a repeated value.
			a = FromValues(dt, []float64{2, 0, 0, 0, 0, -3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}, 4, 4)
			u, s, v, err = SVD(a)
			require.NoError(t, err)
			laAssertClose(t, []float64{3, 2, 2, 0}, s, tol)
			svdCheck(t, dt, laMatOf(a), laMatOf(u), s.Values(), laMatOf(v))

			// Rank one: (1, 2, 2)·(2, 1)ᵀ has σ₁ = 3·√5 and σ₂ = 0.
			a = FromValues(dt, []float64{2, 1, 4, 2, 4, 2}, 3, 2)
			u, s, v, err = SVD(a)
			require.NoError(t, err)
			laAssertClose(t, []float64{3 * math.Sqrt(5), 0}, s, tol*4)
			svdCheck(t, dt, laMatOf(a), laMatOf(u), s.Values(), laMatOf(v))

			// 1×1, zero and empty matrices.
			u, s, v, err = SVD(FromValues(dt, []float64{-4}, 1, 1))
			require.NoError(t, err)
			laAssertClose(t, []float64{4}, s, 0)
			assert.Equal(t, -1.0, u.Item()*v.Item())
			a = New(dt, 3, 2)
			u, s, v, err = SVD(a)
			require.NoError(t, err)
			laAssertClose(t, []float64{0, 0}, s, 0)
			svdCheck(t, dt, laMatOf(a), laMatOf(u), s.Values(), laMatOf(v))
			u, s, v, err = SVD(New(dt, 0, 3))
			require.NoError(t, err)
			assert.Equal(t, []int{0, 0}, u.Shape())
			assert.Equal(t, []int{0}, s.Shape())
			assert.Equal(t, []int{3, 0}, v.Shape())
		})
	}
}

// svdKnown returns Q₁·diag(sigma)·Q₂ᵀ (m×n, m ≥ n) with Householder
// matrices Qᵢ = I − 2wwᵀ/‖w‖², whose singular values are exactly sigma up
// to the rounding of the product.
func svdKnown(m, n int, sigma []float64) laMat {
	house := func(k int, seed float64) laMat {
		w := make([]float64, k)
		var nn float64
		for i := range w {
			w[i] = math.Sin(seed*float64(i+1)) + 0.1
			nn += w[i] * w[i]
		}
		h := laMat{k, k, make([]float64, k*k)}
		for i := 0; i < k; i++ {
			for j := 0; j < k; j++ {
				h.v[i*k+j] = -2 * w[i] * w[j] / nn
			}
			h.v[i*k+i]++
		}
		return h
	}
	d := laMat{m, n, make([]float64, m*n)}
	for i, s := range sigma {
		d.v[i*n+i] = s
	}
	return laMul(laMul(house(m, 1.3), d), laT(house(n, 0.7)))
}

func TestSVDKnownSpectrum(t *testing.T) {
	// Singular values spread over 12 decades: each must come out within
	// about ε·σ₁ (the accuracy of any backward-stable SVD); an
	// eigendecomposition of AᵀA would lose every σ below √ε·σ₁.
	for _, n := range []int{25, 160} { // 160: the blocked bidiagonalisation
		svdKnownSpectrum(t, n)
	}
}

func svdKnownSpectrum(t *testing.T, n int) {
	sigma := make([]float64, n)
	for i := range sigma {
		sigma[i] = math.Pow(10, -12*float64(i)/float64(n-1))
	}
	for _, m := range []int{n, 2*n + 10} { // square, and tall enough for the QR path
		a := svdKnown(m, n, sigma)
		_, s, _, err := SVD(FromValues(Float64, a.v, m, n))
		require.NoError(t, err)
		for i, got := range s.Values() {
			assert.InDelta(t, sigma[i], got, 50*float64(n)*epsT[float64](), "m=%d σ%d", m, i)
		}
		// The largest few are also relatively accurate.
		for i := 0; i < 5; i++ {
			assert.InEpsilon(t, sigma[i], s.Values()[i], 1e-12)
		}
	}
}

func TestSVDRandomShapes(t *testing.T) {
	// 200×170 and its transpose take the blocked bidiagonalisation.
	shapes := [][2]int{{5, 5}, {70, 70}, {300, 40}, {40, 300}, {90, 60}, {33, 65}, {1, 7}, {7, 1}, {200, 170}, {170, 200}}
	for _, dt := range laDTypes {
		for i, sh := range shapes {
			a := laRandom(dt, uint64(100+i), sh[0], sh[1])
			u, s, v, err := SVD(a)
			require.NoError(t, err)
			svdCheck(t, dt, laMatOf(a), laMatOf(u), s.Values(), laMatOf(v))
		}
	}
}

func TestSVDMatchesEighOfGram(t *testing.T) {
	// σᵢ² are the eigenvalues of AᵀA (checked in float64 on a
	// well-conditioned matrix, where squaring loses nothing that matters).
	a := laRandom(Float64, 7, 30, 12)
	_, s, _, err := SVD(a)
	require.NoError(t, err)
	w, _, err := Eigh(MatMulT(a, a, true, false))
	require.NoError(t, err)
	wv, sv := w.Values(), s.Values()
	for i := range sv {
		assert.InDelta(t, wv[len(wv)-1-i], sv[i]*sv[i], 1e-12*wv[len(wv)-1])
	}
}

func TestSVDBatchedAndViews(t *testing.T) {
	a := laRandom(Float64, 11, 2, 3, 6, 4)
	u, s, v, err := SVD(a)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 3, 6, 4}, u.Shape())
	assert.Equal(t, []int{2, 3, 4}, s.Shape())
	assert.Equal(t, []int{2, 3, 4, 4}, v.Shape())
	flat := Reshape(a, 6, 6, 4)
	for b := 0; b < 6; b++ {
		ab := Squeeze(Slice(flat, 0, b, b+1, 1), 0)
		ub, sb, vb, err := SVD(ab.Clone())
		require.NoError(t, err)
		assert.InDeltaSlice(t, sb.Values(), Reshape(s, 6, 4).Values()[b*4:(b+1)*4], 1e-14)
		svdCheck(t, Float64, laMatOf(ab.Clone()), laMatOf(ub), sb.Values(), laMatOf(vb))
	}
	// A transposed view decomposes like its copy, with U and V swapped.
	at := Transpose(Squeeze(Slice(flat, 0, 0, 1, 1), 0)) // 4×6, not contiguous
	u2, s2, v2, err := SVD(at)
	require.NoError(t, err)
	svdCheck(t, Float64, laMatOf(at.Clone()), laMatOf(u2), s2.Values(), laMatOf(v2))
	assert.InDeltaSlice(t, Reshape(s, 6, 4).Values()[:4], s2.Values(), 1e-14)
}

func TestSVDErrors(t *testing.T) {
	for _, dt := range laDTypes {
		_, _, _, err := SVD(FromValues(dt, []float64{1, math.Inf(1), 0, 1}, 2, 2))
		require.Error(t, err)
		assert.True(t, errors.Is(err, ErrNotFinite), "%v", err)
		assert.Contains(t, err.Error(), "tensor.SVD: matrix 0")
		_, _, _, err = SVD(FromValues(dt, []float64{1, 2, 3, 4, 5, 6, 7, math.NaN()}, 2, 2, 2))
		assert.ErrorContains(t, err, "matrix 1")
	}
	func() {
		defer func() {
			e, ok := recover().(*Error)
			require.True(t, ok, "want a *Error panic")
			assert.Equal(t, "need a matrix or a batch of them (..., m, n), got (3,) float64", e.Msg)
		}()
		SVD(New(Float64, 3))
	}()
}

func TestSVDScaleExtremes(t *testing.T) {
	// Entries near the ends of the float64 range: the power-of-two scaling
	// keeps every sum of squares finite.
	for _, scale := range []float64{1e-300, 1e300} {
		a := laScale(FromValues(Float64, []float64{3, 2, 2, 2, 3, -2}, 2, 3), scale)
		_, s, _, err := SVD(a)
		require.NoError(t, err)
		assert.InEpsilon(t, 5*scale, s.Values()[0], 1e-14)
		assert.InEpsilon(t, 3*scale, s.Values()[1], 1e-14)
	}
}

// TestSVDSignConvention checks that every right singular vector has its
// entry of largest magnitude positive (the convention flipToV keeps, with
// the left vector flipped alongside), on tall, wide and square matrices.
func TestSVDSignConvention(t *testing.T) {
	for i, sh := range [][2]int{{40, 40}, {70, 30}, {30, 70}, {300, 260}} {
		a := laRandom(Float64, uint64(700+i), sh[0], sh[1])
		u, s, v, err := SVD(a)
		require.NoError(t, err)
		svdCheck(t, Float64, laMatOf(a), laMatOf(u), s.Values(), laMatOf(v))
		k := v.Shape()[1]
		vv := v.Values()
		for r := 0; r < k; r++ {
			big := 0.0
			for i := 0; i < v.Shape()[0]; i++ {
				if x := vv[i*k+r]; math.Abs(x) > math.Abs(big) {
					big = x
				}
			}
			assert.Positive(t, big, "%v: column %d of v", sh, r)
		}
	}
}

// TestSVDRankDeficientBlocked runs the blocked bidiagonalisation into
// reflectors with τ = 0: a 220×150 matrix with 40 zero columns, 10
// columns repeated and a zero row has rank 100, so exactly 50 singular
// values vanish, and U·S·Vᵀ must still rebuild it.
func TestSVDRankDeficientBlocked(t *testing.T) {
	m, n := 220, 150
	v := laRandom(Float64, 8, m, n).Values()
	for i := 0; i < m; i++ {
		for j := 40; j < 80; j++ {
			v[i*n+j] = 0
		}
		for j := 100; j < 110; j++ {
			v[i*n+j] = v[i*n+j-10]
		}
	}
	for j := 0; j < n; j++ {
		v[5*n+j] = 0
	}
	a := FromValues(Float64, v, m, n)
	u, s, vt, err := SVD(a)
	require.NoError(t, err)
	svdCheck(t, Float64, laMatOf(a), laMatOf(u), s.Values(), laMatOf(vt))
	sv := s.Values()
	assert.Greater(t, sv[99], 1e-3*sv[0], "σ₉₉ of a rank-100 matrix")
	for i := 100; i < n; i++ {
		assert.Less(t, sv[i], 1e-13*sv[0], "σ%d of a rank-100 matrix", i)
	}
	// A diagonal matrix: every column and row below and right of the
	// diagonal is exactly zero at every step, so every τ is 0. Its
	// singular values are the |dᵢ| in decreasing order.
	d := make([]float64, n*n)
	for i := 0; i < n; i++ {
		d[i*n+i] = float64((i*37)%n+1) * math.Pow(-1, float64(i))
	}
	_, s, _, err = SVD(FromValues(Float64, d, n, n))
	require.NoError(t, err)
	for i, got := range s.Values() {
		assert.Equal(t, float64(n-i), got, "σ%d of diag(±1…±%d)", i, n)
	}
}

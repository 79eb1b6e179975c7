package tensor

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// qrCheck verifies Q·R = A, QᵀQ = I and R upper triangular with a
// non-negative diagonal for one m×n matrix.
func qrCheck(t *testing.T, dt DType, a, q, r laMat) {
	t.Helper()
	k := min(a.r, a.c)
	require.Equal(t, []int{a.r, k, k, a.c}, []int{q.r, q.c, r.r, r.c})
	for i := 0; i < k; i++ {
		require.GreaterOrEqual(t, r.at(i, i), 0.0, "R[%d][%d] negative", i, i)
		for j := 0; j < i; j++ {
			require.Equal(t, 0.0, r.at(i, j), "R[%d][%d] below the diagonal", i, j)
		}
	}
	var scale float64
	for _, x := range a.v {
		scale = math.Max(scale, math.Abs(x))
	}
	scale = math.Max(scale, 1e-300)
	n := max(a.r, a.c)
	assert.Less(t, laMaxDiff(laMul(q, r), a)/scale, laRelTol(dt, n), "reconstruction")
	assert.Less(t, laMaxDiff(laMul(laT(q), q), laMatOf(Eye(Float64, k))), laRelTol(dt, n), "QᵀQ = I")
}

func TestQRHandWorked(t *testing.T) {
	for _, dt := range laDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			tol := laTol(dt, 2)
			// Column 1 is 5·(0.6, 0.8); column 2 has component
			// (0.6·1 + 0.8·2) = 2.2 along it and (−0.8·1 + 0.6·2) = 0.4 across.
			a := FromValues(dt, []float64{3, 1, 4, 2}, 2, 2)
			q, r, err := QR(a)
			require.NoError(t, err)
			laAssertClose(t, []float64{0.6, -0.8, 0.8, 0.6}, q, tol)
			laAssertClose(t, []float64{5, 2.2, 0, 0.4}, r, tol)

			// A negative leading entry: the sign convention flips it.
			a = FromValues(dt, []float64{-2, 1, 0, 3}, 2, 2)
			q, r, err = QR(a)
			require.NoError(t, err)
			laAssertClose(t, []float64{-1, 0, 0, 1}, q, tol)
			laAssertClose(t, []float64{2, -1, 0, 3}, r, tol)

			// Wide: k = m = 1, R is the row scaled by the sign of its lead.
			q, r, err = QR(FromValues(dt, []float64{-3, 4, 5}, 1, 3))
			require.NoError(t, err)
			laAssertClose(t, []float64{-1}, q, 0)
			laAssertClose(t, []float64{3, -4, -5}, r, 0)

			// A zero first column needs no reflection (q₁ = e₁), so R's
			// second column is (1, ‖(2, 2)‖); Q is still orthonormal.
			a = FromValues(dt, []float64{0, 1, 0, 2, 0, 2}, 3, 2)
			q, r, err = QR(a)
			require.NoError(t, err)
			qrCheck(t, dt, laMatOf(a), laMatOf(q), laMatOf(r))
			laAssertClose(t, []float64{0, 1, 0, 2 * math.Sqrt2}, r, tol)
		})
	}
}

func TestQRRandomShapes(t *testing.T) {
	shapes := [][2]int{{1, 1}, {6, 6}, {100, 100}, {300, 50}, {50, 300}, {65, 33}, {129, 97}}
	for _, dt := range laDTypes {
		for i, sh := range shapes {
			a := laRandom(dt, uint64(200+i), sh[0], sh[1])
			q, r, err := QR(a)
			require.NoError(t, err)
			qrCheck(t, dt, laMatOf(a), laMatOf(q), laMatOf(r))
		}
	}
}

func TestQRBatchedAndErrors(t *testing.T) {
	a := laRandom(Float64, 3, 3, 5, 4)
	q, r, err := QR(a)
	require.NoError(t, err)
	assert.Equal(t, []int{3, 5, 4}, q.Shape())
	assert.Equal(t, []int{3, 4, 4}, r.Shape())
	for b := 0; b < 3; b++ {
		ab := Squeeze(Slice(a, 0, b, b+1, 1), 0).Clone()
		qb, rb, err := QR(ab)
		require.NoError(t, err)
		assert.InDeltaSlice(t, qb.Values(), Squeeze(Slice(q, 0, b, b+1, 1), 0).Values(), 1e-15)
		assert.InDeltaSlice(t, rb.Values(), Squeeze(Slice(r, 0, b, b+1, 1), 0).Values(), 1e-15)
	}
	// A transposed view.
	at := Transpose(laRandom(Float64, 4, 3, 7))
	q, r, err = QR(at)
	require.NoError(t, err)
	qrCheck(t, Float64, laMatOf(at.Clone()), laMatOf(q), laMatOf(r))

	_, _, err = QR(FromValues(Float64, []float64{1, math.NaN()}, 2, 1))
	assert.True(t, errors.Is(err, ErrNotFinite), "%v", err)
	assert.Panics(t, func() { QR(New(Float64, 4)) })
}

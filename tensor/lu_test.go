package tensor

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// laBackwardErr is the residual of A·X = B relative to ‖A‖∞·‖X‖max, the
// quantity a backward-stable solver keeps at a small multiple of n·eps.
func laBackwardErr(a, x, b laMat) float64 {
	normA, normX := 0.0, 0.0
	for i := 0; i < a.r; i++ {
		s := 0.0
		for j := 0; j < a.c; j++ {
			s += math.Abs(a.at(i, j))
		}
		normA = math.Max(normA, s)
	}
	for _, v := range x.v {
		normX = math.Max(normX, math.Abs(v))
	}
	return laMaxDiff(laMul(a, x), b) / (normA * normX)
}

func TestSolveResiduals(t *testing.T) {
	for _, n := range []int{1, 2, 5, 100, 150} {
		for _, dt := range laDTypes {
			t.Run(dt.String()+"/n"+fmt.Sprint(n), func(t *testing.T) {
				// A random matrix needs pivoting; the shift keeps it from
				// being nearly singular.
				a := Add(laRandom(dt, uint64(n), n, n), laScale(Eye(dt, n), 3))
				b := laRandom(dt, 2, n, 3)
				x, err := Solve(a, b)
				require.NoError(t, err)
				require.Equal(t, []int{n, 3}, x.Shape())
				assert.Less(t, laBackwardErr(laMatOf(a), laMatOf(x), laMatOf(b)), laRelTol(dt, n)/10)

				// One right-hand side as a vector.
				v := laRandom(dt, 3, n)
				xv, err := Solve(a, v)
				require.NoError(t, err)
				require.Equal(t, []int{n}, xv.Shape())
				assert.Less(t, laBackwardErr(laMatOf(a), laMat{n, 1, xv.Values()}, laMat{n, 1, v.Values()}), laRelTol(dt, n)/10)
			})
		}
	}
}

// laScale scales t by s (a local helper so these tests do not depend on
// the elementwise work in progress).
func laScale(t *Tensor, s float64) *Tensor {
	return Mul(t, Full(t.DType(), s))
}

func TestSolvePivotingAndBatch(t *testing.T) {
	for _, dt := range laDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			// [[0,1],[1,0]]·x = [2,3] needs a row interchange: x = [3,2].
			x, err := Solve(FromValues(dt, []float64{0, 1, 1, 0}, 2, 2), FromValues(dt, []float64{2, 3}))
			require.NoError(t, err)
			assert.Equal(t, []float64{3, 2}, x.Values())

			// A batch of two systems with one shared right-hand side.
			a := FromValues(dt, []float64{2, 0, 0, 4, 1, 1, 0, 1}, 2, 2, 2)
			x, err = Solve(a, FromValues(dt, []float64{2, 4, 3, 1}, 2, 2))
			require.NoError(t, err)
			require.Equal(t, []int{2, 2, 2}, x.Shape())
			// diag(2,4)⁻¹·[[2,4],[3,1]] = [[1,2],[0.75,0.25]];
			// [[1,1],[0,1]]⁻¹·[[2,4],[3,1]] = [[-1,3],[3,1]].
			assert.Equal(t, []float64{1, 2, 0.75, 0.25, -1, 3, 3, 1}, x.Values())

			// A batch large enough to be factored and solved in parallel,
			// with triangular solves on its factors' lower triangles too.
			const nb, n = 130, 16
			ab := Add(laRandom(dt, 7, nb, n, n), laScale(Eye(dt, n), 3))
			bb := laRandom(dt, 8, nb, n, n)
			x, err = Solve(ab, bb)
			require.NoError(t, err)
			tx := TriSolve(ab, bb, true, false)
			av, bv, xv, tv := ab.Values(), bb.Values(), x.Values(), tx.Values()
			for i := 0; i < nb; i++ {
				ai := laMat{n, n, av[i*n*n : (i+1)*n*n]}
				bi := laMat{n, n, bv[i*n*n : (i+1)*n*n]}
				assert.Less(t, laBackwardErr(ai, laMat{n, n, xv[i*n*n : (i+1)*n*n]}, bi), laRelTol(dt, n)/10, "Solve %d", i)
				li := laMat{n, n, append([]float64{}, ai.v...)}
				for r := 0; r < n; r++ {
					for c := r + 1; c < n; c++ {
						li.v[r*n+c] = 0
					}
				}
				assert.Less(t, laMaxDiff(laMul(li, laMat{n, n, tv[i*n*n : (i+1)*n*n]}), bi), laRelTol(dt, n)*10, "TriSolve %d", i)
			}
		})
	}
}

func TestSolveSingular(t *testing.T) {
	cases := []struct {
		name  string
		a     []float64
		n     int
		pivot string
	}{
		{"rank one", []float64{1, 2, 2, 4}, 2, "pivot 1"},
		{"zero", []float64{0, 0, 0, 0}, 2, "pivot 0"},
		{"dependent rows", []float64{1, 2, 3, 2, 4, 6, 1, 0, 1}, 3, "pivot 2"},
	}
	for _, tc := range cases {
		for _, dt := range laDTypes {
			t.Run(tc.name+"/"+dt.String(), func(t *testing.T) {
				a := FromValues(dt, tc.a, tc.n, tc.n)
				x, err := Solve(a, Ones(dt, tc.n))
				require.Nil(t, x)
				require.ErrorIs(t, err, ErrSingular)
				assert.Contains(t, err.Error(), tc.pivot)
				_, err = Inverse(a)
				require.ErrorIs(t, err, ErrSingular)
				d, err := Det(a)
				require.NoError(t, err)
				assert.Equal(t, 0.0, d.Item())
				s, la, err := SlogDet(a)
				require.NoError(t, err)
				assert.Equal(t, 0.0, s.Item())
				assert.True(t, math.IsInf(la.Item(), -1))
			})
		}
	}
	for _, dt := range laDTypes {
		_, err := Solve(FromValues(dt, []float64{1, math.NaN(), 0, 1}, 2, 2), Ones(dt, 2))
		require.ErrorIs(t, err, ErrNotFinite)
		_, err = Det(FromValues(dt, []float64{1, math.Inf(1), 0, 1}, 2, 2))
		require.ErrorIs(t, err, ErrNotFinite)
		requireOpPanics(t, "Solve", func() { _, _ = Solve(New(dt, 3, 3), New(dt, 2)) }, "(3, 3)", "(2,)")
		requireOpPanics(t, "Solve", func() { _, _ = Solve(New(dt, 3, 3), New(Float32+Float64-dt, 3)) }, "float32", "float64")
		requireOpPanics(t, "Det", func() { _, _ = Det(New(dt, 2, 3)) }, "(2, 3)")
		requireOpPanics(t, "Inverse", func() { _, _ = Inverse(New(dt, 4)) }, "(4,)")
	}
}

func TestInverse(t *testing.T) {
	for _, n := range []int{1, 4, 70} {
		for _, dt := range laDTypes {
			t.Run(dt.String()+"/n"+fmt.Sprint(n), func(t *testing.T) {
				a := Add(laRandom(dt, uint64(n), n, n), laScale(Eye(dt, n), 3))
				inv, err := Inverse(a)
				require.NoError(t, err)
				id := laMatOf(Eye(Float64, n))
				assert.Less(t, laMaxDiff(laMul(laMatOf(a), laMatOf(inv)), id), laRelTol(dt, n))
				assert.Less(t, laMaxDiff(laMul(laMatOf(inv), laMatOf(a)), id), laRelTol(dt, n))
			})
		}
	}
	for _, dt := range laDTypes {
		// [[1,2],[3,4]]⁻¹ = [[-2,1],[1.5,-0.5]], batched with 2I.
		inv, err := Inverse(FromValues(dt, []float64{1, 2, 3, 4, 2, 0, 0, 2}, 2, 2, 2))
		require.NoError(t, err)
		laAssertClose(t, []float64{-2, 1, 1.5, -0.5, 0.5, 0, 0, 0.5}, inv, laTol(dt, 2))
	}
}

func TestDetAndSlogDet(t *testing.T) {
	cases := []struct {
		name  string
		a     []float64
		n     int
		det   float64
		sign  float64
		logAb float64
	}{
		{"2x2", []float64{1, 2, 3, 4}, 2, -2, -1, math.Log(2)},
		{"1x1", []float64{-5}, 1, -5, -1, math.Log(5)},
		{"tridiagonal", []float64{2, -1, 0, -1, 2, -1, 0, -1, 2}, 3, 4, 1, math.Log(4)},
		{"permutation", []float64{0, 1, 0, 0, 0, 1, 1, 0, 0}, 3, 1, 1, 0},
		{"swap", []float64{0, 1, 1, 0}, 2, -1, -1, 0},
		{"empty", nil, 0, 1, 1, 0},
	}
	for _, tc := range cases {
		for _, dt := range laDTypes {
			t.Run(tc.name+"/"+dt.String(), func(t *testing.T) {
				a := FromValues(dt, tc.a, tc.n, tc.n)
				d, err := Det(a)
				require.NoError(t, err)
				require.Equal(t, []int{}, d.Shape())
				assert.InDelta(t, tc.det, d.Item(), laTol(dt, tc.n)*10)
				s, la, err := SlogDet(a)
				require.NoError(t, err)
				assert.Equal(t, tc.sign, s.Item())
				assert.InDelta(t, tc.logAb, la.Item(), laTol(dt, tc.n)*10)
			})
		}
	}
	for _, dt := range laDTypes {
		// A batch, and a determinant (10^400) that overflows Det but not SlogDet.
		d, err := Det(FromValues(dt, []float64{1, 2, 3, 4, 2, 0, 0, 3}, 2, 2, 2))
		require.NoError(t, err)
		laAssertClose(t, []float64{-2, 6}, d, laTol(dt, 2)*10)
		const n = 200
		big := laScale(Eye(dt, n), 100)
		s, la, err := SlogDet(big)
		require.NoError(t, err)
		assert.Equal(t, 1.0, s.Item())
		assert.InDelta(t, n*math.Log(100), la.Item(), 1e-3*n)
	}
}

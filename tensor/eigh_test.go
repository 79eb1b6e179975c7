package tensor

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEighHandWorked(t *testing.T) {
	for _, dt := range laDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			// [[2,1],[1,2]]: eigenvalues 1 and 3, eigenvectors (1,−1)/√2 and
			// (1,1)/√2 up to sign. The upper triangle is ignored.
			w, v, err := Eigh(FromValues(dt, []float64{2, math.NaN(), 1, 2}, 2, 2))
			require.NoError(t, err)
			laAssertClose(t, []float64{1, 3}, w, laTol(dt, 2))
			h := 1 / math.Sqrt2
			vm := laMatOf(v)
			assert.InDelta(t, 0, vm.at(0, 0)+vm.at(1, 0), laTol(dt, 2))
			assert.InDelta(t, h, math.Abs(vm.at(0, 0)), laTol(dt, 2))
			assert.InDelta(t, 0, vm.at(0, 1)-vm.at(1, 1), laTol(dt, 2))
			assert.InDelta(t, h, math.Abs(vm.at(0, 1)), laTol(dt, 2))

			// Diagonal input with a repeated eigenvalue, and 1×1, and 0×0.
			w, _, err = Eigh(FromValues(dt, []float64{3, 0, 0, 0, -1, 0, 0, 0, 3}, 3, 3))
			require.NoError(t, err)
			assert.Equal(t, []float64{-1, 3, 3}, w.Values())
			w, v, err = Eigh(FromValues(dt, []float64{7}, 1, 1))
			require.NoError(t, err)
			assert.Equal(t, []float64{7}, w.Values())
			assert.Equal(t, []float64{1}, v.Values())
			// Scaling must not overflow or underflow intermediate sums.
			for _, scale := range []float64{1e30, 1e-30} {
				w, _, err = Eigh(FromValues(dt, []float64{2 * scale, 0, scale, 2 * scale}, 2, 2))
				require.NoError(t, err)
				assert.InDelta(t, 1, w.Values()[0]/scale, laTol(dt, 2))
				assert.InDelta(t, 3, w.Values()[1]/scale, laTol(dt, 2))
			}

			// The zero matrix: every eigenvalue 0, any orthonormal basis.
			w, v, err = Eigh(New(dt, 3, 3))
			require.NoError(t, err)
			assert.Equal(t, []float64{0, 0, 0}, w.Values())
			assert.Less(t, laMaxDiff(laMul(laT(laMatOf(v)), laMatOf(v)), laMatOf(Eye(Float64, 3))), laTol(dt, 3))
			w, v, err = Eigh(New(dt, 0, 0))
			require.NoError(t, err)
			assert.Equal(t, []int{0}, w.Shape())
			assert.Equal(t, []int{0, 0}, v.Shape())
		})
	}
}

// laSecondDifference returns the n×n matrix tridiag(−1, 2, −1), whose
// eigenvalues are 2 − 2·cos(kπ/(n+1)), k = 1..n, and determinant n+1.
func laSecondDifference(dt DType, n int) *Tensor {
	t := New(dt, n, n)
	for i := 0; i < n; i++ {
		t.SetAt(2, i, i)
		if i > 0 {
			t.SetAt(-1, i, i-1)
			t.SetAt(-1, i-1, i)
		}
	}
	return t
}

func TestEighKnownSpectrum(t *testing.T) {
	const n = 40
	want := make([]float64, n)
	for k := 1; k <= n; k++ {
		want[k-1] = 2 - 2*math.Cos(float64(k)*math.Pi/(n+1))
	}
	for _, dt := range laDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			a := laSecondDifference(dt, n)
			w, v, err := Eigh(a)
			require.NoError(t, err)
			laAssertClose(t, want, w, laTol(dt, n))
			laCheckEigh(t, dt, laMatOf(a), w.Values(), laMatOf(v))
			d, err := Det(a)
			require.NoError(t, err)
			assert.InDelta(t, n+1, d.Item(), laTol(dt, n)*(n+1))
		})
	}
}

// laSymmetric returns a random symmetric n×n matrix.
func laSymmetric(dt DType, seed uint64, n int) *Tensor {
	m := laRandom(Float64, seed, n, n).Values()
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			m[j*n+i] = m[i*n+j]
		}
	}
	return FromValues(dt, m, n, n)
}

// laCheckEigh verifies V·diag(w)·Vᵀ = A, VᵀV = I and ascending w.
func laCheckEigh(t *testing.T, dt DType, a laMat, w []float64, v laMat) {
	t.Helper()
	n := a.r
	for i := 1; i < n; i++ {
		require.LessOrEqual(t, w[i-1], w[i], "eigenvalues not ascending")
	}
	vd := laMat{n, n, append([]float64{}, v.v...)}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			vd.v[i*n+j] *= w[j]
		}
	}
	scale := math.Max(math.Abs(w[0]), math.Abs(w[n-1]))
	assert.Less(t, laMaxDiff(laMul(vd, laT(v)), a)/scale, laRelTol(dt, n), "reconstruction")
	assert.Less(t, laMaxDiff(laMul(laT(v), v), laMatOf(Eye(Float64, n))), laRelTol(dt, n), "orthonormality")
}

func TestEighRandomSymmetric(t *testing.T) {
	for _, n := range []int{3, 50, 120} {
		for _, dt := range laDTypes {
			t.Run(dt.String()+"/n"+fmt.Sprint(n), func(t *testing.T) {
				a := laSymmetric(dt, uint64(n), n)
				w, v, err := Eigh(a)
				require.NoError(t, err)
				require.Equal(t, []int{n}, w.Shape())
				require.Equal(t, []int{n, n}, v.Shape())
				laCheckEigh(t, dt, laMatOf(a), w.Values(), laMatOf(v))
			})
		}
	}
}

func TestEighBatchedAndErrors(t *testing.T) {
	for _, dt := range laDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			const n = 6
			a1, a2 := laSymmetric(dt, 1, n), laSPD(dt, 2, n)
			a := FromValues(dt, append(a1.Values(), a2.Values()...), 2, n, n)
			w, v, err := Eigh(a)
			require.NoError(t, err)
			require.Equal(t, []int{2, n}, w.Shape())
			require.Equal(t, []int{2, n, n}, v.Shape())
			wv, vv := w.Values(), v.Values()
			for i, ai := range []*Tensor{a1, a2} {
				laCheckEigh(t, dt, laMatOf(ai), wv[i*n:(i+1)*n], laMat{n, n, vv[i*n*n : (i+1)*n*n]})
			}
			// A batch large enough to be spread over goroutines.
			const nb = 150
			vals := []float64{}
			mats := make([]*Tensor, nb)
			for i := range mats {
				mats[i] = laSymmetric(dt, uint64(100+i), n)
				vals = append(vals, mats[i].Values()...)
			}
			w3, v3, err := Eigh(FromValues(dt, vals, nb, n, n))
			require.NoError(t, err)
			wv3, vv3 := w3.Values(), v3.Values()
			for i, ai := range mats {
				laCheckEigh(t, dt, laMatOf(ai), wv3[i*n:(i+1)*n], laMat{n, n, vv3[i*n*n : (i+1)*n*n]})
			}

			// A transposed view is read through its strides.
			w2, _, err := Eigh(laTransposeLast(a1))
			require.NoError(t, err)
			laAssertClose(t, wv[:n], w2, laTol(dt, n)*10)

			_, _, err = Eigh(FromValues(dt, []float64{1, 0, math.NaN(), 1}, 2, 2))
			require.ErrorIs(t, err, ErrNotFinite)
			requireOpPanics(t, "Eigh", func() { _, _, _ = Eigh(New(dt, 2, 3)) }, "(2, 3)")
		})
	}
}

package tensor

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// eighHard builds the symmetric test matrices the blocked reduction must
// handle: random, graded over many decades, Wilkinson's W⁺ (pairs of nearly
// equal eigenvalues), an identity block beside random ones, and
// Q·diag(λ)·Qᵀ with a few distinct λ each repeated many times.
func eighHard(kind string, n int) []float64 {
	a := make([]float64, n*n)
	switch kind {
	case "random":
		copy(a, laSymmetric(Float64, uint64(n)+7, n).Values())
	case "graded":
		r := laSymmetric(Float64, uint64(n)+11, n).Values()
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				a[i*n+j] = r[i*n+j] * math.Pow(10, -6*float64(i+j)/float64(n))
			}
		}
	case "wilkinson":
		m := float64(n-1) / 2
		for i := 0; i < n; i++ {
			a[i*n+i] = math.Abs(float64(i) - m)
			if i+1 < n {
				a[i*n+i+1], a[(i+1)*n+i] = 1, 1
			}
		}
	case "identityblock":
		r := laSymmetric(Float64, uint64(n)+13, n).Values()
		h := n / 2
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				switch {
				case i < h && j < h:
					if i == j {
						a[i*n+j] = 1
					}
				case i >= h && j >= h:
					a[i*n+j] = r[i*n+j]
				}
			}
		}
	case "repeated":
		// Q from the QR of a random matrix; λ cycles through −1, 2, 2+1e-9, 5.
		q, _, _ := QR(laRandom(Float64, uint64(n)+17, n, n))
		qv := q.Values()
		lam := []float64{-1, 2, 2 + 1e-9, 5}
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				var s float64
				for k := 0; k < n; k++ {
					s += qv[i*n+k] * lam[k%4] * qv[j*n+k]
				}
				a[i*n+j] = s
			}
		}
	}
	return a
}

// TestEighBlockedHard checks ‖AV − VΛ‖/(n‖A‖) and ‖VᵀV − I‖ on sizes that
// take the unblocked and the blocked reductions (with full and partial
// panels), and the eigenvalues of the blocked path against tred2's.
func TestEighBlockedHard(t *testing.T) {
	for _, kind := range []string{"random", "graded", "wilkinson", "identityblock", "repeated"} {
		for _, n := range []int{1, 2, 21, 63, 64, 65, 97, 160} {
			for _, dt := range laDTypes {
				t.Run(fmt.Sprintf("%s/%s/n%d", kind, dt, n), func(t *testing.T) {
					av := eighHard(kind, n)
					w, v, err := Eigh(FromValues(dt, av, n, n))
					require.NoError(t, err)
					wv, vv := w.Values(), v.Values()
					var anorm float64
					for _, x := range av {
						anorm = math.Max(anorm, math.Abs(x))
					}
					if anorm == 0 {
						anorm = 1
					}
					var res, orth float64
					for i := 0; i < n; i++ {
						for j := 0; j < n; j++ {
							var s, o float64
							for k := 0; k < n; k++ {
								s += av[i*n+k] * vv[k*n+j]
								o += vv[k*n+i] * vv[k*n+j]
							}
							res = math.Max(res, math.Abs(s-vv[i*n+j]*wv[j]))
							if i == j {
								o--
							}
							orth = math.Max(orth, math.Abs(o))
						}
					}
					eps := 1e-15
					if dt == Float32 {
						eps = 1e-6
					}
					assert.Less(t, res/(float64(n)*anorm), 10*eps, "residual")
					assert.Less(t, orth, 10*eps*float64(n), "orthogonality")
					for i := 1; i < n; i++ {
						require.LessOrEqual(t, wv[i-1], wv[i])
					}
					// Against the unblocked reduction, run directly.
					if dt == Float64 && n > 1 {
						z := make([]float64, n*n)
						for i := 0; i < n; i++ {
							copy(z[i*n:i*n+i+1], av[i*n:i*n+i+1])
						}
						d, e := make([]float64, n), make([]float64, n)
						tred2(n, z, d, e)
						zt := make([]float64, n*n)
						require.True(t, tqli(n, d, e, zt))
						sortFloat64s(d)
						for i := range d {
							assert.InDelta(t, d[i], wv[i], 1e-13*float64(n)*anorm)
						}
					}
				})
			}
		}
	}
}

func sortFloat64s(x []float64) {
	for i := 1; i < len(x); i++ {
		for j := i; j > 0 && x[j] < x[j-1]; j-- {
			x[j], x[j-1] = x[j-1], x[j]
		}
	}
}

// TestEighWilkinson21 checks the largest eigenvalue of W21⁺ against its
// published value (Wilkinson, The Algebraic Eigenvalue Problem, p. 308).
func TestEighWilkinson21(t *testing.T) {
	w, _, err := Eigh(FromValues(Float64, eighHard("wilkinson", 21), 21, 21))
	require.NoError(t, err)
	wv := w.Values()
	assert.InDelta(t, 10.746194182903393, wv[20], 1e-12)
	assert.InDelta(t, 10.746194182903322, wv[19], 1e-12)
}

func BenchmarkEigh(b *testing.B) {
	for _, n := range []int{300, 1000} {
		a := laSymmetric(Float64, 3, n)
		b.Run(fmt.Sprintf("float64/n%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, _, err := Eigh(a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestNorm2 checks the reflectors' norm against math.Hypot folded over the
// entries, on vectors whose plain sum of squares is fine, overflows,
// underflows or is subnormal, in both dtypes.
func TestNorm2(t *testing.T) {
	hyp := func(x []float64) float64 {
		h := 0.0
		for _, y := range x {
			h = math.Hypot(h, y)
		}
		return h
	}
	for _, scale := range []float64{1, 1e-3, 1e160, 1e-160, 1e-300, 1e300} {
		x := make([]float64, 37)
		for i := range x {
			x[i] = scale * (float64(i%7) - 2.5) / 3
		}
		want := hyp(x)
		if got := norm2(x); math.Abs(got-want) > 1e-14*want {
			t.Errorf("float64 scale %g: norm2 = %g, want %g", scale, got, want)
		}
	}
	for _, scale := range []float64{1, 1e25, 1e-25, 1e-40, 1e37} {
		x := make([]float32, 37)
		x64 := make([]float64, 37)
		for i := range x {
			x[i] = float32(scale * (float64(i%7) - 2.5) / 3)
			x64[i] = float64(x[i])
		}
		want := hyp(x64)
		if got := float64(norm2(x)); math.Abs(got-want) > 1e-6*want {
			t.Errorf("float32 scale %g: norm2 = %g, want %g", scale, got, want)
		}
	}
	if got := norm2([]float64{0, 0, 0}); got != 0 {
		t.Errorf("norm2 of zeros = %g", got)
	}
	if got := norm2([]float64{1, math.Inf(-1)}); !math.IsInf(got, 1) {
		t.Errorf("norm2 with an infinite entry = %g, want +Inf", got)
	}
	if got := norm2([]float64{1, math.NaN()}); !math.IsNaN(got) {
		t.Errorf("norm2 with a NaN = %g, want NaN", got)
	}
}

// TestEighSameBitsAnyThreads checks that the reduction's split loops (the
// symmetric product's halves, the rank-2k update's two parts) give the
// bits of one goroutine.
func TestEighSameBitsAnyThreads(t *testing.T) {
	a := laRandom(Float64, 36, 300, 300)
	a = Add(a, Transpose(a))
	assertSameBitsAnyProcs(t, func() []*Tensor {
		w, v, err := Eigh(a)
		require.NoError(t, err)
		return []*Tensor{w, v}
	})
}

package tensor

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSVDLarge covers the orders at which SVD reduces in panels and
// diagonalises by divide and conquer: random matrices of both dtypes,
// square, tall (QR first) and wide, and known spectra that are graded
// (ten decades) or repeated (three values, each many times), which the
// divide and conquer deflates. Reconstruction and orthogonality are held
// to 1e-13·n (float64).
func TestSVDLarge(t *testing.T) {
	for _, dt := range laDTypes {
		for i, sh := range [][2]int{{150, 150}, {130, 260}, {400, 130}, {97, 203}} {
			t.Run(fmt.Sprintf("%s/%dx%d", dt, sh[0], sh[1]), func(t *testing.T) {
				a := laRandom(dt, uint64(300+i), sh[0], sh[1])
				u, s, v, err := SVD(a)
				require.NoError(t, err)
				svdCheck(t, dt, laMatOf(a), laMatOf(u), s.Values(), laMatOf(v))
			})
		}
	}
	const n = 160
	spectra := map[string]func(i int) float64{
		"graded":   func(i int) float64 { return math.Pow(10, -10*float64(i)/(n-1)) },
		"repeated": func(i int) float64 { return []float64{3, 2, 1}[i*3/n] },
	}
	for name, f := range spectra {
		for _, m := range []int{n, 300} {
			t.Run(fmt.Sprintf("%s/%dx%d", name, m, n), func(t *testing.T) {
				sigma := make([]float64, n)
				for i := range sigma {
					sigma[i] = f(i)
				}
				a := svdKnown(m, n, sigma)
				u, s, v, err := SVD(FromValues(Float64, a.v, m, n))
				require.NoError(t, err)
				svdCheck(t, Float64, a, laMatOf(u), s.Values(), laMatOf(v))
				for i, got := range s.Values() {
					assert.InDelta(t, sigma[i], got, 50*n*epsT[float64](), "σ%d", i)
				}
			})
		}
	}
}

// TestSVDLargeBatched checks that a batch at the blocked orders gives, per
// matrix, the decomposition of that matrix alone (the matrices run on
// goroutines of their own, each with goroutines inside).
func TestSVDLargeBatched(t *testing.T) {
	for _, dt := range laDTypes {
		a := laRandom(dt, 17, 2, 130, 110)
		u, s, v, err := SVD(a)
		require.NoError(t, err)
		for b := 0; b < 2; b++ {
			ab := Squeeze(Slice(a, 0, b, b+1, 1), 0).Clone()
			ub, sb, vb, err := SVD(ab)
			require.NoError(t, err)
			assert.Equal(t, sb.Values(), Squeeze(Slice(s, 0, b, b+1, 1), 0).Clone().Values(), "%s matrix %d", dt, b)
			assert.Equal(t, ub.Values(), Squeeze(Slice(u, 0, b, b+1, 1), 0).Clone().Values())
			assert.Equal(t, vb.Values(), Squeeze(Slice(v, 0, b, b+1, 1), 0).Clone().Values())
			svdCheck(t, dt, laMatOf(ab), laMatOf(ub), sb.Values(), laMatOf(vb))
		}
	}
}

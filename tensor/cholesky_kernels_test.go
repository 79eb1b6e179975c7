package tensor

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// The unblocked kernels at the leaves of the Cholesky factorisation and
// its reverse sweep (four rows at a time) against the textbook loops,
// entry by entry, at every order up to past their block sizes and with a
// leading dimension longer than a row.

// kernelSPD returns an n×n symmetric positive definite matrix with leading
// dimension lda: MᵀM/n + I for M with entries in [−1, 1).
func kernelSPD(n, lda int, seed uint64) []float64 {
	m := laRandom(Float64, seed, n, n).Float64s()
	a := make([]float64, n*lda)
	for i := range n {
		for j := range n {
			s := 0.0
			for k := range n {
				s += m[k*n+i] * m[k*n+j]
			}
			a[i*lda+j] = s / float64(n)
		}
		a[i*lda+i]++
	}
	return a
}

// banachiewicz is the Cholesky–Banachiewicz algorithm on the lower
// triangle of a, in place (Golub and Van Loan, algorithm 4.2.1, by rows).
func banachiewicz(n, lda int, a []float64) {
	for i := range n {
		for j := 0; j <= i; j++ {
			s := a[i*lda+j]
			for k := range j {
				s -= a[i*lda+k] * a[j*lda+k]
			}
			if i == j {
				a[i*lda+i] = math.Sqrt(s)
			} else {
				a[i*lda+j] = s / a[j*lda+j]
			}
		}
	}
}

func TestPotf2AgainstBanachiewicz(t *testing.T) {
	for n := 1; n <= 2*cholBlock+3; n++ {
		lda := n + 3
		want := kernelSPD(n, lda, uint64(n))
		got := append([]float64(nil), want...)
		banachiewicz(n, lda, want)
		_, _, ok := potf2(n, got, lda)
		require.True(t, ok, "n=%d", n)
		for i := range n {
			for j := 0; j <= i; j++ {
				require.InDelta(t, want[i*lda+j], got[i*lda+j], 1e-13*math.Max(1, math.Abs(want[i*lda+j])), "n=%d L[%d][%d]", n, i, j)
			}
			for j := i + 1; j < lda; j++ {
				require.Equal(t, want[i*lda+j], got[i*lda+j], "n=%d: entry (%d, %d) above the diagonal or past the row changed", n, i, j)
			}
		}
		// float32 from the same matrix, to float32's rounding.
		a32 := make([]float32, len(got))
		for i, v := range kernelSPD(n, lda, uint64(n)) {
			a32[i] = float32(v)
		}
		_, _, ok = potf2(n, a32, lda)
		require.True(t, ok)
		for i := range n {
			for j := 0; j <= i; j++ {
				require.InDelta(t, want[i*lda+j], float64(a32[i*lda+j]), 2e-5*math.Max(1, math.Abs(want[i*lda+j])), "float32 n=%d L[%d][%d]", n, i, j)
			}
		}
	}
}

// A pivot that is not positive is reported at its index, whichever row
// of a group of four it falls in.
func TestPotf2ReportsFailingPivot(t *testing.T) {
	const n, lda = 11, 11
	for p := range n {
		a := kernelSPD(n, lda, 7)
		a[p*lda+p] = -1
		pivot, value, ok := potf2(n, a, lda)
		require.False(t, ok, "pivot %d", p)
		require.Equal(t, p, pivot)
		require.Less(t, value, 0.0)
	}
}

// cholRevReference undoes banachiewicz entry by entry (Murray 2016,
// "Differentiation of the Cholesky decomposition", the unblocked reverse
// algorithm): g holds L̄ on entry and the cotangent of A's lower triangle
// on return.
func cholRevReference(n, lda int, l, g []float64) {
	for j := n - 1; j >= 0; j-- {
		for i := n - 1; i > j; i-- {
			abar := g[i*lda+j] / l[j*lda+j]
			g[i*lda+j] = abar
			g[j*lda+j] -= abar * l[i*lda+j]
			for k := range j {
				g[i*lda+k] -= abar * l[j*lda+k]
				g[j*lda+k] -= abar * l[i*lda+k]
			}
		}
		abar := g[j*lda+j] / (2 * l[j*lda+j])
		g[j*lda+j] = abar
		for k := range j {
			g[j*lda+k] -= 2 * abar * l[j*lda+k]
		}
	}
}

func TestCholGradUnblockedAgainstReference(t *testing.T) {
	for n := 1; n <= cholGradBlock+5; n++ {
		lda := n + 2
		l := kernelSPD(n, lda, uint64(100+n))
		banachiewicz(n, lda, l)
		lbar := laRandom(Float64, uint64(200+n), n, lda).Float64s()
		want := append([]float64(nil), lbar...)
		got := append([]float64(nil), lbar...)
		cholRevReference(n, lda, l, want)
		cholGradUnblocked(n, l, lda, got, lda)
		for i := range n {
			for j := 0; j <= i; j++ {
				require.InDelta(t, want[i*lda+j], got[i*lda+j], 1e-12*math.Max(1, math.Abs(want[i*lda+j])), "n=%d Ā[%d][%d]", n, i, j)
			}
		}
	}
}

func TestTrsmRightLowerSmallAgainstSubstitution(t *testing.T) {
	for n := 1; n <= triBlock; n++ {
		for _, m := range []int{0, 1, 3, 4, 5, 9} {
			t.Run(fmt.Sprintf("m%d_n%d", m, n), func(t *testing.T) {
				ldl, ldb := n+1, n+4
				l := kernelSPD(n, ldl, uint64(n))
				banachiewicz(n, ldl, l)
				b := laRandom(Float64, uint64(m+n), m, ldb).Float64s()
				// X·L = B by back substitution, column by column from the last.
				want := append([]float64(nil), b...)
				for r := range m {
					x := want[r*ldb:]
					for j := n - 1; j >= 0; j-- {
						s := x[j]
						for p := j + 1; p < n; p++ {
							s -= x[p] * l[p*ldl+j]
						}
						x[j] = s / l[j*ldl+j]
					}
				}
				got := append([]float64(nil), b...)
				trsmRightLowerSmall(m, n, l, ldl, got, ldb)
				for i := range got {
					require.InDelta(t, want[i], got[i], 1e-12*math.Max(1, math.Abs(want[i])), "entry %d", i)
				}
			})
		}
	}
}

func TestMirrorLowerRowsExact(t *testing.T) {
	for _, n := range []int{1, 3, 4, 5, 8, 63, 64, 65, 130} {
		for _, off := range []float64{1, 0.5} {
			for _, rows := range [][2]int{{0, n}, {min(3, n), n}, {0, n / 2}, {n / 3, n - n/3}} {
				lda := n + 1
				a := laRandom(Float64, uint64(n), n, lda).Float64s()
				want := append([]float64(nil), a...)
				for i := rows[0]; i < rows[1]; i++ {
					for j := range i {
						v := want[i*lda+j] * off
						want[i*lda+j], want[j*lda+i] = v, v
					}
				}
				mirrorLowerRows(a, rows[0], rows[1], lda, off)
				require.Equal(t, want, a, "n=%d off=%v rows %v", n, off, rows)
			}
		}
	}
}

// The narrow triangular solves split B's rows between goroutines, so a
// row's result must be the same bits whether it is solved in a group of
// four or alone.
func TestNarrowSolvesRowAloneSameBits(t *testing.T) {
	const n, m, ldb = 13, 11, 15
	l := kernelSPD(n, n, 3)
	banachiewicz(n, n, l)
	b := laRandom(Float64, 4, m, ldb).Float64s()
	for name, solve := range map[string]func(m int, b []float64){
		"X·L = B":  func(m int, b []float64) { trsmRightLowerSmall(m, n, l, n, b, ldb) },
		"X·Lᵀ = B": func(m int, b []float64) { trsmRightLowerTSmall(m, n, l, n, b, ldb) },
	} {
		all := append([]float64(nil), b...)
		solve(m, all)
		for r := range m {
			row := append([]float64(nil), b[r*ldb:(r+1)*ldb]...)
			solve(1, row)
			require.Equal(t, all[r*ldb:(r+1)*ldb], row, "%s: row %d", name, r)
		}
	}
}

package tensor

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// substitute solves op(A)·x = b by the textbook substitution, one entry
// at a time in the order of the triangle (Golub and Van Loan, algorithms
// 3.1.1 and 3.1.2), reading op(A)'s entries directly.
func substitute(lower, trans, unit bool, n int, a []float64, lda int, b []float64) []float64 {
	op := func(i, j int) float64 {
		if trans {
			return a[j*lda+i]
		}
		return a[i*lda+j]
	}
	x := append([]float64(nil), b...)
	forward := lower != trans
	for s := range n {
		i := s
		if !forward {
			i = n - 1 - s
		}
		v := x[i]
		for j := range n {
			if (forward && j < i) || (!forward && j > i) {
				v -= op(i, j) * x[j]
			}
		}
		if !unit {
			v /= op(i, i)
		}
		x[i] = v
	}
	return x
}

// A triangle with entries of order 1/n off the diagonal and 2-3 on it (so
// that the solution stays of order one, with a unit diagonal too) and
// NaNs in the other triangle, which must not be read.
func trsvMatrix(n, lda int, lower bool, seed uint64) []float64 {
	a := laRandom(Float64, seed, n, lda).Float64s()
	for i := range n {
		for j := range n {
			switch {
			case (lower && j > i) || (!lower && j < i):
				a[i*lda+j] = math.NaN()
			case i == j:
				a[i*lda+i] = 2 + math.Abs(a[i*lda+i])
			default:
				a[i*lda+j] /= float64(n)
			}
		}
	}
	return a
}

func TestTrsvAgainstSubstitution(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33, 100, 257} {
		for _, lower := range []bool{true, false} {
			for _, trans := range []bool{false, true} {
				for _, unit := range []bool{false, true} {
					t.Run(fmt.Sprintf("n%d_lower%v_trans%v_unit%v", n, lower, trans, unit), func(t *testing.T) {
						lda := n + 3
						a := trsvMatrix(n, lda, lower, uint64(n+1))
						if unit {
							for i := range n {
								a[i*lda+i] = math.NaN() // not read
							}
						}
						b := laRandom(Float64, uint64(n+7), n).Float64s()
						want := substitute(lower, trans, unit, n, a, lda, b)
						got := append([]float64(nil), b...)
						trsv(lower, trans, unit, n, a, lda, got)
						for i := range n {
							require.InDelta(t, want[i], got[i], 1e-12*math.Max(1, math.Abs(want[i])), "x[%d]", i)
						}
					})
				}
			}
		}
	}
}

// TriSolve and CholeskySolve with one right-hand side, (n,) or (n, 1),
// against the products they invert, in both dtypes.
func TestTriSolveOneRightHandSide(t *testing.T) {
	const n = 203
	for _, dt := range laDTypes {
		tol := 1e-11
		if dt == Float32 {
			tol = 1e-3
		}
		l, err := Cholesky(laSPD(dt, 11, n))
		require.NoError(t, err)
		b := laRandom(dt, 12, n)
		for _, trans := range []bool{false, true} {
			x := TriSolve(l, b, true, trans)
			op := l
			if trans {
				op = Transpose(l)
			}
			laAssertClose(t, b.Values(), Reshape(MatMul(op, Reshape(x, n, 1)), n), tol, "trans %v", trans)
			x2 := TriSolve(l, Reshape(b, n, 1), true, trans)
			require.Equal(t, x.Values(), x2.Values(), "a vector and an (n, 1) matrix take the same path")
		}
		a := MatMul(l, Transpose(l))
		laAssertClose(t, b.Values(), Reshape(MatMul(a, Reshape(CholeskySolve(l, b), n, 1)), n), 10*tol)
	}
}

// Up to trsvMaxCols right-hand sides are solved one column at a time:
// each column of the result is bit for bit the solve of that column
// alone, and the residual is at rounding level (more columns take the
// recursion, whose result is checked the same way).
func TestTriSolveFewColumnsOneAtATime(t *testing.T) {
	const n = 131
	l, err := Cholesky(laSPD(Float64, 21, n))
	require.NoError(t, err)
	for _, k := range []int{2, 3, trsvMaxCols, trsvMaxCols + 1} {
		for _, trans := range []bool{false, true} {
			b := laRandom(Float64, uint64(30+k), n, k)
			x := TriSolve(l, b, true, trans)
			op := l
			if trans {
				op = Transpose(l)
			}
			laAssertClose(t, b.Values(), MatMul(op, x), 1e-11, "k %d trans %v", k, trans)
			if k > trsvMaxCols {
				continue
			}
			for c := range k {
				col := TriSolve(l, Slice(b, 1, c, c+1, 1).Contiguous(), true, trans)
				require.Equal(t, col.Values(), Slice(x, 1, c, c+1, 1).Contiguous().Values(), "k %d column %d", k, c)
			}
		}
	}
}

// A single column of a wider B (leading dimension above one) is gathered
// for trsv: the same bits as the contiguous vector, and the other columns
// untouched.
func TestTrsvColsStridedColumn(t *testing.T) {
	const n, ldb = 37, 3
	a := trsvMatrix(n, n, true, 5)
	b := laRandom(Float64, 6, n, ldb).Float64s()
	got := append([]float64(nil), b...)
	trsvCols(true, false, false, n, 1, a, n, got, ldb)
	want := make([]float64, n)
	for i := range n {
		want[i] = b[i*ldb]
	}
	trsv(true, false, false, n, a, n, want)
	for i := range n {
		require.Equal(t, want[i], got[i*ldb], "x[%d]", i)
		require.Equal(t, b[i*ldb+1:i*ldb+3], got[i*ldb+1:i*ldb+3], "row %d's other columns", i)
	}
}

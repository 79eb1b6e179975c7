package tensor

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// laMat is a row-major float64 matrix for the reference computations.
type laMat struct {
	r, c int
	v    []float64
}

func laMatOf(t *Tensor) laMat {
	s := t.Shape()
	return laMat{s[len(s)-2], s[len(s)-1], t.Values()}
}

func (m laMat) at(i, j int) float64 { return m.v[i*m.c+j] }

// laMul is the naive product of two laMats (i-p-j loop order so the
// innermost loop runs along rows).
func laMul(a, b laMat) laMat {
	out := laMat{a.r, b.c, make([]float64, a.r*b.c)}
	for i := 0; i < a.r; i++ {
		row := out.v[i*b.c : (i+1)*b.c]
		for p := 0; p < a.c; p++ {
			x := a.at(i, p)
			brow := b.v[p*b.c : (p+1)*b.c]
			for j := range row {
				row[j] += x * brow[j]
			}
		}
	}
	return out
}

func laT(a laMat) laMat {
	out := laMat{a.c, a.r, make([]float64, len(a.v))}
	for i := 0; i < a.r; i++ {
		for j := 0; j < a.c; j++ {
			out.v[j*a.r+i] = a.at(i, j)
		}
	}
	return out
}

// laMaxDiff is the largest absolute entrywise difference.
func laMaxDiff(a, b laMat) float64 {
	d := 0.0
	for i := range a.v {
		d = math.Max(d, math.Abs(a.v[i]-b.v[i]))
	}
	return d
}

// laSPD returns the SPD matrix MᵀM + nI for a random n×n M, computed in
// float64 and stored in dt.
func laSPD(dt DType, seed uint64, n int) *Tensor {
	m := laMatOf(laRandom(Float64, seed, n, n))
	a := laMul(laT(m), m)
	for i := 0; i < n; i++ {
		a.v[i*n+i] += float64(n)
	}
	return FromValues(dt, a.v, n, n)
}

// laBadUpper returns a copy of the square matrix t with NaN above the
// diagonal, to check that only the lower triangle is read.
func laBadUpper(t *Tensor) *Tensor { return laWithUpper(t, math.NaN()) }

// laLower returns a copy of the square matrix t with zeros above the
// diagonal.
func laLower(t *Tensor) *Tensor { return laWithUpper(t, 0) }

// laWithUpper returns a copy of the square matrix t with v everywhere
// above the diagonal.
func laWithUpper(t *Tensor, v float64) *Tensor {
	c := t.Clone()
	n := c.Shape()[0]
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			c.SetAt(v, i, j)
		}
	}
	return c
}

// laRelTol is the tolerance for a residual relative to the data's scale.
func laRelTol(dt DType, n int) float64 {
	if dt == Float32 {
		return 1e-5 * float64(n+4)
	}
	return 1e-13 * float64(n+4)
}

func TestCholeskyReconstructs(t *testing.T) {
	for _, n := range []int{1, 2, 5, 64, 65, 200, 260} {
		for _, dt := range laDTypes {
			t.Run(dt.String()+"/n"+fmt.Sprint(n), func(t *testing.T) {
				a := laSPD(dt, uint64(n), n)
				l, err := Cholesky(laBadUpper(a))
				require.NoError(t, err)
				require.Equal(t, []int{n, n}, l.Shape())
				lm := laMatOf(l)
				for i := 0; i < n; i++ {
					require.Greater(t, lm.at(i, i), 0.0)
					for j := i + 1; j < n; j++ {
						require.Zero(t, lm.at(i, j), "upper entry (%d, %d)", i, j)
					}
				}
				am := laMatOf(a)
				scale := float64(2 * n) // the diagonal of A is about 1.3n
				assert.Less(t, laMaxDiff(laMul(lm, laT(lm)), am)/scale, laRelTol(dt, n))
			})
		}
	}
}

func TestCholeskyHandWorked(t *testing.T) {
	for _, dt := range laDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			l, err := Cholesky(FromValues(dt, []float64{4, 2, 2, 3}, 2, 2))
			require.NoError(t, err)
			laAssertClose(t, []float64{2, 0, 1, math.Sqrt2}, l, laTol(dt, 2))
			// log det [[4,2],[2,3]] = log 8.
			assert.InDelta(t, math.Log(8), LogDetChol(l).Item(), laTol(dt, 2))
		})
	}
}

func TestCholeskyTo(t *testing.T) {
	for _, dt := range laDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			const n = 70
			a := laSPD(dt, 3, n)
			am := laMatOf(a)
			check := func(l *Tensor, msg string) {
				t.Helper()
				lm := laMatOf(l)
				for i := 0; i < n; i++ {
					for j := i + 1; j < n; j++ {
						require.Zero(t, lm.at(i, j), "%s: upper entry (%d, %d)", msg, i, j)
					}
				}
				assert.Less(t, laMaxDiff(laMul(lm, laT(lm)), am)/(2*n), laRelTol(dt, n), msg)
			}
			dst := Full(dt, 99, n, n)
			l, err := CholeskyTo(dst, a)
			require.NoError(t, err)
			require.Same(t, dst, l)
			check(dst, "garbage dst")

			inPlace := a.Clone()
			_, err = CholeskyTo(inPlace, inPlace)
			require.NoError(t, err)
			check(inPlace, "in place")

			// a is the transpose of the destination's storage (same values,
			// A being symmetric), so it must be read before being overwritten.
			shared := a.Clone()
			_, err = CholeskyTo(shared, laTransposeLast(shared))
			require.NoError(t, err)
			check(shared, "transposed alias")

			requireOpPanics(t, "CholeskyTo", func() { _, _ = CholeskyTo(New(dt, n, n+1), a) }, "(70, 71)", "(70, 70)")
			requireOpPanics(t, "CholeskyTo", func() { _, _ = CholeskyTo(laTransposeLast(New(dt, n, n)), a) }, "not contiguous")
		})
	}
}

func TestCholeskyBatched(t *testing.T) {
	for _, dt := range laDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			const n = 70
			mats := []*Tensor{laSPD(dt, 1, n), laSPD(dt, 2, n), laSPD(dt, 3, n), laSPD(dt, 4, n)}
			vals := []float64{}
			for _, m := range mats {
				vals = append(vals, m.Values()...)
			}
			a := FromValues(dt, vals, 2, 2, n, n)
			l, err := Cholesky(a)
			require.NoError(t, err)
			require.Equal(t, []int{2, 2, n, n}, l.Shape())
			lv := l.Values()
			for b, m := range mats {
				lb := laMat{n, n, lv[b*n*n : (b+1)*n*n]}
				assert.Less(t, laMaxDiff(laMul(lb, laT(lb)), laMatOf(m))/(2*n), laRelTol(dt, n), "matrix %d", b)
			}
			ld := LogDetChol(l)
			require.Equal(t, []int{2, 2}, ld.Shape())
			for b, m := range mats {
				// log det from the reference LU-free route: Σ log of L's diagonal
				// equals half of log det A, checked against SlogDet.
				_, la, err := SlogDet(m)
				require.NoError(t, err)
				assert.InDelta(t, la.Item(), ld.Values()[b], 1e-3*math.Abs(la.Item()), "matrix %d", b)
			}

			// The third matrix fails: its error names it and its pivot.
			vals2 := append([]float64{}, vals...)
			vals2[2*n*n+3*n+3] = -1e6
			_, err = Cholesky(FromValues(dt, vals2, 4, n, n))
			var npd *NotPositiveDefiniteError
			require.ErrorAs(t, err, &npd)
			assert.Equal(t, 2, npd.Batch)
			assert.Equal(t, 3, npd.Pivot)
		})
	}
}

func TestCholeskyNotPositiveDefinite(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name  string
		a     []float64
		n     int
		pivot int
		value float64 // NaN: check IsNaN
	}{
		{"indefinite", []float64{1, 2, 2, 1}, 2, 1, -3},
		{"negative first", []float64{-1, 0, 0, 1}, 2, 0, -1},
		{"zero pivot", []float64{1, 1, 1, 1}, 2, 1, 0},
		{"NaN diagonal", []float64{nan, 0, 0, 1}, 2, 0, nan},
		{"NaN below", []float64{4, 0, 0, nan, 4, 0, 1, 1, 4}, 3, 1, nan},
		{"infinite", []float64{math.Inf(1), 0, 0, 1}, 2, 0, math.Inf(1)},
	}
	for _, tc := range cases {
		for _, dt := range laDTypes {
			t.Run(tc.name+"/"+dt.String(), func(t *testing.T) {
				l, err := Cholesky(FromValues(dt, tc.a, tc.n, tc.n))
				require.Nil(t, l)
				require.ErrorIs(t, err, ErrNotPositiveDefinite)
				var npd *NotPositiveDefiniteError
				require.ErrorAs(t, err, &npd)
				assert.Equal(t, "Cholesky", npd.Op)
				assert.Equal(t, tc.pivot, npd.Pivot)
				assert.Equal(t, 0, npd.Batch)
				if math.IsNaN(tc.value) {
					assert.True(t, math.IsNaN(npd.Value))
				} else {
					assert.Equal(t, tc.value, npd.Value)
				}
			})
		}
	}
	// A failure deep inside the blocked recursion (pivot 150 of 200).
	for _, dt := range laDTypes {
		a := laSPD(dt, 9, 200)
		a.SetAt(-1e9, 150, 150)
		_, err := Cholesky(a)
		var npd *NotPositiveDefiniteError
		require.ErrorAs(t, err, &npd)
		assert.Equal(t, 150, npd.Pivot)
	}
}

func TestCholeskyMisuse(t *testing.T) {
	for _, dt := range laDTypes {
		requireOpPanics(t, "Cholesky", func() { _, _ = Cholesky(New(dt, 2, 3)) }, "(2, 3)")
		requireOpPanics(t, "Cholesky", func() { _, _ = Cholesky(New(dt, 3)) }, "(3,)")
		requireOpPanics(t, "LogDetChol", func() { LogDetChol(New(dt, 2, 3)) }, "(2, 3)")
	}
}

// laTriangular returns a well-conditioned n×n triangular matrix (diagonal in
// [2, 3], small off-diagonal entries) with NaN in the other triangle, so a
// solve that reads it fails.
func laTriangular(dt DType, seed uint64, n int, lower bool) *Tensor {
	r := laRandom(Float64, seed, n, n).Values()
	v := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			switch {
			case i == j:
				v[i*n+j] = 2.5 + r[i*n+j]/2
			case (j < i) == lower:
				v[i*n+j] = r[i*n+j] / float64(n)
			default:
				v[i*n+j] = math.NaN()
			}
		}
	}
	return FromValues(dt, v, n, n)
}

// laClean replaces NaN with 0 in a copy of m.
func laClean(m laMat) laMat {
	out := laMat{m.r, m.c, append([]float64{}, m.v...)}
	for i, x := range out.v {
		if math.IsNaN(x) {
			out.v[i] = 0
		}
	}
	return out
}

func TestTriSolveResiduals(t *testing.T) {
	// n > 16 recurses around GEMM; k = 2000 makes the substitution split
	// its columns over goroutines.
	sizes := [][2]int{{1, 1}, {5, 1}, {5, 7}, {70, 7}, {150, 1}, {150, 7}, {20, 2000}}
	for _, nk := range sizes {
		for _, flags := range [][2]bool{{true, false}, {true, true}, {false, false}, {false, true}} {
			for _, dt := range laDTypes {
				n, k, lower, trans := nk[0], nk[1], flags[0], flags[1]
				name := fmt.Sprintf("%v/n%dk%d/lower=%v/trans=%v", dt, n, k, lower, trans)
				t.Run(name, func(t *testing.T) {
					a := laTriangular(dt, uint64(n+k), n, lower)
					b := laRandom(dt, 11, n, k)
					x := TriSolve(a, b, lower, trans)
					require.Equal(t, []int{n, k}, x.Shape())
					op := laClean(laMatOf(a))
					if trans {
						op = laT(op)
					}
					res := laMaxDiff(laMul(op, laMatOf(x)), laMatOf(b))
					assert.Less(t, res, laRelTol(dt, n))
				})
			}
		}
	}
}

func TestTriSolveShapes(t *testing.T) {
	for _, dt := range laDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			// [[2,0],[1,4]]·x = [2, 9] → x = [1, 2]; only the lower triangle is read.
			a := FromValues(dt, []float64{2, math.NaN(), 1, 4}, 2, 2)
			x := TriSolve(a, FromValues(dt, []float64{2, 9}), true, false)
			require.Equal(t, []int{2}, x.Shape())
			assert.Equal(t, []float64{1, 2}, x.Values())

			// Batched a broadcasting against one b, and the reverse.
			a1, a2 := laTriangular(dt, 1, 4, true), laTriangular(dt, 2, 4, true)
			ab := FromValues(dt, append(a1.Values(), a2.Values()...), 2, 4, 4)
			b := laRandom(dt, 3, 4, 3)
			x = TriSolve(ab, b, true, false)
			require.Equal(t, []int{2, 4, 3}, x.Shape())
			xv := x.Values()
			for i, ai := range []*Tensor{a1, a2} {
				xi := laMat{4, 3, xv[i*12 : (i+1)*12]}
				assert.Less(t, laMaxDiff(laMul(laClean(laMatOf(ai)), xi), laMatOf(b)), laRelTol(dt, 4))
			}
			bb := laRandom(dt, 4, 3, 4, 2)
			x = TriSolve(a1, bb, true, false)
			require.Equal(t, []int{3, 4, 2}, x.Shape())

			// Views: a transposed matrix (solved through its storage), a
			// strided one (copied), and a row-padded one (read with its stride).
			for _, lower := range []bool{true, false} {
				for _, trans := range []bool{false, true} {
					src := laTriangular(dt, 5, 70, !lower)
					view := laTransposeLast(src) // lower when src is upper
					want := laClean(laMatOf(view.Clone()))
					if trans {
						want = laT(want)
					}
					rhs := laRandom(dt, 6, 70, 3)
					x := TriSolve(view, rhs, lower, trans)
					assert.Less(t, laMaxDiff(laMul(want, laMatOf(x)), laMatOf(rhs)), laRelTol(dt, 70), "transposed view lower=%v trans=%v", lower, trans)
				}
			}
			strided := laEveryOther(dt, 7, 5, 5)
			for i := 0; i < 5; i++ {
				strided.SetAt(3, i, i)
			}
			rhs := laRandom(dt, 8, 5, 2)
			x = TriSolve(strided, rhs, true, false)
			sm := laMatOf(strided.Clone())
			for i := 0; i < 5; i++ {
				for j := i + 1; j < 5; j++ {
					sm.v[i*5+j] = 0
				}
			}
			assert.Less(t, laMaxDiff(laMul(sm, laMatOf(x)), laMatOf(rhs)), laRelTol(dt, 5), "strided")
			wide := laTriangular(dt, 9, 6, true)
			padded := New(dt, 5, 6)
			for i := 0; i < 5; i++ {
				for j := 0; j < 6; j++ {
					padded.SetAt(wide.At(i, j), i, j)
				}
			}
			pv := *padded
			pv.shape = []int{5, 5}
			x = TriSolve(&pv, rhs, true, false)
			assert.Less(t, laMaxDiff(laMul(laClean(laMatOf(pv.Clone())), laMatOf(x)), laMatOf(rhs)), laRelTol(dt, 5), "padded rows")

			requireOpPanics(t, "TriSolve", func() { TriSolve(New(dt, 3, 3), New(dt, 4, 2), true, false) }, "(3, 3)", "(4, 2)")
			requireOpPanics(t, "TriSolve", func() { TriSolve(New(dt, 3, 2), New(dt, 3, 2), true, false) }, "(3, 2)")
			requireOpPanics(t, "TriSolve", func() { TriSolve(New(dt, 2, 3, 3), New(dt, 4, 3, 1), true, false) }, "(2,)", "(4,)")
		})
	}
}

func TestCholeskySolve(t *testing.T) {
	for _, n := range []int{3, 130} {
		for _, dt := range laDTypes {
			t.Run(dt.String()+"/n"+fmt.Sprint(n), func(t *testing.T) {
				a := laSPD(dt, 5, n)
				l, err := Cholesky(a)
				require.NoError(t, err)
				b := laRandom(dt, 6, n, 4)
				x := CholeskySolve(l, b)
				require.Equal(t, []int{n, 4}, x.Shape())
				res := laMaxDiff(laMul(laMatOf(a), laMatOf(x)), laMatOf(b))
				assert.Less(t, res, laRelTol(dt, n))
			})
		}
	}
}

func ExampleCholesky() {
	a := FromFloat64s([]float64{4, 2, 2, 3}, 2, 2)
	l, err := Cholesky(a)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(l)
	// Solve A·x = b with the factor: 4x + 2y = 8, 2x + 3y = 7.
	fmt.Println(CholeskySolve(l, FromFloat64s([]float64{8, 7})))
	// log det A = log 8.
	fmt.Printf("%.4f\n", LogDetChol(l).Item())

	_, err = Cholesky(FromFloat64s([]float64{1, 2, 2, 1}, 2, 2))
	fmt.Println(err)
	// Output:
	// [[2, 0], [1, 1.41421]]
	// [1.25, 1.5]
	// 2.0794
	// tensor.Cholesky: matrix 0 is not positive definite: pivot 1 is -3
}

func ExampleMatMul() {
	a := FromFloat64s([]float64{1, 2, 3, 4}, 2, 2)
	b := FromFloat64s([]float64{5, 6, 7, 8}, 2, 2)
	fmt.Println(MatMul(a, b))
	// Batch dimensions broadcast: (2, 1, 3, 4)@(5, 4, 2) → (2, 5, 3, 2).
	fmt.Println(MatMul(Ones(Float32, 2, 1, 3, 4), Ones(Float32, 5, 4, 2)).Shape())
	// A vector operand loses its added dimension: (2, 2)@(2,) → (2,).
	fmt.Println(MatMul(a, FromFloat64s([]float64{1, 1})))
	// Output:
	// [[19, 22], [43, 50]]
	// [2 5 3 2]
	// [3, 7]
}

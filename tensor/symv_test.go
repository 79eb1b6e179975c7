package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSymvLower checks the lower-triangle product against the plain sum
// over the full symmetric matrix, at orders that exercise the 4-column
// blocks, the leftover columns and rows, and the two-goroutine split.
func TestSymvLower(t *testing.T) {
	for _, m := range []int{1, 3, 4, 7, 9, 64, 301, 517} {
		t.Run(fmt.Sprint(m), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(m)))
			lda := m + 3
			a := make([]float64, lda*m)
			for i := range a {
				a[i] = rng.Float64()*2 - 1
			}
			x := make([]float64, m)
			for i := range x {
				x[i] = rng.Float64()*2 - 1
			}
			sym := func(r, c int) float64 { return a[max(r, c)+min(r, c)*lda] }
			y := make([]float64, m)
			symvLower(m, a, lda, x, y, make([]float64, m))
			y32 := make([]float32, m)
			a32, x32 := make([]float32, len(a)), make([]float32, m)
			for i, v := range a {
				a32[i] = float32(v)
			}
			for i, v := range x {
				x32[i] = float32(v)
			}
			symvLower(m, a32, lda, x32, y32, make([]float32, m))
			for r := 0; r < m; r++ {
				var want float64
				for c := 0; c < m; c++ {
					want += sym(r, c) * x[c]
				}
				assert.InDelta(t, want, y[r], 1e-12*float64(m), "row %d", r)
				assert.InDelta(t, want, float64(y32[r]), 1e-5*float64(m), "float32 row %d", r)
			}
		})
	}
}

// TestSymvColsKernel checks the vector kernel of each dtype against the
// scalar loop it stands for (four columns, weights for the column update,
// dot products with x), over lengths around the lanes of both widths:
// the rows it reports done are a multiple of its lanes, the rest of y is
// untouched, and what it did agrees with the scalar loop to a rounding.
// Its halves as kernels of their own, dots4 and axpy4, are checked too.
func TestSymvColsKernel(t *testing.T) {
	for _, n := range []int{3, 4, 7, 8, 13, 16, 61} {
		rng := rand.New(rand.NewPCG(2, uint64(n)))
		const lda = 70
		a := make([]float64, 4*lda)
		x, y := make([]float64, n), make([]float64, n)
		for i := range a {
			a[i] = rng.Float64()*2 - 1
		}
		for i := range x {
			x[i], y[i] = rng.Float64()*2-1, rng.Float64()*2-1
		}
		alpha := [4]float64{0.5, -1, 2, 0.25}
		t.Run(fmt.Sprintf("float64/%d", n), func(t *testing.T) {
			checkSymvCols(t, a, lda, x, y, alpha, 4, 1e-14)
		})
		t.Run(fmt.Sprintf("float32/%d", n), func(t *testing.T) {
			a32, x32, y32 := make([]float32, len(a)), make([]float32, n), make([]float32, n)
			for i, v := range a {
				a32[i] = float32(v)
			}
			for i := range x {
				x32[i], y32[i] = float32(x[i]), float32(y[i])
			}
			checkSymvCols(t, a32, lda, x32, y32, [4]float32{0.5, -1, 2, 0.25}, 8, 1e-5)
		})
	}
}

func checkSymvCols[T Float](t *testing.T, a []T, lda int, x, y []T, alpha [4]T, lanes int, tol float64) {
	t.Helper()
	n := len(y)
	want, got := append([]T(nil), y...), append([]T(nil), y...)
	var wantDots, gotDots [4]T
	symvColsScalar(a, lda, x, want, &alpha, &wantDots)
	done := symvCols(a, lda, x, got, &alpha, &gotDots)
	if !hasFMA {
		assert.Zero(t, done)
		return
	}
	assert.Zero(t, done%lanes, "done %d", done)
	assert.LessOrEqual(t, done, n)
	if n >= lanes {
		assert.Equal(t, n-n%lanes, done)
	}
	symvColsScalar(a[done:], lda, x[done:], got[done:], &alpha, &gotDots)
	for i := range want {
		assert.InDelta(t, float64(want[i]), float64(got[i]), tol*10, "y[%d]", i)
	}
	for k := range wantDots {
		assert.InDelta(t, float64(wantDots[k]), float64(gotDots[k]), tol*float64(n), "dot %d", k)
	}
	// The two halves on their own: axpy4's update is symvCols's, bit for
	// bit (the same instructions); dots4 sums in its own order.
	half := append([]T(nil), y...)
	axpy4(a, lda, half, &alpha)
	for i := range got {
		assert.Equal(t, math.Float64bits(float64(got[i])), math.Float64bits(float64(half[i])), "axpy4 y[%d]", i)
	}
	var dots [4]T
	dots4(a, lda, x, &dots)
	// The scalar loops against sums written out here in float64.
	for k := range dots {
		var ref float64
		for i := range n {
			ref += float64(a[k*lda+i]) * float64(x[i])
		}
		assert.InDelta(t, ref, float64(wantDots[k]), tol*float64(n), "scalar dot %d", k)
		assert.InDelta(t, float64(wantDots[k]), float64(dots[k]), tol*float64(n), "dots4 %d", k)
	}
	for i := range n {
		ref := float64(y[i])
		for k := range 4 {
			ref += float64(alpha[k]) * float64(a[k*lda+i])
		}
		assert.InDelta(t, ref, float64(want[i]), tol*10, "scalar y[%d]", i)
	}
}

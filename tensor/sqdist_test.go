package tensor

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSqDistHandWorked(t *testing.T) {
	for _, dt := range laDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			a := FromValues(dt, []float64{0, 0, 3, 4}, 2, 2)
			b := FromValues(dt, []float64{0, 0, 1, 1, 3, 0}, 3, 2)
			// (0,0)→(0,0), (1,1), (3,0): 0, 2, 9; (3,4)→ 25, 4+9, 16.
			laAssertClose(t, []float64{0, 2, 9, 25, 13, 16}, SqDist(a, b), 0)
			// A transposed view of the points reads the same rows.
			laAssertClose(t, []float64{0, 2, 9, 25, 13, 16}, SqDist(Transpose(Transpose(a).Contiguous()), b), 0)
		})
	}
}

// naiveSqDist is the definition, summed in float64.
func naiveSqDist(a, b laMat) []float64 {
	out := make([]float64, a.r*b.r)
	for i := 0; i < a.r; i++ {
		for j := 0; j < b.r; j++ {
			s := 0.0
			for k := 0; k < a.c; k++ {
				d := a.at(i, k) - b.at(j, k)
				s += d * d
			}
			out[i*b.r+j] = s
		}
	}
	return out
}

func TestSqDistAgainstDefinition(t *testing.T) {
	// d = 3 and 32 sum directly; d = 40 goes through the matrix product.
	for _, d := range []int{1, 3, 32, 40} {
		for _, dt := range laDTypes {
			t.Run(fmt.Sprintf("%s/d%d", dt, d), func(t *testing.T) {
				a := laRandom(dt, uint64(d), 70, d)
				b := laRandom(dt, uint64(d)+1, 50, d)
				want := naiveSqDist(laMatOf(a), laMatOf(b))
				tol := 1e-12 * float64(4*d)
				if dt == Float32 {
					tol = 1e-5 * float64(4*d)
				}
				laAssertClose(t, want, SqDist(a, b), tol)
				dst := New(dt, 70, 50)
				require.Same(t, dst, SqDistTo(dst, a, b))
				laAssertClose(t, want, dst, tol)

				// Within one set: symmetric, never negative, zero diagonal.
				self := SqDist(a, a)
				s := laMatOf(self)
				for i := 0; i < 70; i++ {
					require.Zero(t, s.at(i, i), "diagonal %d", i)
					for j := 0; j < 70; j++ {
						require.GreaterOrEqual(t, s.at(i, j), 0.0)
					}
				}
				laAssertClose(t, naiveSqDist(laMatOf(a), laMatOf(a)), self, tol)
			})
		}
	}
}

func TestSqDistPanics(t *testing.T) {
	a := Zeros(Float64, 3, 2)
	requirePanics(t, func() { SqDist(a, Zeros(Float64, 3, 3)) }, "SqDist")
	requirePanics(t, func() { SqDist(Zeros(Float64, 3), a) }, "SqDist")
	requirePanics(t, func() { SqDist(a, Zeros(Float32, 3, 2)) }, "SqDist")
	requirePanics(t, func() { SqDistTo(Zeros(Float64, 3, 4), a, a) }, "SqDistTo")
	requirePanics(t, func() { SqDistTo(a, a, Zeros(Float64, 2, 2)) }, "SqDistTo")
	assert.Equal(t, []int{0, 3}, SqDist(Zeros(Float64, 0, 2), a).Shape())
}

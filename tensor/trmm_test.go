package tensor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// naiveTriMatMul is op(tril(L))·B by the textbook triple loop, optionally
// keeping only the lower triangle of the result.
func naiveTriMatMul(l, b []float64, n, k int, trans, lowerOut bool) []float64 {
	c := make([]float64, n*k)
	for i := 0; i < n; i++ {
		for j := 0; j < k; j++ {
			if lowerOut && j > i {
				continue
			}
			s := 0.0
			for p := 0; p < n; p++ {
				var m float64
				if !trans && p <= i {
					m = l[i*n+p]
				} else if trans && p >= i {
					m = l[p*n+i]
				}
				s += m * b[p*k+j]
			}
			c[i*k+j] = s
		}
	}
	return c
}

func TestTriMatMulHandWorked(t *testing.T) {
	// L = [[2,0],[3,4]] with a junk 99 above the diagonal, which must be
	// ignored; B = [[1,2],[5,6]].
	l2 := []float64{2, 99, 3, 4}
	b2 := []float64{1, 2, 5, 6}
	// 3×3: L = [[1,·,·],[2,3,·],[4,5,6]], B = I gives L and Lᵀ back.
	l3 := []float64{1, -7, -7, 2, 3, -7, 4, 5, 6}
	eye3 := []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}
	cases := []struct {
		name            string
		l, b            []float64
		n, k            int
		trans, lowerOut bool
		want            []float64
	}{
		{"L·B 2×2", l2, b2, 2, 2, false, false, []float64{2, 4, 23, 30}},
		{"Lᵀ·B 2×2", l2, b2, 2, 2, true, false, []float64{17, 22, 20, 24}},
		{"lower(L·B) 2×2", l2, b2, 2, 2, false, true, []float64{2, 0, 23, 30}},
		{"lower(Lᵀ·B) 2×2", l2, b2, 2, 2, true, true, []float64{17, 0, 20, 24}},
		{"L·I 3×3", l3, eye3, 3, 3, false, false, []float64{1, 0, 0, 2, 3, 0, 4, 5, 6}},
		{"Lᵀ·I 3×3", l3, eye3, 3, 3, true, false, []float64{1, 2, 4, 0, 3, 5, 0, 0, 6}},
		{"lower(Lᵀ·I) 3×3", l3, eye3, 3, 3, true, true, []float64{1, 0, 0, 0, 3, 0, 0, 0, 6}},
		{"L·1 3×1", l3, []float64{1, 1, 1}, 3, 1, false, false, []float64{1, 5, 15}},
		{"Lᵀ·1 3×1", l3, []float64{1, 1, 1}, 3, 1, true, false, []float64{7, 8, 6}},
	}
	for _, dt := range []DType{Float32, Float64} {
		for _, tc := range cases {
			t.Run(dt.String()+"/"+tc.name, func(t *testing.T) {
				l := FromValues(dt, tc.l, tc.n, tc.n)
				b := FromValues(dt, tc.b, tc.n, tc.k)
				var got *Tensor
				if tc.lowerOut {
					got = TriMatMulLower(l, b, tc.trans)
				} else {
					got = TriMatMul(l, b, tc.trans)
				}
				assert.Equal(t, dt, got.DType())
				assert.Equal(t, []int{tc.n, tc.k}, got.Shape())
				assert.InDeltaSlice(t, tc.want, got.Values(), 1e-6)
			})
		}
	}
}

func TestTriMatMulAgainstNaive(t *testing.T) {
	// Sizes above trmmBlock exercise the recursion, odd ones uneven halves.
	sizes := []struct{ n, k int }{{1, 1}, {5, 3}, {33, 33}, {70, 45}, {97, 97}, {130, 7}}
	rng := NewRNG(7)
	for _, dt := range []DType{Float32, Float64} {
		tol := 1e-10
		if dt == Float32 {
			tol = 1e-4
		}
		for _, sz := range sizes {
			for _, trans := range []bool{false, true} {
				for _, lowerOut := range []bool{false, true} {
					if lowerOut && sz.n != sz.k {
						continue
					}
					l := rng.Normal(Float64, 0, 1, sz.n, sz.n)
					b := rng.Normal(Float64, 0, 1, sz.n, sz.k)
					want := naiveTriMatMul(l.Values(), b.Values(), sz.n, sz.k, trans, lowerOut)
					var got *Tensor
					if lowerOut {
						got = TriMatMulLower(l.Cast(dt), b.Cast(dt), trans)
					} else {
						got = TriMatMul(l.Cast(dt), b.Cast(dt), trans)
					}
					g := got.Values()
					for i := range want {
						assert.InDelta(t, want[i], g[i], tol*float64(sz.n), "%v n=%d k=%d trans=%v lower=%v at %d", dt, sz.n, sz.k, trans, lowerOut, i)
					}
				}
			}
		}
	}
}

func TestTriMatMulBatchViewsAndTo(t *testing.T) {
	rng := NewRNG(3)
	for _, dt := range []DType{Float32, Float64} {
		tol := 1e-10
		if dt == Float32 {
			tol = 1e-4
		}
		// Batch (2,) of L broadcast against one B; B given as a transposed
		// view, which the kernel must copy rather than misread.
		l := rng.Normal(dt, 0, 1, 2, 40, 40)
		bt := rng.Normal(dt, 0, 1, 40, 40)
		b := Transpose(bt)
		dst := New(dt, 2, 40, 40)
		got := TriMatMulLowerTo(dst, l, b, true)
		require.Same(t, dst, got)
		bv := b.Contiguous().Values()
		for bi := 0; bi < 2; bi++ {
			lv := Slice(l, 0, bi, bi+1, 1).Contiguous().Values()
			want := naiveTriMatMul(lv, bv, 40, 40, true, true)
			gv := Slice(got, 0, bi, bi+1, 1).Contiguous().Values()
			assert.InDeltaSlice(t, want, gv, tol*40)
			want = naiveTriMatMul(lv, bv, 40, 40, false, false)
			gv = TriMatMul(Slice(l, 0, bi, bi+1, 1), b, false).Values()
			assert.InDeltaSlice(t, want, gv, tol*40)
		}
	}
}

func TestTriMatMulPanics(t *testing.T) {
	for _, dt := range []DType{Float32, Float64} {
		sq, other := Zeros(dt, 3, 3), Float32
		if dt == Float32 {
			other = Float64
		}
		requirePanics(t, func() { TriMatMul(Zeros(dt, 3, 2), Zeros(dt, 2, 2), false) }, "TriMatMul")
		requirePanics(t, func() { TriMatMul(sq, Zeros(dt, 2, 2), false) }, "(3, 3)")
		requirePanics(t, func() { TriMatMulLower(sq, Zeros(dt, 3, 2), true) }, "TriMatMulLower")
		requirePanics(t, func() { TriMatMul(sq, Zeros(other, 3, 3), false) }, "TriMatMul")
		requirePanics(t, func() { TriMatMulTo(sq, sq, Zeros(dt, 3, 3), false) }, "overlaps")
	}
}

func TestSymmetrizeLower(t *testing.T) {
	for _, dt := range []DType{Float32, Float64} {
		// Hand-worked 3×3: the upper junk (-1) is replaced by the mirror.
		got := SymmetrizeLower(FromValues(dt, []float64{1, -1, -1, 2, 3, -1, 4, 5, 6}, 3, 3))
		assert.Equal(t, []float64{1, 2, 4, 2, 3, 5, 4, 5, 6}, got.Values())
		// Batched and larger than a tile: symmetric, lower triangle kept.
		rng := NewRNG(5)
		x := rng.Normal(dt, 0, 1, 2, 130, 130)
		y := SymmetrizeLowerTo(x.Clone(), x)
		xv, yv := x.Values(), y.Values()
		for b := 0; b < 2; b++ {
			for i := 0; i < 130; i++ {
				for j := 0; j <= i; j++ {
					o := b * 130 * 130
					require.Equal(t, xv[o+i*130+j], yv[o+i*130+j])
					require.Equal(t, xv[o+i*130+j], yv[o+j*130+i])
				}
			}
		}
		// In place.
		z := x.Clone()
		require.Same(t, z, SymmetrizeLowerTo(z, z))
		assert.Equal(t, yv, z.Values())
		requirePanics(t, func() { SymmetrizeLower(Zeros(dt, 3, 2)) }, "SymmetrizeLower")
	}
}

package tensor

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Test helpers for the shape/view/reduction tests carry an "sh" prefix so
// they cannot collide with helpers in other files of the package.

var shDTypes = []DType{Float32, Float64}

// shSeq returns the tensor 0, 1, 2, ... of the given shape.
func shSeq(dt DType, shape ...int) *Tensor {
	n := shapeSize(shape)
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i)
	}
	return FromValues(dt, v, shape...)
}

// shSameStorage reports whether a and b share backing storage.
func shSameStorage(a, b *Tensor) bool {
	if a.dtype != b.dtype {
		return false
	}
	if a.dtype == Float32 {
		return len(a.f32) > 0 && len(b.f32) > 0 && &a.f32[0] == &b.f32[0]
	}
	return len(a.f64) > 0 && len(b.f64) > 0 && &a.f64[0] == &b.f64[0]
}

// shTol is the comparison tolerance for a dtype.
func shTol(dt DType) float64 {
	if dt == Float32 {
		return 1e-5
	}
	return 1e-12
}

func shAssertValues(t *testing.T, want []float64, got *Tensor, tol float64, msgs ...any) {
	t.Helper()
	gv := got.Values()
	require.Equal(t, len(want), len(gv), msgs...)
	for i := range want {
		if math.IsNaN(want[i]) {
			assert.True(t, math.IsNaN(gv[i]), "element %d: want NaN, got %v %v", i, gv[i], msgs)
			continue
		}
		if math.IsInf(want[i], 0) {
			assert.Equal(t, want[i], gv[i], "element %d %v", i, msgs)
			continue
		}
		assert.InDelta(t, want[i], gv[i], tol*math.Max(1, math.Abs(want[i])), "element %d %v", i, msgs)
	}
}

func TestReshapeView(t *testing.T) {
	for _, dt := range shDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			a := shSeq(dt, 2, 3, 4)
			cases := []struct {
				shape, want []int
			}{
				{[]int{6, 4}, []int{6, 4}},
				{[]int{-1}, []int{24}},
				{[]int{4, -1}, []int{4, 6}},
				{[]int{2, 1, 12, 1}, []int{2, 1, 12, 1}},
				{[]int{1, 24}, []int{1, 24}},
			}
			for _, c := range cases {
				r := Reshape(a, c.shape...)
				require.Equal(t, c.want, r.Shape())
				assert.True(t, shSameStorage(a, r), "contiguous reshape must be a view")
				assert.True(t, r.IsContiguous())
				// Row-major order is preserved: element k is k.
				shAssertValues(t, a.Values(), r, 0, c.shape)
			}
			// Scalar and size-1 tensors.
			s := Reshape(Scalar(dt, 7), 1, 1)
			assert.Equal(t, []int{1, 1}, s.Shape())
			assert.Equal(t, 7.0, s.At(0, 0))
			assert.Equal(t, 7.0, Reshape(s).Item())
			// Size 0.
			z := Reshape(New(dt, 0, 3), 3, 0, 5)
			assert.Equal(t, []int{3, 0, 5}, z.Shape())
			// Writes go through.
			r := Reshape(a, 24)
			r.SetAt(100, 5)
			assert.Equal(t, 100.0, a.At(0, 1, 1))
		})
	}
}

func TestReshapeNonContiguous(t *testing.T) {
	for _, dt := range shDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			// (2,3) transposed is (3,2) [[0,3],[1,4],[2,5]]; flattening cannot be a view.
			a := shSeq(dt, 2, 3)
			tr := Transpose(a)
			f := Reshape(tr, 6)
			shAssertValues(t, []float64{0, 3, 1, 4, 2, 5}, f, 0)
			assert.False(t, shSameStorage(a, f), "flattening a transpose must copy")

			// Splitting a transposed axis can be a view: (4,6)ᵀ = (6,4) -> (2,3,4).
			b := shSeq(dt, 4, 6)
			bt := Transpose(b)
			s := Reshape(bt, 2, 3, 4)
			assert.True(t, shSameStorage(b, s), "splitting one axis is a view")
			// s[i,j,k] = bt[3i+j, k] = b[k, 3i+j] = 6k + 3i + j.
			for i := 0; i < 2; i++ {
				for j := 0; j < 3; j++ {
					for k := 0; k < 4; k++ {
						assert.Equal(t, float64(6*k+3*i+j), s.At(i, j, k))
					}
				}
			}

			// A sliced row range stays a view when merged: rows 1..2 of (4,3) are contiguous.
			c := shSeq(dt, 4, 3)
			rows := Slice(c, 0, 1, 3, 1)
			m := Reshape(rows, 6)
			assert.True(t, shSameStorage(c, m))
			shAssertValues(t, []float64{3, 4, 5, 6, 7, 8}, m, 0)

			// Column slice then flatten: must copy and give the right values.
			col := Slice(c, 1, 1, 3, 1) // [[1,2],[4,5],[7,8],[10,11]]
			shAssertValues(t, []float64{1, 2, 4, 5, 7, 8, 10, 11}, Reshape(col, -1), 0)

			// Expanded input: (3,) -> (2,3) then reshape (3,2) must copy.
			e := Expand(FromValues(dt, []float64{1, 2, 3}, 3), 2, 3)
			shAssertValues(t, []float64{1, 2, 3, 1, 2, 3}, Reshape(e, 3, 2), 0)
			// Splitting the broadcast axis alone keeps stride 0.
			e4 := Expand(FromValues(dt, []float64{1, 2, 3}, 3), 4, 3)
			v := Reshape(e4, 2, 2, 3)
			assert.Equal(t, []int{0, 0, 1}, v.Strides())
		})
	}
}

func TestReshapeErrors(t *testing.T) {
	a := shSeq(Float64, 2, 3)
	requireOpPanics(t, "Reshape", func() { Reshape(a, 4, 2) }, "(2, 3)", "(4, 2)")
	requireOpPanics(t, "Reshape", func() { Reshape(a, -1, -1) }, "(2, 3)")
	requireOpPanics(t, "Reshape", func() { Reshape(a, 4, -1) }, "(2, 3)")
	requireOpPanics(t, "Reshape", func() { Reshape(a, -2, -3) }, "(2, 3)")
	requireOpPanics(t, "Reshape", func() { Reshape(New(Float64, 0, 3), 0, -1) }, "(0, 3)")
}

func TestPermuteTranspose(t *testing.T) {
	for _, dt := range shDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			a := shSeq(dt, 2, 3, 4) // a[i,j,k] = 12i + 4j + k
			p := Permute(a, 2, 0, 1)
			require.Equal(t, []int{4, 2, 3}, p.Shape())
			assert.True(t, shSameStorage(a, p))
			assert.Equal(t, float64(12*1+4*2+3), p.At(3, 1, 2))
			pn := Permute(a, -1, 0, -2)
			assert.Equal(t, p.Shape(), pn.Shape())
			assert.Equal(t, p.Values(), pn.Values())

			tr := Transpose(a)
			require.Equal(t, []int{2, 4, 3}, tr.Shape())
			assert.Equal(t, float64(12*1+4*2+3), tr.At(1, 3, 2))
			// Transposing twice restores the layout.
			tt := Transpose(tr)
			assert.Equal(t, a.Strides(), tt.Strides())
			assert.True(t, tt.IsContiguous())

			m := FromValues(dt, []float64{1, 2, 3, 4, 5, 6}, 2, 3)
			shAssertValues(t, []float64{1, 4, 2, 5, 3, 6}, Transpose(m), 0)
			tr.SetAt(-1, 0, 0, 1)
			assert.Equal(t, -1.0, a.At(0, 1, 0))
		})
	}
	a := shSeq(Float32, 2, 3)
	requireOpPanics(t, "Permute", func() { Permute(a, 0, 0) }, "(2, 3)")
	requireOpPanics(t, "Permute", func() { Permute(a, 0) }, "(2, 3)")
	requireOpPanics(t, "Permute", func() { Permute(a, 0, 2) }, "(2, 3)")
	requireOpPanics(t, "Transpose", func() { Transpose(shSeq(Float32, 3)) }, "(3,)")
}

func TestViewExpand(t *testing.T) {
	for _, dt := range shDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			col := FromValues(dt, []float64{1, 2}, 2, 1)
			e := Expand(col, 3, 2, 4)
			require.Equal(t, []int{3, 2, 4}, e.Shape())
			assert.Equal(t, []int{0, 1, 0}, e.Strides())
			assert.True(t, shSameStorage(col, e))
			want := make([]float64, 0, 24)
			for i := 0; i < 3; i++ {
				want = append(want, 1, 1, 1, 1, 2, 2, 2, 2)
			}
			shAssertValues(t, want, e, 0)
			same := Expand(col, 2, 1)
			assert.Equal(t, col.Shape(), same.Shape())
			requireOpPanics(t, "Expand", func() { Expand(col, 3, 4) }, "(2, 1)", "(3, 4)")
			requireOpPanics(t, "Expand", func() { Expand(col, 2) }, "(2, 1)", "(2,)")
		})
	}
}

func TestViewSqueezeUnsqueeze(t *testing.T) {
	for _, dt := range shDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			a := shSeq(dt, 1, 3, 1, 2)
			assert.Equal(t, []int{3, 2}, Squeeze(a).Shape())
			assert.Equal(t, []int{3, 1, 2}, Squeeze(a, 0).Shape())
			assert.Equal(t, []int{1, 3, 2}, Squeeze(a, -2).Shape())
			s := Squeeze(a, 0, 2)
			assert.True(t, shSameStorage(a, s))
			shAssertValues(t, a.Values(), s, 0)
			requireOpPanics(t, "Squeeze", func() { Squeeze(a, 1) }, "axis 1", "(1, 3, 1, 2)")
			requireOpPanics(t, "Squeeze", func() { Squeeze(a, 4) }, "axis 4", "(1, 3, 1, 2)")
			requireOpPanics(t, "Squeeze", func() { Squeeze(a, 0, -4) }, "repeated")

			b := shSeq(dt, 2, 3)
			assert.Equal(t, []int{1, 2, 3}, Unsqueeze(b, 0).Shape())
			assert.Equal(t, []int{2, 1, 3}, Unsqueeze(b, 1).Shape())
			assert.Equal(t, []int{2, 3, 1}, Unsqueeze(b, 2).Shape())
			assert.Equal(t, []int{2, 3, 1}, Unsqueeze(b, -1).Shape())
			assert.Equal(t, []int{1, 2, 3}, Unsqueeze(b, -3).Shape())
			u := Unsqueeze(b, 1)
			assert.True(t, u.IsContiguous())
			assert.Equal(t, 4.0, u.At(1, 0, 1))
			requireOpPanics(t, "Unsqueeze", func() { Unsqueeze(b, 3) }, "axis 3", "(2, 3)")
			requireOpPanics(t, "Unsqueeze", func() { Unsqueeze(b, -4) }, "axis -4")
			// Unsqueeze of a transposed view keeps the values.
			ut := Unsqueeze(Transpose(b), 0)
			shAssertValues(t, []float64{0, 3, 1, 4, 2, 5}, ut, 0)
		})
	}
}

func TestSliceView(t *testing.T) {
	const inf, ninf = math.MaxInt, math.MinInt
	cases := []struct {
		start, stop, step int
		want              []float64
	}{
		{1, 4, 1, []float64{1, 2, 3}},
		{0, 6, 2, []float64{0, 2, 4}},
		{1, 6, 2, []float64{1, 3, 5}},
		{-2, inf, 1, []float64{4, 5}},
		{-100, 2, 1, []float64{0, 1}},
		{4, 100, 1, []float64{4, 5}},
		{3, 1, 1, nil},
		{inf, ninf, -1, []float64{5, 4, 3, 2, 1, 0}},
		{4, 1, -1, []float64{4, 3, 2}},
		{-1, -4, -2, []float64{5, 3}},
		{5, ninf, -3, []float64{5, 2}},
		{1, 4, -1, nil},
		{10, 20, 1, nil},
		{0, 0, 1, nil},
	}
	for _, dt := range shDTypes {
		a := shSeq(dt, 6)
		for _, c := range cases {
			s := Slice(a, 0, c.start, c.stop, c.step)
			require.Equal(t, []int{len(c.want)}, s.Shape(), "%v %+v", dt, c)
			if len(c.want) > 0 {
				assert.True(t, shSameStorage(a, s))
			}
			shAssertValues(t, c.want, s, 0, dt, c)
		}
		// 2-D, negative axis, slicing a slice, writes go through.
		m := shSeq(dt, 3, 4) // m[i,j] = 4i+j
		s := Slice(Slice(m, -1, inf, ninf, -1), 0, 0, 3, 2)
		shAssertValues(t, []float64{3, 2, 1, 0, 11, 10, 9, 8}, s, 0)
		s.SetAt(-7, 1, 0)
		assert.Equal(t, -7.0, m.At(2, 3))
		requireOpPanics(t, "Slice", func() { Slice(m, 2, 0, 1, 1) }, "axis 2", "(3, 4)")
		requireOpPanics(t, "Slice", func() { Slice(m, 0, 0, 1, 0) }, "step is 0", "(3, 4)")
	}
}

// A large permuted view copied in parallel (split along its first axis)
// holds every element where the permutation puts it.
func TestLargePermutedCopy(t *testing.T) {
	for _, dt := range []DType{Float32, Float64} {
		x := Arange(dt, 0, 32*128*4*16, 1)
		v := Permute(Reshape(x, 32, 128, 4, 16), 0, 2, 1, 3) // (32, 4, 128, 16)
		c := v.Clone()
		require.True(t, c.IsContiguous())
		vals := c.Values()
		for _, idx := range [][4]int{{0, 0, 0, 0}, {31, 3, 127, 15}, {7, 2, 64, 9}, {16, 1, 5, 0}, {15, 3, 127, 15}} {
			b, h, l, d := idx[0], idx[1], idx[2], idx[3]
			want := float64(((b*128+l)*4+h)*16 + d)
			require.Equal(t, want, vals[((b*4+h)*128+l)*16+d], "%v %v", dt, idx)
		}
	}
}

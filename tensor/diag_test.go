package tensor

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

var diagDTypes = []DType{Float32, Float64}

func TestDiagonalHandWorked(t *testing.T) {
	m3 := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	cases := []struct {
		name      string
		a         func(dt DType) *Tensor
		wantShape []int
		want      []float64
	}{
		{"3×3", func(dt DType) *Tensor { return FromValues(dt, m3, 3, 3) }, []int{3}, []float64{1, 5, 9}},
		{"1×1", func(dt DType) *Tensor { return FromValues(dt, []float64{7}, 1, 1) }, []int{1}, []float64{7}},
		{"batch (2,2,2)", func(dt DType) *Tensor {
			return FromValues(dt, []float64{1, 2, 3, 4, 5, 6, 7, 8}, 2, 2, 2)
		}, []int{2, 2}, []float64{1, 4, 5, 8}},
		// The transpose has the same diagonal: a strided view is read right.
		{"transposed 3×3", func(dt DType) *Tensor { return Transpose(FromValues(dt, m3, 3, 3)) }, []int{3}, []float64{1, 5, 9}},
		// Rows and columns 0 and 2 of arange(16) as 4×4: [[0, 2], [8, 10]].
		{"step-2 slice of 4×4", func(dt DType) *Tensor {
			a := Reshape(Arange(dt, 0, 16, 1), 4, 4)
			return Slice(Slice(a, 0, 0, 4, 2), 1, 0, 4, 2)
		}, []int{2}, []float64{0, 10}},
		// Batch axes moved last-to-first: b[k][i][j] = a[i][j][k] for the
		// (2,2,2) batch above, so b[0] = [[1,3],[5,7]], b[1] = [[2,4],[6,8]].
		{"permuted batch", func(dt DType) *Tensor {
			return Permute(FromValues(dt, []float64{1, 2, 3, 4, 5, 6, 7, 8}, 2, 2, 2), 2, 0, 1)
		}, []int{2, 2}, []float64{1, 7, 2, 8}},
		{"broadcast batch", func(dt DType) *Tensor {
			return Expand(FromValues(dt, []float64{1, 2, 3, 4}, 1, 2, 2), 3, 2, 2)
		}, []int{3, 2}, []float64{1, 4, 1, 4, 1, 4}},
		{"empty batch", func(dt DType) *Tensor { return New(dt, 0, 2, 2) }, []int{0, 2}, []float64{}},
	}
	for _, dt := range diagDTypes {
		for _, tc := range cases {
			t.Run(dt.String()+"/"+tc.name, func(t *testing.T) {
				a := tc.a(dt)
				before := a.Values()
				got := Diagonal(a)
				assert.Equal(t, dt, got.DType())
				assert.Equal(t, tc.wantShape, got.Shape())
				assert.True(t, got.IsContiguous())
				assert.Equal(t, tc.want, got.Values())
				if got.Size() > 0 {
					// A copy: writing to it leaves a alone.
					got.Fill(-1)
					assert.Equal(t, before, a.Values())
				}
			})
		}
	}
}

func TestDiagonalTo(t *testing.T) {
	for _, dt := range diagDTypes {
		a := FromValues(dt, []float64{1, 2, 3, 4}, 2, 2)
		dst := Full(dt, -1, 2)
		got := DiagonalTo(dst, a)
		assert.Same(t, dst, got, "%v", dt)
		assert.Equal(t, []float64{1, 4}, dst.Values(), "%v", dt)
	}
}

func TestAddDiagHandWorked(t *testing.T) {
	a2 := []float64{1, 2, 3, 4}
	m3 := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	val := func(v []float64, shape ...int) func(DType) *Tensor {
		return func(dt DType) *Tensor { return FromValues(dt, v, shape...) }
	}
	cases := []struct {
		name      string
		a, d      func(dt DType) *Tensor
		wantShape []int
		want      []float64
	}{
		{"2×2 + scalar", val(a2, 2, 2), func(dt DType) *Tensor { return Scalar(dt, 10) }, []int{2, 2}, []float64{11, 2, 3, 14}},
		{"2×2 + vector", val(a2, 2, 2), val([]float64{10, 20}), []int{2, 2}, []float64{11, 2, 3, 24}},
		{"3×3 + vector", val(m3, 3, 3), val([]float64{-1, 0.5, 100}), []int{3, 3}, []float64{0, 2, 3, 4, 5.5, 6, 7, 8, 109}},
		{"transposed 2×2 + vector", func(dt DType) *Tensor { return Transpose(FromValues(dt, a2, 2, 2)) },
			val([]float64{10, 20}), []int{2, 2}, []float64{11, 3, 2, 24}},
		{"batch (2,2,2) + scalar", val([]float64{1, 2, 3, 4, 5, 6, 7, 8}, 2, 2, 2), func(dt DType) *Tensor { return Scalar(dt, 1) },
			[]int{2, 2, 2}, []float64{2, 2, 3, 5, 6, 6, 7, 9}},
		{"batch (2,2,2) + shared (2,)", val([]float64{1, 2, 3, 4, 5, 6, 7, 8}, 2, 2, 2), val([]float64{10, 20}),
			[]int{2, 2, 2}, []float64{11, 2, 3, 24, 15, 6, 7, 28}},
		{"batch (2,2,2) + per-matrix (2,2)", val([]float64{1, 2, 3, 4, 5, 6, 7, 8}, 2, 2, 2), val([]float64{10, 20, 30, 40}, 2, 2),
			[]int{2, 2, 2}, []float64{11, 2, 3, 24, 35, 6, 7, 48}},
		// One matrix, three diagonals: the matrix broadcasts along d's batch.
		{"2×2 + (3,2) broadcasts a", val(a2, 2, 2), val([]float64{1, 1, 2, 2, 3, 3}, 3, 2),
			[]int{3, 2, 2}, []float64{2, 2, 3, 5, 3, 2, 3, 6, 4, 2, 3, 7}},
		// (2,1,2,2) with (3,2): both broadcast to (2,3,2,2).
		{"(2,1,2,2) + (3,2) broadcast both", val([]float64{1, 2, 3, 4, 5, 6, 7, 8}, 2, 1, 2, 2), val([]float64{0, 0, 1, 1, 2, 2}, 3, 2),
			[]int{2, 3, 2, 2}, []float64{1, 2, 3, 4, 2, 2, 3, 5, 3, 2, 3, 6, 5, 6, 7, 8, 6, 6, 7, 9, 7, 6, 7, 10}},
		{"0×0", func(dt DType) *Tensor { return New(dt, 0, 0) }, func(dt DType) *Tensor { return New(dt, 0) }, []int{0, 0}, []float64{}},
	}
	for _, dt := range diagDTypes {
		for _, tc := range cases {
			t.Run(dt.String()+"/"+tc.name, func(t *testing.T) {
				a, d := tc.a(dt), tc.d(dt)
				before := a.Values()
				got := AddDiag(a, d)
				assert.Equal(t, dt, got.DType())
				assert.Equal(t, tc.wantShape, got.Shape())
				assert.Equal(t, tc.want, got.Values())
				assert.Equal(t, before, a.Values(), "a must not change")

				// Into a dirty destination: every element is overwritten.
				dst := Full(dt, 99, tc.wantShape...)
				assert.Same(t, dst, AddDiagTo(dst, a, d))
				assert.Equal(t, tc.want, dst.Values())
			})
		}
	}
}

func TestAddDiagInPlace(t *testing.T) {
	for _, dt := range diagDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			a := FromValues(dt, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, 3, 3)
			got := AddDiagTo(a, a, FromValues(dt, []float64{1, 2, 3}))
			assert.Same(t, a, got)
			assert.Equal(t, []float64{2, 2, 3, 4, 7, 6, 7, 8, 12}, a.Values())

			// In place through a transposed view writes the same diagonal of
			// the underlying storage and leaves the rest alone.
			base := FromValues(dt, []float64{1, 2, 3, 4}, 2, 2)
			at := Transpose(base)
			AddDiagTo(at, at, Scalar(dt, 0.5))
			assert.Equal(t, []float64{1.5, 2, 3, 4.5}, base.Values())

			// In place on one matrix of a batch (a view with an offset).
			batch := FromValues(dt, []float64{1, 2, 3, 4, 5, 6, 7, 8}, 2, 2, 2)
			second := Squeeze(Slice(batch, 0, 1, 2, 1), 0)
			AddDiagTo(second, second, FromValues(dt, []float64{10, 20}))
			assert.Equal(t, []float64{1, 2, 3, 4, 15, 6, 7, 28}, batch.Values())
		})
	}
}

func TestDiagPanics(t *testing.T) {
	for _, dt := range diagDTypes {
		other := Float64
		if dt == Float64 {
			other = Float32
		}
		sq := New(dt, 3, 3)
		t.Run(dt.String(), func(t *testing.T) {
			requirePanics(t, func() { Diagonal(New(dt, 3)) }, "Diagonal", "(3,)")
			requirePanics(t, func() { Diagonal(New(dt, 2, 3)) }, "Diagonal", "(2, 3)")
			requirePanics(t, func() { Diagonal(Scalar(dt, 1)) }, "Diagonal", "()")
			requirePanics(t, func() { DiagonalTo(New(dt, 2), sq) }, "Diagonal", "(2,)", "(3,)")
			requirePanics(t, func() { DiagonalTo(New(other, 3), sq) }, "Diagonal")

			requirePanics(t, func() { AddDiag(New(dt, 2, 3), New(dt, 3)) }, "AddDiag", "(2, 3)")
			requirePanics(t, func() { AddDiag(New(dt, 3), Scalar(dt, 1)) }, "AddDiag", "(3,)")
			requirePanics(t, func() { AddDiag(sq, New(dt, 2)) }, "AddDiag", "(3, 3)", "(2,)")
			requirePanics(t, func() { AddDiag(New(dt, 2, 3, 3), New(dt, 4, 3)) }, "AddDiag", "(2, 3, 3)", "(4, 3)")
			requirePanics(t, func() { AddDiag(sq, New(other, 3)) }, "AddDiag", "mixed dtypes")
			requirePanics(t, func() { AddDiagTo(New(dt, 2, 2), sq, New(dt, 3)) }, "AddDiag", "(2, 2)")
			// a broadcasts along d's batch, so a cannot be its own result.
			requirePanics(t, func() { AddDiagTo(sq, sq, New(dt, 2, 3)) }, "AddDiag", "(2, 3, 3)")
			// The destination must not overlap a except as the same view,
			// nor d at all.
			big := New(dt, 4, 4)
			requirePanics(t, func() {
				AddDiagTo(Slice(Slice(big, 0, 1, 4, 1), 1, 1, 4, 1), Slice(Slice(big, 0, 0, 3, 1), 1, 0, 3, 1), New(dt, 3))
			}, "AddDiag", "overlaps")
			requirePanics(t, func() { AddDiagTo(sq, New(dt, 3, 3), Slice(Reshape(sq, 9), 0, 0, 3, 1)) }, "AddDiag", "overlaps")
		})
	}
}

package tensor

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// L = [[2, 0], [1, 3]]: L·x = (4, 11) gives x = (2, 3) by forward
// substitution; A = L·Lᵀ = [[4, 2], [2, 10]] maps (1, 1) to (6, 12).
func TestSolveToForms(t *testing.T) {
	for _, dt := range cvDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			l := FromValues(dt, []float64{2, 0, 1, 3}, 2, 2)
			b := FromValues(dt, []float64{4, 11}, 2, 1)
			dst := Full(dt, 9, 2, 1)
			require.Same(t, dst, TriSolveTo(dst, l, b, true, false))
			assert.InDeltaSlice(t, []float64{2, 3}, dst.Values(), 1e-6)
			assert.Equal(t, []float64{4, 11}, b.Values(), "b is not modified")

			// Lᵀ·x = (7, 6): x1 = 2, x0 = (7 − 2)/2 = 2.5.
			bt := FromValues(dt, []float64{7, 6}, 2, 1)
			assert.InDeltaSlice(t, []float64{2.5, 2}, TriSolveTo(nil, l, bt, true, true).Values(), 1e-6)

			cb := FromValues(dt, []float64{6, 12}, 2, 1)
			require.Same(t, cb, CholeskySolveTo(cb, l, cb), "b may be the destination")
			assert.InDeltaSlice(t, []float64{1, 1}, cb.Values(), 1e-6)

			require.Panics(t, func() { TriSolveTo(Zeros(dt, 2, 2), l, b, true, false) }, "wrong shape")
			overlap := Slice(Reshape(l, 4, 1), 0, 0, 2, 1)
			require.True(t, overlap.IsContiguous())
			require.Panics(t, func() { TriSolveTo(overlap, l, b, true, false) }, "overlaps a")
		})
	}
}

// Rows 2, 0, 2 of [[0, 1], [2, 3], [4, 5]] are [4, 5], [0, 1], [4, 5]; along
// axis 1, columns 1, 1 are [1, 1], [3, 3], [5, 5].
func TestIndexSelectTo(t *testing.T) {
	for _, dt := range cvDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			a := FromValues(dt, []float64{0, 1, 2, 3, 4, 5}, 3, 2)
			dst := Full(dt, 9, 3, 2)
			require.Same(t, dst, IndexSelectTo(dst, a, 0, []int{2, 0, 2}))
			assert.Equal(t, []float64{4, 5, 0, 1, 4, 5}, dst.Values())

			cols := Full(dt, 9, 2, 3)
			IndexSelectTo(Transpose(cols), a, -1, []int{1, 1})
			assert.Equal(t, []float64{1, 3, 5, 1, 3, 5}, cols.Values(), "strided destination")

			require.Panics(t, func() { IndexSelectTo(Zeros(dt, 2, 2), a, 0, []int{2, 0, 2}) })
			require.Panics(t, func() { IndexSelectTo(a, a, 0, []int{2, 0, 1}) })
		})
	}
}

func TestSolveToAndInverseTo(t *testing.T) {
	for _, dt := range laDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			// [[2, 1], [1, 3]]·x = [3, 5] → x = [0.8, 1.4]; the inverse is
			// [[3, −1], [−1, 2]]/5.
			a := FromValues(dt, []float64{2, 1, 1, 3}, 2, 2)
			b := FromValues(dt, []float64{3, 5}, 2, 1)
			dst := Full(dt, 99, 2, 1)
			x, err := SolveTo(dst, a, b)
			require.NoError(t, err)
			require.Same(t, dst, x)
			laAssertClose(t, []float64{0.8, 1.4}, x, laTol(dt, 2))
			laAssertClose(t, []float64{3, 5}, b, 0, "b is not touched")

			// In place on the right-hand side.
			bb := b.Clone()
			x, err = SolveTo(bb, a, bb)
			require.NoError(t, err)
			require.Same(t, bb, x)
			laAssertClose(t, []float64{0.8, 1.4}, bb, laTol(dt, 2))

			inv := Full(dt, 99, 2, 2)
			got, err := InverseTo(inv, a)
			require.NoError(t, err)
			require.Same(t, inv, got)
			laAssertClose(t, []float64{0.6, -0.2, -0.2, 0.4}, inv, laTol(dt, 2))

			// Singular: an error wrapping ErrSingular.
			_, err = InverseTo(New(dt, 2, 2), FromValues(dt, []float64{1, 2, 2, 4}, 2, 2))
			assert.True(t, errors.Is(err, ErrSingular), "got %v", err)

			// Misuse panics naming the op.
			requirePanics(t, func() { SolveTo(New(dt, 3, 1), a, b) }, "SolveTo")
			requirePanics(t, func() { InverseTo(a, a) }, "InverseTo")
		})
	}
}

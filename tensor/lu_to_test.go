package tensor

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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

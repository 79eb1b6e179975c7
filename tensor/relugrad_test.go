package tensor

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ReluGrad(v, y) passes v where y > 0 and gives v·0 (a signed zero) where
// y = 0; a NaN in y propagates; y < 0 flips the sign, as sign(y) does.
func TestReluGrad(t *testing.T) {
	for _, dt := range cvDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			v := FromValues(dt, []float64{1.5, -2, 3, -4, 5, 6}, 2, 3)
			y := FromValues(dt, []float64{0.5, 2, 0, 0, math.NaN(), -1}, 2, 3)
			got := ReluGrad(v, y).Values()
			assert.Equal(t, []float64{1.5, -2, 0, 0}, got[:4])
			assert.False(t, math.Signbit(got[2]))
			assert.True(t, math.Signbit(got[3]), "−4·0 is −0")
			assert.True(t, math.IsNaN(got[4]))
			assert.Equal(t, -6.0, got[5])

			// Broadcasting y over rows, into a reused destination.
			dst := Full(dt, 9, 2, 3)
			yb := FromValues(dt, []float64{1, 0, 2}, 3)
			require.Same(t, dst, ReluGradTo(dst, v, yb))
			assert.Equal(t, []float64{1.5, 0, 3, -4, 0, 6}, dst.Values())

			// A long run takes the vectorised loop.
			n := 1000
			vv, yy, want := make([]float64, n), make([]float64, n), make([]float64, n)
			for i := range vv {
				vv[i] = float64(i + 1)
				if i%3 == 0 {
					yy[i] = float64(i%7) + 0.5
					want[i] = vv[i]
				}
			}
			assert.Equal(t, want, ReluGrad(FromValues(dt, vv, n), FromValues(dt, yy, n)).Values())
		})
	}
}

package tensor_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/tensor"
)

// x·log y by hand, y = (e, 1, 0) broadcast over the rows of x:
// row 0: 2·log e = 2, 3·log 1 = 0, 0·log 0 = 0 by convention;
// row 1: 0·log e = 0, −1·log 1 = −0, 1·log 0 = −Inf.
// A NaN y stays NaN even for x = 0, and log of a negative y is NaN.
func TestXlogyByHand(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		x := tensor.FromValues(dt, []float64{2, 3, 0, 0, -1, 1}, 2, 3)
		y := tensor.FromValues(dt, []float64{math.E, 1, 0}, 3)
		got := tensor.Xlogy(x, y).Values()
		assert.InDelta(t, 2, got[0], 1e-6)
		assert.Equal(t, []float64{0, 0, 0, 0}, got[1:5])
		assert.True(t, math.IsInf(got[5], -1), "1·log 0 = %v", got[5])
		nan := tensor.Xlogy(tensor.FromValues(dt, []float64{0, 1}, 2), tensor.FromValues(dt, []float64{math.NaN(), -1}, 2)).Values()
		assert.True(t, math.IsNaN(nan[0]) && math.IsNaN(nan[1]), "%v", nan)
	}
}

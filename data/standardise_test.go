package data

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/tensor"
)

func TestStandardise(t *testing.T) {
	// Column 0: 1, 2, 3, 4: mean 2.5, population variance (2.25+0.25+0.25+2.25)/4 = 1.25.
	// Column 1: constant 5: centred, not scaled.
	// Column 2: 1e4 + (−1, 1, −1, 1): mean 1e4, std 1 (exact in float32 too).
	s := math.Sqrt(1.25)
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		tol := 1e-12
		if dt == tensor.Float32 {
			tol = 1e-6
		}
		x := tensor.FromValues(dt, []float64{
			1, 5, 1e4 - 1,
			2, 5, 1e4 + 1,
			3, 5, 1e4 - 1,
			4, 5, 1e4 + 1,
		}, 4, 3)
		st := Standardise(x)
		assert.InDeltaSlice(t, []float64{2.5, 5, 1e4}, st.Mean, 1e-12, dt)
		assert.InDeltaSlice(t, []float64{s, 0, 1}, st.Std, 1e-12, dt)
		assert.InDeltaSlice(t, []float64{
			-1.5 / s, 0, -1,
			-0.5 / s, 0, 1,
			0.5 / s, 0, -1,
			1.5 / s, 0, 1,
		}, x.Values(), tol, dt)

		// Held-out data uses the training statistics.
		test := tensor.FromValues(dt, []float64{2.5 + s, 7, 1e4 + 2}, 1, 3)
		st.Apply(test)
		assert.InDeltaSlice(t, []float64{1, 2, 2}, test.Values(), tol, dt)
		st.Invert(test)
		assert.InDeltaSlice(t, []float64{2.5 + s, 7, 1e4 + 2}, test.Values(), 1e4*tol, dt)

		assert.Panics(t, func() { st.Apply(tensor.Zeros(dt, 2, 2)) }, dt)
		assert.Panics(t, func() { Standardise(tensor.Zeros(dt, 4)) }, dt)
	}
}

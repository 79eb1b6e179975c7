package tensor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// By hand (as graph's TestChannelAffineHand): x (2, 2, 1, 2) = 1..8, scale
// (2, −1), shift (10, 20) give [12 14 17 16 20 22 13 12]; ChannelDot(x, x)
// = (66, 138).
func TestChannelAffineValues(t *testing.T) {
	for _, dt := range []DType{Float32, Float64} {
		x := FromValues(dt, []float64{1, 2, 3, 4, 5, 6, 7, 8}, 2, 2, 1, 2)
		s := FromValues(dt, []float64{2, -1}, 2)
		b := FromValues(dt, []float64{10, 20}, 2)
		assert.Equal(t, []float64{12, 14, 17, 16, 20, 22, 13, 12}, ChannelAffine(x, s, b).Values())
		assert.Equal(t, []float64{2, 4, -3, -4, 10, 12, -7, -8}, ChannelAffine(x, s, nil).Values())
		assert.Equal(t, []float64{66, 138}, ChannelDot(x, x).Values())

		assert.Equal(t, []float64{3.5, 5.5, 4.25, 4.25}, ChannelMoments(x).Values())

		// A permuted view: xt (2, 2, 2) is [[1 3] [2 4]], [[5 7] [6 8]], so
		// channel 0 holds {1, 3, 5, 7} and channel 1 {2, 4, 6, 8}.
		xt := Permute(Reshape(x, 2, 2, 2), 0, 2, 1)
		assert.Equal(t, []float64{12, 16, 18, 16, 20, 24, 14, 12}, ChannelAffine(xt, s, b).Values())

		// In place.
		y := x.Clone()
		ChannelAffineTo(y, y, s, b)
		assert.Equal(t, []float64{12, 14, 17, 16, 20, 22, 13, 12}, y.Values())
	}
}

// TestChannelAffineLarge checks the goroutine-split paths against the
// broadcasting composite x·scale + shift and Σ a·b over the other axes.
func TestChannelAffineLarge(t *testing.T) {
	rng := NewRNG(3)
	for _, dt := range []DType{Float32, Float64} {
		x := rng.Normal(dt, 0, 1, 64, 40, 9, 9)
		v := rng.Normal(dt, 0, 1, 64, 40, 9, 9)
		s := rng.Normal(dt, 0, 1, 40)
		b := rng.Normal(dt, 0, 1, 40)
		want := Add(Mul(x, Reshape(s, 1, 40, 1, 1)), Reshape(b, 1, 40, 1, 1))
		assert.Equal(t, want.Values(), ChannelAffine(x, s, b).Values())
		mom := ChannelMoments(x)
		mean, variance := Mean(x, []int{0, 2, 3}, false), Variance(x, []int{0, 2, 3}, false, 0)
		for c := range 40 {
			assert.InDelta(t, mean.Values()[c], mom.Values()[c], 1e-6, "mean %d", c)
			assert.InDelta(t, variance.Values()[c], mom.Values()[40+c], 1e-5, "variance %d", c)
		}
		dot := Sum(Mul(x, v), []int{0, 2, 3}, false)
		got := ChannelDot(x, v)
		tol := 1e-9
		if dt == Float32 {
			tol = 2e-3
		}
		require.Equal(t, []int{40}, got.Shape())
		for c, w := range dot.Values() {
			assert.InDelta(t, w, got.Values()[c], tol, "channel %d", c)
		}
	}
}

func TestChannelAffineMisuse(t *testing.T) {
	x := New(Float64, 4, 3, 2)
	s := New(Float64, 3)
	requirePanics(t, func() { ChannelAffine(x, New(Float64, 2), nil) }, "ChannelAffine", "(4, 3, 2) float64 and (2,) float64 do not fit")
	requirePanics(t, func() { ChannelAffine(x, s, New(Float64, 4)) }, "ChannelAffine", "do not fit")
	requirePanics(t, func() { ChannelAffine(New(Float64, 3), s, nil) }, "ChannelAffine", "do not fit")
	requirePanics(t, func() { ChannelAffine(x, New(Float32, 3), nil) }, "ChannelAffine", "float32")
	requirePanics(t, func() { ChannelAffineTo(New(Float64, 4, 3), x, s, nil) }, "ChannelAffine", "destination")
	requirePanics(t, func() { ChannelAffineTo(s, s, s, nil) }, "ChannelAffine")
	requirePanics(t, func() { ChannelDot(x, New(Float64, 4, 3)) }, "ChannelDot", "one shape")
	requirePanics(t, func() { ChannelMoments(s) }, "ChannelMoments", "(N, C, ...)")
	requirePanics(t, func() { ChannelMoments(New(Float64, 2, 3, 0)) }, "ChannelMoments", "no elements per channel")
}

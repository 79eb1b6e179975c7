package tensor

import (
	"math"
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

// TestChannelAffineLarge checks the goroutine-split paths (4,096 runs of 81
// elements, 64 channels: each kernel splits in two on two cores) against the
// broadcasting composites x·scale + shift, Σ a·b, Mean and Variance over the
// other axes. Within a rounding: arm64 fuses x·s + b into one FMA.
func TestChannelAffineLarge(t *testing.T) {
	rng := NewRNG(3)
	const c = 64
	x := rng.Normal(Float32, 0, 1, 64, c, 9, 9)
	v := rng.Normal(Float32, 0, 1, 64, c, 9, 9)
	s := rng.Normal(Float32, 0, 1, c)
	b := rng.Normal(Float32, 0, 1, c)
	want := Add(Mul(x, Reshape(s, 1, c, 1, 1)), Reshape(b, 1, c, 1, 1)).Values()
	for i, g := range ChannelAffine(x, s, b).Values() {
		if math.Abs(g-want[i]) > 1e-6*(1+math.Abs(want[i])) {
			t.Fatalf("element %d: %v, want %v", i, g, want[i])
		}
	}
	mom := ChannelMoments(x)
	mean, variance := Mean(x, []int{0, 2, 3}, false), Variance(x, []int{0, 2, 3}, false, 0)
	dot := Sum(Mul(x, v), []int{0, 2, 3}, false)
	got := ChannelDot(x, v)
	require.Equal(t, []int{c}, got.Shape())
	for ch := range c {
		assert.InDelta(t, mean.Values()[ch], mom.Values()[ch], 1e-6, "mean %d", ch)
		assert.InDelta(t, variance.Values()[ch], mom.Values()[c+ch], 1e-5, "variance %d", ch)
		assert.InDelta(t, dot.Values()[ch], got.Values()[ch], 2e-3, "dot %d", ch)
	}
}

// TestChannelAffineFeatures checks the channels-last paths (runs of one:
// a layer's (N, C) features), split over goroutines at 4,096 × 64, against
// the broadcasting composites.
func TestChannelAffineFeatures(t *testing.T) {
	rng := NewRNG(4)
	const n, c = 4096, 64
	x := rng.Normal(Float32, 0, 1, n, c)
	v := rng.Normal(Float32, 0, 1, n, c)
	s := rng.Normal(Float32, 0, 1, c)
	b := rng.Normal(Float32, 0, 1, c)
	// A multiply then an add per row, as the composite: equal bit for bit.
	assert.Equal(t, Add(Mul(x, s), b).Values(), ChannelAffine(x, s, b).Values())
	assert.Equal(t, Mul(x, s).Values(), ChannelAffine(x, s, nil).Values())
	dot := Sum(Mul(x, v), []int{0}, false).Values()
	for ch, g := range ChannelDot(x, v).Values() {
		assert.InDelta(t, dot[ch], g, 2e-3, "dot %d", ch)
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

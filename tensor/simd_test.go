package tensor

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// The vector sigmoid and tanh must match the scalar code bit for bit on every
// length (full blocks and tails), on blocks that fall back to the scalar
// code (|x| > 87, NaN, ±Inf) and on signed zeros and subnormals.
func TestSigmoidVectorMatchesScalar(t *testing.T) {
	rng := NewRNG(7)
	special := []float32{0, float32(math.Copysign(0, -1)), 87, -87, 87.5, -87.5, 100, -100,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-40, -1e-40, 0.5, -0.5}
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 64, 1000, 1003} {
		for _, scale := range []float64{1, 10, 60} {
			x := rng.Normal(Float32, 0, scale, n).Float32s()
			for i := range x {
				if i%13 == 5 {
					x[i] = special[(i/13)%len(special)]
				}
			}
			got, want := make([]float32, n), make([]float32, n)
			sigmoidRun32(got, x)
			sigmoidScalar32(want, x)
			requireSameBits32(t, x, want, got)
			tanhRun32(got, x)
			tanhScalar32(want, x)
			requireSameBits32(t, x, want, got)
		}
	}
	// σ(0) = 1/2 and σ(ln 3) = 3/4 to within rounding, in a full block.
	x := []float32{0, float32(math.Log(3)), 0, 0, 0, 0, 0, 0}
	y := make([]float32, 8)
	sigmoidRun32(y, x)
	require.Equal(t, float32(0.5), y[0])
	require.InDelta(t, 0.75, float64(y[1]), 1e-7)
}

// A dense grid of [-88, 88] in steps of 2⁻¹⁰, through both branches of
// tanh and up to where the vector kernels hand over to the scalar code.
func TestActivationVectorMatchesScalarGrid(t *testing.T) {
	n := 176 << 10
	x := make([]float32, n)
	for i := range x {
		x[i] = -88 + float32(i)/1024
	}
	got, want := make([]float32, n), make([]float32, n)
	sigmoidRun32(got, x)
	sigmoidScalar32(want, x)
	requireSameBits32(t, x, want, got)
	tanhRun32(got, x)
	tanhScalar32(want, x)
	requireSameBits32(t, x, want, got)
	// tanh(±0.625) sits on the branch boundary; tanh(x) → ±1 far out.
	y := make([]float32, 8)
	tanhRun32(y, []float32{0.625, -0.625, 40, -40, 0, 0, 0, 0})
	require.InDelta(t, math.Tanh(0.625), float64(y[0]), 1e-7)
	require.InDelta(t, -math.Tanh(0.625), float64(y[1]), 1e-7)
	require.Equal(t, []float32{1, -1}, y[2:4])
}

func requireSameBits32(t *testing.T, x, want, got []float32) {
	t.Helper()
	for i := range want {
		w, g := want[i], got[i]
		if w != w && g != g || math.Float32bits(w) == math.Float32bits(g) {
			continue // testify per element would dominate the test's time
		}
		require.Failf(t, "vector and scalar results differ", "i=%d x=%v: want %v, got %v", i, x[i], w, g)
	}
}

package tensor

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// log1pUnit32 over a dense grid of [0, 1] (every 2⁻²² plus the tiny and
// subnormal values below it) against float64 math.Log1p: at most 1.25 ulp of
// the float32 result (measured: 1.105 ulp near e = 0.99, where the rounding
// of s = e/(2+e) dominates; the bound leaves a little margin).
func TestLog1pUnit32Sweep(t *testing.T) {
	worst, at := 0.0, float32(0)
	check := func(e float32) {
		want := math.Log1p(float64(e))
		aw := math.Abs(float64(float32(want)))
		ulp := math.Max(float64(math.Nextafter32(float32(aw), float32(math.Inf(1))))-aw, 0x1p-149)
		if d := math.Abs(float64(log1pUnit32(e))-want) / ulp; d > worst {
			worst, at = d, e
		}
	}
	const steps = 1 << 22
	for i := 0; i <= steps; i++ {
		check(float32(i) / steps)
	}
	for e := float32(0x1p-149); e < 0x1p-22; e *= 1.01 {
		check(e)
		e = max(e, math.Nextafter32(e, 1))
	}
	t.Logf("log1pUnit32: worst error %.3f ulp at e=%v", worst, at)
	assert.LessOrEqual(t, worst, 1.25, "worst error %.3f ulp at e=%v", worst, at)
	// Exact values: log1p(0) = 0, log1p(1) = ln 2, and NaN passes through.
	assert.Equal(t, float32(0), log1pUnit32(0))
	assert.InDelta(t, math.Ln2, float64(log1pUnit32(1)), 6e-8)
	assert.True(t, math32IsNaN(log1pUnit32(float32(math.NaN()))))
}

func math32IsNaN(x float32) bool { return x != x }

// The vector softplus must match softplus32 bit for bit on every length,
// on blocks that fall back to the scalar code (|x| > 87, NaN, ±Inf), on
// signed zeros and subnormals, and on a dense grid of [-88, 88].
func TestSoftplusVectorMatchesScalar(t *testing.T) {
	forVectorInputs32(NewRNG(11), func(x []float32) {
		got, want := make([]float32, len(x)), make([]float32, len(x))
		softplusRun32(got, x)
		softplusScalar32(want, x)
		requireSameBits32(t, x, want, got)
	})
	n := 176 << 10
	x := make([]float32, n)
	for i := range x {
		x[i] = -88 + float32(i)/1024
	}
	got, want := make([]float32, n), make([]float32, n)
	softplusRun32(got, x)
	softplusScalar32(want, x)
	requireSameBits32(t, x, want, got)
	// softplus(0) = ln 2 and softplus(ln 3) = ln 4, through a full block.
	y := make([]float32, 8)
	softplusRun32(y, []float32{0, float32(math.Log(3)), 0, 0, 0, 0, 0, 0})
	require.InDelta(t, math.Ln2, float64(y[0]), 6e-8)
	require.InDelta(t, 2*math.Ln2, float64(y[1]), 2e-7)
}

package tensor

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// The vector rotation of the eigensolver's QL sweeps does, lane by lane,
// what its scalar loop does: the same bits for every length and tail.
func TestRotBlocksMatchesScalar(t *testing.T) {
	rng := NewRNG(21)
	for n := 0; n <= 37; n++ {
		zi := rng.Normal(Float64, 0, 1, n).Float64s()
		zj := rng.Normal(Float64, 0, 1, n).Float64s()
		th := rng.Float64() * 2 * math.Pi
		c, s := math.Cos(th), math.Sin(th)
		wi, wj := append([]float64(nil), zi...), append([]float64(nil), zj...)
		for x := range wi {
			f := wj[x]
			wj[x] = float64(s*wi[x]) + float64(c*f)
			wi[x] = float64(c*wi[x]) - float64(s*f)
		}
		done := rotBlocks(zi, zj, c, s)
		if hasSIMD {
			require.Equal(t, n/4*4, done, "n=%d", n)
		} else {
			require.Zero(t, done)
		}
		for x := 0; x < done; x++ {
			require.Equal(t, math.Float64bits(wi[x]), math.Float64bits(zi[x]), "zi n=%d x=%d", n, x)
			require.Equal(t, math.Float64bits(wj[x]), math.Float64bits(zj[x]), "zj n=%d x=%d", n, x)
		}
	}
	// float32 has no vector rotation: nothing is done.
	require.Zero(t, rotBlocks(make([]float32, 16), make([]float32, 16), float32(1), float32(0)))
}

package main

import (
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Noise of σ = 1 on ±1 pixels flips a pixel's sign with probability
// Φ(−1) = 0.1587; the Ising posterior mean cuts the errors to about a
// quarter of that.
func TestDenoising(t *testing.T) {
	path := t.TempDir() + "/ising.png"
	res, err := run(8, 1, 0.8, 15, 1, path, false)
	require.NoError(t, err)
	phi := 0.5 * math.Erfc(1/math.Sqrt2)
	assert.InDelta(t, phi, res.NoisyErrorRate, 0.015)
	assert.Less(t, res.DenoisedErrorRate, res.NoisyErrorRate/3)
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Greater(t, st.Size(), int64(1000))
}

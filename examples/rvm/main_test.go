package main

import (
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tipping (2001, §5.1) reports for this problem about 7 relevance vectors
// against about 28 support vectors at similar error. Here: few relevance
// vectors (under 12), several times fewer than the SVR's support vectors,
// an error against the noiseless function well under the noise level,
// and the noise estimated within 25 %.
func TestSinc(t *testing.T) {
	cfg := config{N: 100, Noise: 0.1, Ell: 1.6, Seed: 1, SVRCost: 1, SVREpsilon: 0.1, GridDensity: 201, Out: t.TempDir() + "/rvm.png"}
	res, err := run(cfg, false)
	require.NoError(t, err)
	assert.Less(t, len(res.RelevanceVectors), 12)
	assert.Greater(t, len(res.RelevanceVectors), 3)
	assert.Greater(t, res.SVRSupport, 3*len(res.RelevanceVectors))
	assert.Less(t, res.RMSE, 0.05)
	assert.Less(t, math.Abs(res.NoiseSD-0.1), 0.025)
	st, err := os.Stat(cfg.Out)
	require.NoError(t, err)
	assert.Greater(t, st.Size(), int64(10000))
	_, err = run(config{N: 1, Noise: 0.1, Ell: 1}, false)
	assert.ErrorContains(t, err, "-n ≥ 2")
}
